//===- JamImageFormat.cpp -------------------------------------------------===//
#include "JamImageFormat.h"
#include "Isa.h"
#include "JamAbi.h"
#include "Sha256.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <elf.h>
#include <map>

namespace twochains::format {

std::string jamImageHash(const JamImageData &Image) {
  Sha256 H;
  H.update(Image.Bytes.data(), Image.Bytes.size());
  for (const std::string &I : Image.Imports) {
    H.update(I);
    H.update("", 1);
  }
  for (const ImageFixup &F : Image.Fixups)
    H.update(&F, sizeof F);
  // The layout too: where the data part is linked, and how much bss the
  // receiver gives it.
  H.update(std::to_string(Image.Entry) + "/" + std::to_string(Image.GOTP) + "/" +
           Image.ISA + "/" + std::to_string(Image.TextSize) + "/" +
           std::to_string(Image.ZeroFillSize) + "/" + std::to_string(Image.Align));
  if (Image.Sandbox)
    H.update("/sandbox=" + std::to_string(Image.Sandbox));
  return H.hex();
}

/// Splits NUL-terminated strings. False if the last one is not terminated
/// or one is empty: the writer never makes either, and the hash covers the
/// strings with their terminators, so two spellings must not read the same.
static bool splitNul(const uint8_t *P, size_t N, std::vector<std::string> &Out) {
  Out.clear();
  size_t Start = 0;
  for (size_t I = 0; I < N; ++I) {
    if (P[I])
      continue;
    if (I == Start)
      return false;
    Out.emplace_back(reinterpret_cast<const char *>(P + Start), I - Start);
    Start = I + 1;
  }
  return Start == N;
}

/// Decimal, or hex with 0x: digits only (strtoull would take a sign,
/// leading blanks and saturate on overflow).
static bool toNumber(const std::string &S, uint64_t &Out) {
  unsigned Base = 10;
  size_t I = 0;
  if (S.size() > 2 && S[0] == '0' && (S[1] == 'x' || S[1] == 'X')) {
    Base = 16;
    I = 2;
  }
  if (I == S.size())
    return false;
  uint64_t V = 0;
  for (; I < S.size(); ++I) {
    char C = S[I];
    unsigned D;
    if (C >= '0' && C <= '9')
      D = unsigned(C - '0');
    else if (Base == 16 && C >= 'a' && C <= 'f')
      D = unsigned(C - 'a' + 10);
    else if (Base == 16 && C >= 'A' && C <= 'F')
      D = unsigned(C - 'A' + 10);
    else
      return false;
    if (V > (UINT64_MAX - D) / Base)
      return false;
    V = V * Base + D;
  }
  Out = V;
  return true;
}

static const char *sectionTypeName(uint32_t Type) {
  switch (Type) {
  case SHT_NULL: return "SHT_NULL";
  case SHT_NOBITS: return "SHT_NOBITS";
  case SHT_STRTAB: return "SHT_STRTAB";
  case SHT_SYMTAB: return "SHT_SYMTAB";
  default: return nullptr;
  }
}

static std::string typeText(uint32_t Type) {
  const char *Name = sectionTypeName(Type);
  return Name ? Name : "type " + std::to_string(Type);
}

namespace {

/// A container as parseJamImage reads it: the file's bytes, its ELF and
/// section headers, and the sections that hold the image's parts (null
/// where the file has none).
struct ImageFile {
  const uint8_t *Data = nullptr;
  size_t Size = 0;
  Elf64_Ehdr Eh = {};
  std::vector<Elf64_Shdr> Sh;
  const Elf64_Shdr *ImageSec = nullptr, *FactSec = nullptr, *ImportSec = nullptr,
                   *FixupSec = nullptr;
  const uint8_t *bytes(const Elf64_Shdr &S) const { return Data + S.sh_offset; }
};

/// What .tc.jam says the sections hold, checked against them.
struct FactCounts {
  uint64_t ImageSize = 0, Imports = 0, Fixups = 0;
};

} // namespace

/// The ELF header: a 64-bit little-endian ET_NONE file for a jam ISA, no
/// larger than a container can be, whose section header table lies inside.
static bool readElfHeader(ImageFile &F, std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  const uint8_t *Data = F.Data;
  size_t Size = F.Size;
  Elf64_Ehdr &Eh = F.Eh;
  if (!Data || Size < sizeof Eh || std::memcmp(Data, ELFMAG, SELFMAG) ||
      Data[EI_CLASS] != ELFCLASS64 || Data[EI_DATA] != ELFDATA2LSB)
    return Fail("not a jam image (not a 64-bit little-endian ELF file)");
  if (Size > JamImageMaxFileBytes)
    return Fail("file of " + std::to_string(Size) + " bytes is larger than a jam image can be (" +
                std::to_string(JamImageMaxFileBytes) + ")");
  std::memcpy(&Eh, Data, sizeof Eh);
  if (Eh.e_type != ET_NONE)
    return Fail("not a jam image (ELF type " + std::to_string(Eh.e_type) +
                ", expected ET_NONE)");
  if (Eh.e_machine != EM_X86_64 && Eh.e_machine != EM_AARCH64)
    return Fail("unsupported machine " + std::to_string(Eh.e_machine) +
                " (jams are x86_64 or aarch64)");
  // Checked without overflow: e_shoff first, then the table within the rest.
  if (Eh.e_shentsize != sizeof(Elf64_Shdr) || Eh.e_shnum == 0 || Eh.e_shoff > Size ||
      uint64_t(Eh.e_shnum) * sizeof(Elf64_Shdr) > Size - Eh.e_shoff ||
      Eh.e_shstrndx >= Eh.e_shnum)
    return Fail("bad section headers");
  return true;
}

/// The section headers: every section with bytes lies inside the file, and
/// the section name table is a string table.
static bool readSectionHeaders(ImageFile &F, std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  const Elf64_Ehdr &Eh = F.Eh;
  std::vector<Elf64_Shdr> &Sh = F.Sh;
  size_t Size = F.Size;
  Sh.resize(Eh.e_shnum);
  std::memcpy(Sh.data(), F.Data + Eh.e_shoff, Sh.size() * sizeof(Elf64_Shdr));
  // Every section that has bytes in the file must lie inside it. SHT_NULL and
  // SHT_NOBITS have none, so their offsets mean nothing: they are never read
  // (below, none of them may be the name table or one of the image's parts).
  for (size_t I = 0; I < Sh.size(); ++I) {
    const Elf64_Shdr &S = Sh[I];
    if (S.sh_type != SHT_NULL && S.sh_type != SHT_NOBITS &&
        (S.sh_offset > Size || S.sh_size > Size - S.sh_offset))
      return Fail("section " + std::to_string(I) + " lies outside the file");
  }
  const Elf64_Shdr &Str = Sh[Eh.e_shstrndx];
  if (Str.sh_type != SHT_STRTAB)
    return Fail("section name table (section " + std::to_string(Eh.e_shstrndx) + ") is " +
                typeText(Str.sh_type) + ", expected SHT_STRTAB");
  return true;
}

/// The image's parts by section name: .tc.image and .tc.jam, which every
/// image has, .tc.imports and .tc.fixups; each at most once, as PROGBITS.
static bool findParts(ImageFile &F, std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  const Elf64_Ehdr &Eh = F.Eh;
  const std::vector<Elf64_Shdr> &Sh = F.Sh;
  const Elf64_Shdr &Str = Sh[Eh.e_shstrndx];
  const Elf64_Shdr *Parts[4] = {};
  static const std::string_view PartNames[4] = {ImageSection, InfoSection, ImportsSection,
                                                FixupsSection};
  for (size_t I = 0; I < Sh.size(); ++I) {
    const Elf64_Shdr &S = Sh[I];
    if (I == Eh.e_shstrndx || (I == 0 && S.sh_type == SHT_NULL))
      continue;
    if (S.sh_name >= Str.sh_size)
      return Fail("section " + std::to_string(I) + " has a bad name");
    const char *NameStart = reinterpret_cast<const char *>(F.bytes(Str) + S.sh_name);
    std::string Name(NameStart, strnlen(NameStart, Str.sh_size - S.sh_name));
    for (unsigned K = 0; K < 4; ++K) {
      if (Name != PartNames[K])
        continue;
      if (Parts[K])
        return Fail("two " + Name + " sections");
      // Only PROGBITS has bytes the checks above vouched for.
      if (S.sh_type != SHT_PROGBITS)
        return Fail(Name + " is " + typeText(S.sh_type) + ", expected SHT_PROGBITS");
      Parts[K] = &S;
    }
  }
  F.ImageSec = Parts[0];
  F.FactSec = Parts[1];
  F.ImportSec = Parts[2];
  F.FixupSec = Parts[3];
  if (!F.ImageSec || !F.FactSec)
    return Fail("not a jam image (no .tc.image or .tc.jam)");
  return true;
}

/// .tc.jam's facts: NUL-terminated key=value strings, each key once.
static bool readFacts(const ImageFile &F, std::map<std::string, std::string> &Facts,
                      std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  std::vector<std::string> FactList;
  if (!splitNul(F.bytes(*F.FactSec), F.FactSec->sh_size, FactList))
    return Fail(".tc.jam is not a list of NUL-terminated key=value facts");
  for (const std::string &KV : FactList) {
    size_t Eq = KV.find('=');
    if (Eq == std::string::npos || Eq == 0)
      return Fail(".tc.jam: '" + KV.substr(0, 64) + "' is not key=value");
    if (!Facts.emplace(KV.substr(0, Eq), KV.substr(Eq + 1)).second)
      return Fail(".tc.jam: '" + KV.substr(0, Eq) + "' is given twice");
  }
  return true;
}

/// What the facts say: the format, ABI and container versions this reader
/// reads, every number the layout needs, the element and an ISA that
/// matches the ELF machine. Fills Img's fields and Counts.
static bool checkFacts(std::map<std::string, std::string> &Facts, uint16_t Machine,
                       JamImageData &Img, FactCounts &Counts, std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  const std::string ABI = Facts[std::string(JamABIFact)];
  if (Facts["format"] != JamImageFormatName)
    return Fail("not a jam image (no .tc.image or .tc.jam)");
  if (ABI != std::to_string(JamABIVersion))
    return Fail("jam ABI version '" + ABI + "' is not supported (expected " +
                std::to_string(JamABIVersion) + ")");
  if (Facts["version"] != std::to_string(JamImageVersion))
    return Fail("jam image format version '" + Facts["version"] + "' is not supported (expected " +
                std::to_string(JamImageVersion) + "; relink the object with this jamlink)");
  struct {
    const char *Key;
    uint64_t *Field;
  } Numbers[] = {{"entry", &Img.Entry},           {"gotp", &Img.GOTP},
                 {"align", &Img.Align},           {"code-size", &Img.CodeSize},
                 {"rodata-size", &Img.ReadOnlySize}, {"text-size", &Img.TextSize},
                 {"data-size", &Img.DataSize},
                 {"bss-size", &Img.ZeroFillSize}, {"image-size", &Counts.ImageSize},
                 {"imports", &Counts.Imports},    {"fixups", &Counts.Fixups}};
  for (auto &N : Numbers)
    if (!toNumber(Facts[N.Key], *N.Field))
      return Fail(std::string("bad or missing '") + N.Key + "' in .tc.jam");
  Img.Element = Facts["element"];
  Img.ISA = Facts["isa"];
  Img.EntrySymbol = Facts["entry-symbol"];
  Img.Hash = Facts["hash"];
  Img.Source = Facts["source"];
  if (Facts.count("sandbox")) {
    if (Facts["sandbox"] != std::to_string(JamSandboxScheme))
      return Fail("sandbox scheme '" + Facts["sandbox"] + "' is not supported (expected " +
                  std::to_string(JamSandboxScheme) + ")");
    Img.Sandbox = JamSandboxScheme;
  }
  if (Img.Element.empty())
    return Fail("no element name in .tc.jam");
  uint32_t ImageIsa = isaOf(Img.ISA);
  uint16_t ISAMachine = ImageIsa == IsaX86_64 ? EM_X86_64 : ImageIsa == IsaAArch64 ? EM_AARCH64 : 0;
  if (!ISAMachine)
    return Fail("unknown ISA '" + Img.ISA + "' (jams are x86_64 or aarch64)");
  if (ISAMachine != Machine)
    return Fail("ISA " + Img.ISA + " does not match the ELF machine " + std::to_string(Machine));
  if (Img.Sandbox && Img.ReadOnlySize)
    return Fail("a sandboxed image with read-only data in its text, where only code may be");
  return true;
}

/// .tc.image's size: whole 64-byte lines, within the limit, as many bytes
/// as the image-size fact says.
static bool checkImageSize(uint64_t N, const FactCounts &Counts, std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  if (N == 0 || N % 64)
    return Fail("image size " + std::to_string(N) +
                " is not a whole number of 64-byte lines");
  if (N > JamImageMaxBytes)
    return Fail("image size " + std::to_string(N) + " is larger than the limit of " +
                std::to_string(JamImageMaxBytes) + " bytes");
  if (Counts.ImageSize != N)
    return Fail("image-size " + std::to_string(Counts.ImageSize) +
                " in .tc.jam does not match the " + std::to_string(N) + " bytes of .tc.image");
  return true;
}

/// Where things are: the GOTP, then code and rodata filling the text part
/// but for zero padding, the data part after it, bss within the limit, the
/// entry in the code, and a power-of-two alignment.
static bool checkLayout(const uint8_t *ImageBytes, uint64_t N, const JamImageData &Img,
                        std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  // GOTP at 0, the code right after it (jam-image-format.md, "Layout");
  // a sandboxed x86-64 image's GOTP first in its data part, the code at 0,
  // its text padded with traps (docs/sandbox.md, "x86-64"). Written as
  // differences so that no sum can wrap.
  const bool X86Sandbox = Img.Sandbox && isaOf(Img.ISA) == IsaX86_64;
  if (X86Sandbox ? Img.GOTP != Img.TextSize + JamDataDistance || Img.DataSize < 8 : Img.GOTP != 0)
    return Fail("GOTP offset " + std::to_string(Img.GOTP) +
                (X86Sandbox ? " is not the data part's start, where a sandboxed x86_64 image "
                              "places it"
                            : " is not 0, where the format places it"));
  const uint64_t CodeStart = Img.codeStart();
  const uint8_t Padding = X86Sandbox ? 0xcc : 0;
  if (Img.TextSize % 64 || Img.DataSize % 64 || Img.ZeroFillSize % 64)
    return Fail("text, data and bss sizes must be whole 64-byte lines");
  if (Img.TextSize > N || Img.DataSize != N - Img.TextSize)
    return Fail("text size " + std::to_string(Img.TextSize) + " and data size " +
                std::to_string(Img.DataSize) + " do not make up the " + std::to_string(N) +
                " bytes of the image");
  if (Img.ZeroFillSize > JamImageMaxBytes - N)
    return Fail("bss of " + std::to_string(Img.ZeroFillSize) +
                " bytes makes the image larger than the limit of " +
                std::to_string(JamImageMaxBytes) + " bytes");
  if (Img.TextSize < CodeStart || Img.CodeSize > Img.TextSize - CodeStart ||
      Img.ReadOnlySize > Img.TextSize - CodeStart - Img.CodeSize)
    return Fail("code and rodata sizes do not fit in the text part");
  uint64_t TextUsed = CodeStart + Img.CodeSize + Img.ReadOnlySize;
  if (Img.TextSize - TextUsed >= 64)
    return Fail("code and rodata sizes leave " + std::to_string(Img.TextSize - TextUsed) +
                " bytes of the text part unaccounted for");
  if (Img.Entry < CodeStart || Img.Entry - CodeStart >= Img.CodeSize)
    return Fail("entry offset " + std::to_string(Img.Entry) + " lies outside the image's code");
  if (Img.Align == 0 || Img.Align > JamImageMaxAlign || (Img.Align & (Img.Align - 1)))
    return Fail("image alignment " + std::to_string(Img.Align) +
                " is not a power of two up to " + std::to_string(JamImageMaxAlign));
  for (uint64_t I = TextUsed; I < Img.TextSize; ++I)
    if (ImageBytes[I] != Padding)
      return Fail("padding at " + std::to_string(I) + (Padding ? " is not int3" : " is not zero"));
  return true;
}

/// .tc.imports and .tc.fixups: a list of names and whole records, as many
/// as the facts say. Fills Img.Imports and Img.Fixups.
static bool readImportsAndFixups(const ImageFile &F, const FactCounts &Counts, JamImageData &Img,
                                 std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  const Elf64_Shdr *ImportSec = F.ImportSec, *FixupSec = F.FixupSec;
  if (ImportSec && !splitNul(F.bytes(*ImportSec), ImportSec->sh_size, Img.Imports))
    return Fail(".tc.imports is not a list of NUL-terminated names");
  if (FixupSec && FixupSec->sh_size % sizeof(ImageFixup))
    return Fail(".tc.fixups is not a whole number of records");
  uint64_t FixupCount = FixupSec ? FixupSec->sh_size / sizeof(ImageFixup) : 0;
  if (Counts.Imports != Img.Imports.size() || Counts.Fixups != FixupCount)
    return Fail("import or fixup count does not match .tc.jam");
  Img.Fixups.resize(FixupCount);
  // memcpy with a null pointer is undefined even for 0 bytes, and an empty
  // vector's data() may be null.
  if (FixupCount)
    std::memcpy(Img.Fixups.data(), F.bytes(*FixupSec), FixupCount * sizeof(ImageFixup));
  return true;
}

/// Every fixup: 8 bytes inside the image and inside one part, of a known
/// kind, naming an import that exists, with its reserved fields zero.
static bool checkFixups(uint64_t N, const JamImageData &Img, std::string &Error) {
  auto Fail = [&](const std::string &Msg) {
    Error = Msg;
    return false;
  };
  for (const ImageFixup &F : Img.Fixups) {
    if (uint64_t(F.Offset) + 8 > N)
      return Fail("fixup at " + std::to_string(F.Offset) + " lies outside the image");
    if (F.Offset < Img.TextSize && F.Offset + 8 > Img.TextSize)
      return Fail("fixup at " + std::to_string(F.Offset) + " straddles the text and data parts");
    if (F.Kind != FixupImage64 && F.Kind != FixupImport64)
      return Fail("unknown fixup kind " + std::to_string(F.Kind));
    if (F.Kind == FixupImport64 && F.Symbol >= Img.Imports.size())
      return Fail("fixup refers to import " + std::to_string(F.Symbol) +
                  ", which does not exist");
    if (F.Reserved || (F.Kind == FixupImage64 && F.Symbol))
      return Fail("fixup at " + std::to_string(F.Offset) + " has reserved fields set");
  }
  return true;
}

FormatError parseJamImage(const uint8_t *Data, size_t Size, JamImageData &Out,
                          std::string &Error) {
  ImageFile F;
  F.Data = Data;
  F.Size = Size;
  if (!readElfHeader(F, Error) || !readSectionHeaders(F, Error) || !findParts(F, Error))
    return FormatError::BadImage;

  JamImageData Img;
  Img.Machine = F.Eh.e_machine;
  std::map<std::string, std::string> Facts;
  FactCounts Counts;
  if (!readFacts(F, Facts, Error) || !checkFacts(Facts, F.Eh.e_machine, Img, Counts, Error))
    return FormatError::BadImage;

  const uint8_t *ImageBytes = F.bytes(*F.ImageSec);
  uint64_t N = F.ImageSec->sh_size;
  if (!checkImageSize(N, Counts, Error) || !checkLayout(ImageBytes, N, Img, Error) ||
      !readImportsAndFixups(F, Counts, Img, Error) || !checkFixups(N, Img, Error))
    return FormatError::BadImage;

  Img.Bytes.assign(ImageBytes, ImageBytes + N);
  if (jamImageHash(Img) != Img.Hash) {
    Error = "content hash does not match: the image is corrupt";
    return FormatError::BadImage;
  }
  Out = std::move(Img);
  return FormatError::None;
}

bool readFileBytes(const std::string &Path, std::vector<uint8_t> &Out, std::string &Error,
                   uint64_t MaxSize) {
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F) {
    Error = "cannot open: " + std::string(std::strerror(errno));
    return false;
  }
  std::vector<uint8_t> Data;
  uint8_t Buf[65536];
  size_t N;
  bool TooLarge = false;
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0) {
    // Counted as it is read: the size a stat reports may change, and pipes
    // and devices report none.
    if (N > MaxSize - Data.size()) {
      TooLarge = true;
      break;
    }
    Data.insert(Data.end(), Buf, Buf + N);
  }
  bool Failed = std::ferror(F);
  int Errno = errno;
  std::fclose(F);
  if (TooLarge) {
    Error = "larger than " + std::to_string(MaxSize) + " bytes";
    return false;
  }
  if (Failed) {
    Error = "cannot read: " + std::string(std::strerror(Errno));
    return false;
  }
  Out = std::move(Data);
  return true;
}

