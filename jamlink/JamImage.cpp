//===- JamImage.cpp - Reading and writing the image container -------------===//
#include "JamImage.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

using namespace llvm;

namespace twochains {

static std::string hex(uint64_t V) { return "0x" + utohexstr(V, true); }

std::vector<std::pair<std::string, std::string>> JamImage::facts() const {
  return {
      {"format", "tc-jam-image"},
      {"version", std::to_string(JamImageFormatVersion)},
      {"tc.abi", "1"},
      {"element", Element},
      {"isa", ISA},
      {"entry", hex(EntryOffset)},
      {"entry-symbol", EntrySymbol},
      {"gotp", hex(GOTPOffset)},
      {"align", std::to_string(Align)},
      {"code-size", std::to_string(CodeSize)},
      {"rodata-size", std::to_string(ReadOnlySize)},
      {"data-size", std::to_string(DataSize)},
      {"bss-size", std::to_string(ZeroFillSize)},
      {"image-size", std::to_string(Bytes.size())},
      {"imports", std::to_string(Imports.size())},
      {"fixups", std::to_string(Fixups.size())},
      {"hash", Hash},
      {"source", Source},
  };
}

std::string JamImage::computeHash() const {
  SHA256 H;
  H.update(ArrayRef<uint8_t>(Bytes));
  for (const std::string &I : Imports) {
    H.update(I);
    H.update(ArrayRef<uint8_t>{0});
  }
  for (const TcFixup &F : Fixups)
    H.update(ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(&F), sizeof F));
  H.update(std::to_string(EntryOffset) + "/" + std::to_string(GOTPOffset) +
           "/" + ISA);
  return toHex(H.final(), /*LowerCase=*/true);
}

namespace {

std::string joinStrings(ArrayRef<std::string> Strings) {
  std::string Out;
  for (const std::string &S : Strings) {
    Out += S;
    Out.push_back('\0');
  }
  return Out;
}

struct OutSection {
  std::string Name;
  uint32_t Type;
  uint64_t Flags;
  uint64_t Align;
  uint64_t EntSize;
  std::string Data;
};

} // namespace

