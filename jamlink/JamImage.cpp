//===- JamImage.cpp - Reading and writing the image container -------------===//
#include "JamImage.h"
#include "JamImageReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileOutputBuffer.h"
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
      {"text-size", std::to_string(TextSize)},
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
  // One definition of the hash: the runtime's reader checks it.
  rt::JamImageData D;
  D.Bytes = Bytes;
  D.Imports = Imports;
  for (const TcFixup &F : Fixups)
    D.Fixups.push_back({F.Offset, F.Kind, F.Symbol, F.Reserved, F.Addend});
  D.Entry = EntryOffset;
  D.GOTP = GOTPOffset;
  D.ISA = ISA;
  D.TextSize = TextSize;
  D.ZeroFillSize = ZeroFillSize;
  D.Align = Align;
  return rt::jamImageHash(D);
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

std::vector<uint8_t> serializeJamImage(const JamImage &Image) {
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

  std::vector<uint8_t> Out(Total, 0);
  uint8_t *Buf = Out.data();

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
  return Out;
}

Error writeJamImage(const JamImage &Image, StringRef Path) {
  std::vector<uint8_t> Bytes = serializeJamImage(Image);
  auto Out = FileOutputBuffer::create(Path, Bytes.size());
  if (!Out)
    return createStringError(inconvertibleErrorCode(),
                             "cannot write " + Path + ": " +
                                 toString(Out.takeError()));
  std::copy(Bytes.begin(), Bytes.end(), (*Out)->getBufferStart());
  return (*Out)->commit();
}

Expected<JamImage> readJamImage(StringRef Path) {
  // One reader for everyone: the runtime's, which trusts nothing.
  rt::JamImageData Data;
  std::string Error;
  if (rt::readJamImageFile(Path.str(), Data, Error) != TC_OK)
    return createStringError(inconvertibleErrorCode(), Path + ": " + Error);
  JamImage Image;
  Image.Element = Data.Element;
  Image.ISA = Data.ISA;
  Image.Machine = Data.Machine;
  Image.EntrySymbol = Data.EntrySymbol;
  Image.EntryOffset = Data.Entry;
  Image.GOTPOffset = Data.GOTP;
  Image.Align = Data.Align;
  Image.CodeSize = Data.CodeSize;
  Image.ReadOnlySize = Data.ReadOnlySize;
  Image.TextSize = Data.TextSize;
  Image.DataSize = Data.DataSize;
  Image.ZeroFillSize = Data.ZeroFillSize;
  Image.Bytes = std::move(Data.Bytes);
  Image.Imports = std::move(Data.Imports);
  Image.Hash = Data.Hash;
  Image.Source = Data.Source;
  for (const rt::ImageFixup &F : Data.Fixups)
    Image.Fixups.push_back({F.Offset, F.Kind, F.Symbol, F.Reserved, F.Addend});
  return Image;
}

} // namespace twochains