FormatError readJamImageFile(const std::string &Path, JamImageData &Out,
                             std::string &Error) {
  std::vector<uint8_t> Data;
  if (!readFileBytes(Path, Data, Error, JamImageMaxFileBytes))
    return FormatError::Io;
  return parseJamImage(Data.data(), Data.size(), Out, Error);
}

namespace {

std::string hexNumber(uint64_t V) {
  char Buf[19];
  std::snprintf(Buf, sizeof Buf, "0x%llx", (unsigned long long)V);
  return Buf;
}

std::string joinNul(const std::vector<std::string> &Strings) {
  std::string Out;
  for (const std::string &S : Strings) {
    Out += S;
    Out.push_back('\0');
  }
  return Out;
}

uint64_t alignUp(uint64_t V, uint64_t A) { return A ? (V + A - 1) / A * A : V; }

} // namespace

std::vector<std::pair<std::string, std::string>> jamImageFacts(const JamImageData &Image) {
  std::vector<std::pair<std::string, std::string>> Facts = {
      {"format", std::string(JamImageFormatName)},
      {"version", std::to_string(JamImageVersion)},
      {std::string(JamABIFact), std::to_string(JamABIVersion)},
      {"element", Image.Element},
      {"isa", Image.ISA},
      {"entry", hexNumber(Image.Entry)},
      {"entry-symbol", Image.EntrySymbol},
      {"gotp", hexNumber(Image.GOTP)},
      {"align", std::to_string(Image.Align)},
      {"code-size", std::to_string(Image.CodeSize)},
      {"rodata-size", std::to_string(Image.ReadOnlySize)},
      {"text-size", std::to_string(Image.TextSize)},
      {"data-size", std::to_string(Image.DataSize)},
      {"bss-size", std::to_string(Image.ZeroFillSize)},
      {"image-size", std::to_string(Image.Bytes.size())},
      {"imports", std::to_string(Image.Imports.size())},
      {"fixups", std::to_string(Image.Fixups.size())},
      {"hash", Image.Hash},
      {"source", Image.Source},
  };
  if (Image.Sandbox)
    Facts.push_back({"sandbox", std::to_string(Image.Sandbox)});
  return Facts;
}