Error writeJamImage(const JamImage &Image, StringRef Path) {
  using namespace llvm::ELF;
  std::vector<std::string> FactLines;
  for (const auto &[K, V] : Image.facts())
    FactLines.push_back(K + "=" + V);
  std::vector<OutSection> Secs = {
      {".tc.image", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR | SHF_WRITE,
       Image.Align,
       0,
       std::string(Image.Bytes.begin(), Image.Bytes.end())},
      {".tc.jam", SHT_PROGBITS, SHF_STRINGS, 1, 0, joinStrings(FactLines)},
      {".tc.imports", SHT_PROGBITS, SHF_STRINGS, 1, 0,
       joinStrings(Image.Imports)},
      {".tc.fixups", SHT_PROGBITS, 0, 8, sizeof(TcFixup),
       std::string(reinterpret_cast<const char *>(Image.Fixups.data()),
                   Image.Fixups.size() * sizeof(TcFixup))},
  };
  std::string ShStrTab(1, '\0');
  std::vector<uint32_t> NameOffsets;
  for (const OutSection &S : Secs) {
    NameOffsets.push_back(ShStrTab.size());
    ShStrTab += S.Name;
    ShStrTab.push_back('\0');
  }
  uint32_t ShStrName = ShStrTab.size();
  ShStrTab += ".shstrtab";
  ShStrTab.push_back('\0');

  // Header, then each section's data at its alignment, then the headers.
  uint64_t Off = sizeof(object::ELF64LE::Ehdr);
  std::vector<uint64_t> DataOffsets;
  for (const OutSection &S : Secs) {
    Off = alignTo(Off, std::max<uint64_t>(S.Align, 1));
    DataOffsets.push_back(Off);
    Off += S.Data.size();
  }
  uint64_t ShStrOff = Off;
  Off = alignTo(Off + ShStrTab.size(), 8);
  uint64_t ShOff = Off;
  unsigned NumSections = Secs.size() + 2; // null + ours + .shstrtab
  uint64_t Total = ShOff + NumSections * sizeof(object::ELF64LE::Shdr);

  auto Out = FileOutputBuffer::create(Path, Total);
  if (!Out)
    return createStringError(inconvertibleErrorCode(),
                             "cannot write " + Path + ": " +
                                 toString(Out.takeError()));
  uint8_t *Buf = (*Out)->getBufferStart();
  std::fill(Buf, Buf + Total, 0);

  auto *Eh = reinterpret_cast<object::ELF64LE::Ehdr *>(Buf);
  std::copy_n(ElfMagic, 4, Eh->e_ident);
  Eh->e_ident[EI_CLASS] = ELFCLASS64;
  Eh->e_ident[EI_DATA] = ELFDATA2LSB;
  Eh->e_ident[EI_VERSION] = EV_CURRENT;
  Eh->e_type = ET_NONE;
  Eh->e_machine = Image.Machine;
  Eh->e_version = EV_CURRENT;
  Eh->e_shoff = ShOff;
  Eh->e_ehsize = sizeof(object::ELF64LE::Ehdr);
  Eh->e_shentsize = sizeof(object::ELF64LE::Shdr);
  Eh->e_shnum = NumSections;
  Eh->e_shstrndx = NumSections - 1;

  auto *Sh = reinterpret_cast<object::ELF64LE::Shdr *>(Buf + ShOff);
  for (size_t I = 0; I < Secs.size(); ++I) {
    const OutSection &S = Secs[I];
    std::copy(S.Data.begin(), S.Data.end(), Buf + DataOffsets[I]);
    object::ELF64LE::Shdr &H = Sh[I + 1];
    H.sh_name = NameOffsets[I];
    H.sh_type = S.Type;
    H.sh_flags = S.Flags;
    H.sh_offset = DataOffsets[I];
    H.sh_size = S.Data.size();
    H.sh_addralign = S.Align;
    H.sh_entsize = S.EntSize;
  }
  std::copy(ShStrTab.begin(), ShStrTab.end(), Buf + ShStrOff);
  object::ELF64LE::Shdr &Str = Sh[NumSections - 1];
  Str.sh_name = ShStrName;
  Str.sh_type = SHT_STRTAB;
  Str.sh_offset = ShStrOff;
  Str.sh_size = ShStrTab.size();
  Str.sh_addralign = 1;
  return (*Out)->commit();
}

static Error imageError(StringRef Path, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Path + ": " + Msg);
}

Expected<JamImage> readJamImage(StringRef Path) {
  auto BufOrErr = MemoryBuffer::getFile(Path);
  if (!BufOrErr)
    return imageError(Path, "cannot open: " + BufOrErr.getError().message());
  StringRef Bytes = (*BufOrErr)->getBuffer();
  if (Bytes.size() < 16 || !Bytes.starts_with("\x7f" "ELF") ||
      Bytes[ELF::EI_CLASS] != ELF::ELFCLASS64 ||
      Bytes[ELF::EI_DATA] != ELF::ELFDATA2LSB)
    return imageError(Path, "not a jam image (not a 64-bit little-endian ELF file)");
  auto File = object::ELF64LEFile::create(Bytes);
  if (!File)
    return imageError(Path, toString(File.takeError()));
  auto Shdrs = File->sections();
  if (!Shdrs)
    return imageError(Path, toString(Shdrs.takeError()));

  JamImage Image;
  Image.Machine = File->getHeader().e_machine;
  StringMap<std::string> Facts;
  bool HaveImage = false, HaveFacts = false;
  for (const auto &Shdr : *Shdrs) {
    auto Name = File->getSectionName(Shdr);
    if (!Name)
      return imageError(Path, toString(Name.takeError()));
    if (Shdr.sh_type == ELF::SHT_NULL || Shdr.sh_type == ELF::SHT_STRTAB)
      continue;
    auto Data = File->getSectionContents(Shdr);
    if (!Data)
      return imageError(Path, toString(Data.takeError()));
    StringRef Text(reinterpret_cast<const char *>(Data->data()), Data->size());
    if (*Name == ".tc.image") {
      Image.Bytes.assign(Data->begin(), Data->end());
      HaveImage = true;
    } else if (*Name == ".tc.jam") {
      HaveFacts = true;
      SmallVector<StringRef, 24> Lines;
      Text.split(Lines, '\0', -1, false);
      for (StringRef L : Lines) {
        auto [K, V] = L.split('=');
        Facts[K] = V.str();
      }
    } else if (*Name == ".tc.imports") {
      SmallVector<StringRef, 16> Names;
      Text.split(Names, '\0', -1, false);
      for (StringRef N : Names)
        Image.Imports.push_back(N.str());
    } else if (*Name == ".tc.fixups") {
      if (Data->size() % sizeof(TcFixup))
        return imageError(Path, ".tc.fixups is not a whole number of records");
      Image.Fixups.resize(Data->size() / sizeof(TcFixup));
      std::memcpy(Image.Fixups.data(), Data->data(), Data->size());
    }
  }
  if (!HaveImage || !HaveFacts || Facts["format"] != "tc-jam-image")
    return imageError(Path, "not a jam image (no .tc.image or .tc.jam)");
  if (Facts["tc.abi"] != "1")
    return imageError(Path, "jam ABI version '" + Facts["tc.abi"] +
                                "' is not supported (expected 1)");
  if (Facts["version"] != std::to_string(JamImageFormatVersion))
    return imageError(Path, "jam image format version '" + Facts["version"] +
                                "' is not supported (expected " +
                                std::to_string(JamImageFormatVersion) + ")");
  auto Num = [&](StringRef Key, uint64_t &Out) -> Error {
    if (to_integer(StringRef(Facts[Key]), Out, 0))
      return Error::success();
    return imageError(Path, "bad or missing '" + Key + "' in .tc.jam");
  };
  for (auto [Key, Field] :
       {std::pair<StringRef, uint64_t *>{"entry", &Image.EntryOffset},
        {"gotp", &Image.GOTPOffset},
        {"align", &Image.Align},
        {"code-size", &Image.CodeSize},
        {"rodata-size", &Image.ReadOnlySize},
        {"data-size", &Image.DataSize},
        {"bss-size", &Image.ZeroFillSize}})
    if (Error E = Num(Key, *Field))
      return std::move(E);
  Image.Element = Facts["element"];
  Image.ISA = Facts["isa"];
  Image.EntrySymbol = Facts["entry-symbol"];
  Image.Hash = Facts["hash"];
  Image.Source = Facts["source"];

  // Everything the receiver will trust must hold together.
  uint64_t Size = Image.Bytes.size();
  if (Size == 0 || Size % JamImageLine)
    return imageError(Path, "image size " + Twine(Size) +
                                " is not a whole number of 64-byte lines");
  if (Image.EntryOffset >= Size || Image.GOTPOffset + 8 > Size)
    return imageError(Path, "entry or GOTP offset lies outside the image");
  if (Image.Imports.size() != std::stoull("0" + Facts["imports"]) ||
      Image.Fixups.size() != std::stoull("0" + Facts["fixups"]))
    return imageError(Path, "import or fixup count does not match .tc.jam");
  for (const TcFixup &F : Image.Fixups) {
    if (uint64_t(F.Offset) + 8 > Size)
      return imageError(Path, "fixup at " + Twine(F.Offset) + " lies outside the image");
    if (F.Kind != TC_FIXUP_IMAGE64 && F.Kind != TC_FIXUP_IMPORT64)
      return imageError(Path, "unknown fixup kind " + Twine(F.Kind));
    if (F.Kind == TC_FIXUP_IMPORT64 && F.Symbol >= Image.Imports.size())
      return imageError(Path, "fixup refers to import " + Twine(F.Symbol) +
                                  ", which does not exist");
  }
  if (Image.computeHash() != Image.Hash)
    return imageError(Path, "content hash does not match: the image is corrupt");
  return Image;
}

} // namespace twochains