std::vector<uint8_t> serializeJamImage(const JamImageData &Image) {
  struct OutSection {
    std::string_view Name;
    uint32_t Type;
    uint64_t Flags, Align, EntSize;
    std::string Data;
  };
  std::vector<std::string> FactLines;
  for (const auto &[K, V] : jamImageFacts(Image))
    FactLines.push_back(K + "=" + V);
  const OutSection Secs[] = {
      {ImageSection, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR | SHF_WRITE, Image.Align, 0,
       std::string(Image.Bytes.begin(), Image.Bytes.end())},
      {InfoSection, SHT_PROGBITS, SHF_STRINGS, 1, 0, joinNul(FactLines)},
      {ImportsSection, SHT_PROGBITS, SHF_STRINGS, 1, 0, joinNul(Image.Imports)},
      {FixupsSection, SHT_PROGBITS, 0, 8, sizeof(ImageFixup),
       std::string(reinterpret_cast<const char *>(Image.Fixups.data()),
                   Image.Fixups.size() * sizeof(ImageFixup))},
  };
  constexpr size_t NumOwn = sizeof Secs / sizeof Secs[0];
  std::string ShStrTab(1, '\0');
  uint32_t NameOffsets[NumOwn];
  for (size_t I = 0; I < NumOwn; ++I) {
    NameOffsets[I] = uint32_t(ShStrTab.size());
    ShStrTab += Secs[I].Name;
    ShStrTab.push_back('\0');
  }
  uint32_t ShStrName = uint32_t(ShStrTab.size());
  ShStrTab += ".shstrtab";
  ShStrTab.push_back('\0');

  // Header, then each section's data at its alignment, then the headers.
  uint64_t Off = sizeof(Elf64_Ehdr);
  uint64_t DataOffsets[NumOwn];
  for (size_t I = 0; I < NumOwn; ++I) {
    Off = alignUp(Off, Secs[I].Align ? Secs[I].Align : 1);
    DataOffsets[I] = Off;
    Off += Secs[I].Data.size();
  }
  uint64_t ShStrOff = Off;
  uint64_t ShOff = alignUp(Off + ShStrTab.size(), 8);
  unsigned NumSections = NumOwn + 2; // null, ours, .shstrtab
  std::vector<uint8_t> Out(ShOff + NumSections * sizeof(Elf64_Shdr), 0);

  Elf64_Ehdr Eh = {};
  std::memcpy(Eh.e_ident, ELFMAG, SELFMAG);
  Eh.e_ident[EI_CLASS] = ELFCLASS64;
  Eh.e_ident[EI_DATA] = ELFDATA2LSB;
  Eh.e_ident[EI_VERSION] = EV_CURRENT;
  Eh.e_type = ET_NONE;
  Eh.e_machine = Image.Machine;
  Eh.e_version = EV_CURRENT;
  Eh.e_shoff = ShOff;
  Eh.e_ehsize = sizeof(Elf64_Ehdr);
  Eh.e_shentsize = sizeof(Elf64_Shdr);
  Eh.e_shnum = uint16_t(NumSections);
  Eh.e_shstrndx = uint16_t(NumSections - 1);
  std::memcpy(Out.data(), &Eh, sizeof Eh);

  for (size_t I = 0; I < NumOwn; ++I) {
    const OutSection &S = Secs[I];
    std::memcpy(Out.data() + DataOffsets[I], S.Data.data(), S.Data.size());
    Elf64_Shdr H = {};
    H.sh_name = NameOffsets[I];
    H.sh_type = S.Type;
    H.sh_flags = S.Flags;
    H.sh_offset = DataOffsets[I];
    H.sh_size = S.Data.size();
    H.sh_addralign = S.Align;
    H.sh_entsize = S.EntSize;
    std::memcpy(Out.data() + ShOff + (I + 1) * sizeof(Elf64_Shdr), &H, sizeof H);
  }
  std::memcpy(Out.data() + ShStrOff, ShStrTab.data(), ShStrTab.size());
  Elf64_Shdr Str = {};
  Str.sh_name = ShStrName;
  Str.sh_type = SHT_STRTAB;
  Str.sh_offset = ShStrOff;
  Str.sh_size = ShStrTab.size();
  Str.sh_addralign = 1;
  std::memcpy(Out.data() + ShOff + (NumSections - 1) * sizeof(Elf64_Shdr), &Str, sizeof Str);
  return Out;
}

} // namespace twochains::format
