//===- InputObject.cpp ----------------------------------------------------===//
#include "InputObject.h"
#include "JamAbi.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;
using namespace llvm::object;

namespace twochains::jamlink {

bool Symbol::isUndefined() const { return SectionIndex == ELF::SHN_UNDEF; }
bool Symbol::isAbsolute() const { return SectionIndex == ELF::SHN_ABS; }
bool Symbol::isCommon() const { return SectionIndex == ELF::SHN_COMMON; }

static Error objError(StringRef Path, const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Path + ": " + Msg);
}

/// For messages that begin with a location, which names the file already.
static Error locError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// Which part of the image a section belongs to, or Dropped: unwind tables,
/// notes, metadata and everything not allocated never travel.
static SectionKind classifySection(const InputSection &S) {
  if (S.Type == ELF::SHT_NULL)
    return SectionKind::Dropped;
  if (S.Name == format::GOTPSection)
    return SectionKind::GOTP;
  if (!(S.Flags & ELF::SHF_ALLOC))
    return SectionKind::Dropped;
  if (S.Type == ELF::SHT_NOTE || S.Type == ELF::SHT_X86_64_UNWIND ||
      S.Name == ".eh_frame" || S.Type == ELF::SHT_GROUP)
    return SectionKind::Dropped;
  if (S.Flags & ELF::SHF_EXECINSTR)
    return SectionKind::Code;
  if (S.Type == ELF::SHT_NOBITS)
    return SectionKind::ZeroFill;
  // Relocated once on arrival and only read after: relro data lives with
  // the text, not with the data that persists between messages.
  if ((S.Flags & ELF::SHF_WRITE) && !llvm::StringRef(S.Name).starts_with(".data.rel.ro"))
    return SectionKind::Data;
  return SectionKind::ReadOnly;
}

static std::vector<std::string> splitStrings(ArrayRef<uint8_t> Bytes) {
  std::vector<std::string> Out;
  StringRef Rest(reinterpret_cast<const char *>(Bytes.data()), Bytes.size());
  while (!Rest.empty()) {
    auto [S, Tail] = Rest.split('\0');
    if (!S.empty())
      Out.push_back(S.str());
    Rest = Tail;
  }
  return Out;
}

Expected<std::unique_ptr<InputObject>> InputObject::open(StringRef Path) {
  auto BufOrErr = MemoryBuffer::getFile(Path);
  if (!BufOrErr)
    return objError(Path, "cannot open: " + BufOrErr.getError().message());
  return create(std::move(*BufOrErr), Path);
}

Expected<std::unique_ptr<InputObject>>
InputObject::create(std::unique_ptr<MemoryBuffer> Buffer, StringRef Path) {
  auto Obj = std::make_unique<InputObject>();
  Obj->Path = Path.str();
  Obj->Buffer = std::move(Buffer);

  StringRef Bytes = Obj->Buffer->getBuffer();
  if (Bytes.size() < 16 || !Bytes.starts_with("\x7f" "ELF"))
    return objError(Path, "not an ELF file");
  if (Bytes[ELF::EI_CLASS] != ELF::ELFCLASS64 ||
      Bytes[ELF::EI_DATA] != ELF::ELFDATA2LSB)
    return objError(Path, "not a 64-bit little-endian ELF file");
  auto FileOrErr = ELF64LEFile::create(Bytes);
  if (!FileOrErr)
    return objError(Path, toString(FileOrErr.takeError()));
  const ELF64LEFile &File = *FileOrErr;
  if (File.getHeader().e_type != ELF::ET_REL)
    return objError(Path, "not a relocatable object (ET_REL)");
  Obj->Machine = File.getHeader().e_machine;

  auto Shdrs = File.sections();
  if (!Shdrs)
    return objError(Path, toString(Shdrs.takeError()));
  Obj->Sections.resize(Shdrs->size());
  const ELF64LE::Shdr *SymTab = nullptr;
  unsigned SymTabIndex = 0;
  for (const auto &[I, Shdr] : enumerate(*Shdrs)) {
    InputSection &S = Obj->Sections[I];
    S.File = Obj.get();
    S.Index = I;
    auto Name = File.getSectionName(Shdr);
    if (!Name)
      return objError(Path, toString(Name.takeError()));
    S.Name = Name->str();
    S.Type = Shdr.sh_type;
    S.Flags = Shdr.sh_flags;
    S.Align = std::max<uint64_t>(Shdr.sh_addralign, 1);
    // An SHT_NULL header is inactive: its other fields mean nothing, and it
    // has no bytes for relocations to patch or symbols to lie in.
    S.Size = Shdr.sh_type == ELF::SHT_NULL ? 0 : uint64_t(Shdr.sh_size);
    // ELF allows 0 or a power of two; the layout rounds offsets up to it.
    if (!isPowerOf2_64(S.Align))
      return locError(Obj->location(I, 0) + ": section alignment " + Twine(S.Align) +
                      " is not a power of two");
    if (Shdr.sh_type != ELF::SHT_NOBITS && Shdr.sh_type != ELF::SHT_NULL) {
      auto Contents = File.getSectionContents(Shdr);
      if (!Contents)
        return objError(Path, "section " + S.Name + ": " +
                                  toString(Contents.takeError()));
      S.Contents = *Contents;
    }
    if (Shdr.sh_type == ELF::SHT_SYMTAB) {
      if (SymTab)
        return objError(Path, "more than one symbol table");
      SymTab = &Shdr;
      SymTabIndex = I;
    }
  }
  for (InputSection &S : Obj->Sections)
    if (S.Index != 0)
      S.Kind = classifySection(S);

  // Relocations, attached to the section they apply to.
  for (const auto &[I, Shdr] : enumerate(*Shdrs)) {
    if (Shdr.sh_type == ELF::SHT_REL)
      return objError(Path, "SHT_REL relocations are not supported (expected SHT_RELA)");
    if (Shdr.sh_type != ELF::SHT_RELA)
      continue;
    const std::string &RelName = Obj->Sections[I].Name;
    if (Shdr.sh_info >= Obj->Sections.size())
      return objError(Path, "relocation section " + RelName + " applies to section " +
                                Twine(Shdr.sh_info) + ", which does not exist");
    if (!SymTab || Shdr.sh_link != SymTabIndex)
      return objError(Path, "relocation section " + RelName + " uses section " +
                                Twine(Shdr.sh_link) +
                                " as its symbol table, which is not the object's");
    auto Relas = File.relas(Shdr);
    if (!Relas)
      return objError(Path, toString(Relas.takeError()));
    InputSection &Target = Obj->Sections[Shdr.sh_info];
    for (const ELF64LE::Rela &R : *Relas) {
      // Not r_offset + 1 > Size, which wraps for an offset of 2^64 - 1.
      if (R.r_offset >= Target.Size)
        return locError(Obj->location(Target.Index, R.r_offset) +
                        ": relocation offset is outside the section");
      // Zero-fill has no bytes in the object to patch, and the image
      // promises it is all zeroes.
      if (Target.Type == ELF::SHT_NOBITS)
        return locError(Obj->location(Target.Index, R.r_offset) +
                        ": relocation applies to a section without contents (SHT_NOBITS)");
      Target.Relocs.push_back({R.r_offset, R.getType(false),
                               R.getSymbol(false), R.r_addend});
    }
  }

  if (SymTab) {
    auto Syms = File.symbols(SymTab);
    if (!Syms)
      return objError(Path, toString(Syms.takeError()));
    auto StrTab = File.getStringTableForSymtab(*SymTab);
    if (!StrTab)
      return objError(Path, toString(StrTab.takeError()));
    for (const auto &[SymI, Sym] : enumerate(*Syms)) {
      Symbol S;
      auto Name = Sym.getName(*StrTab);
      if (!Name)
        return objError(Path, toString(Name.takeError()));
      S.Name = Name->str();
      S.SectionIndex = Sym.st_shndx;
      S.Value = Sym.st_value;
      S.Type = Sym.getType();
      S.Binding = Sym.getBinding();
      std::string Where = Obj->location(SymTabIndex, SymI * sizeof(ELF64LE::Sym)) +
                          ": symbol '" + S.Name + "'";
      // Everything below SHN_LORESERVE is a section; of the reserved
      // indices only these two mean something jamlink knows how to refuse
      // later, with the relocation that uses them. The rest (SHN_XINDEX,
      // processor- and OS-specific ones such as SHN_X86_64_LCOMMON) name
      // no section of the object.
      if (S.SectionIndex == ELF::SHN_XINDEX)
        return locError(Where + " has an extended section index (SHN_XINDEX), "
                                "which jamlink does not support");
      if (S.SectionIndex >= ELF::SHN_LORESERVE && !S.isAbsolute() && !S.isCommon())
        return locError(Where + " has the reserved section index 0x" +
                        utohexstr(S.SectionIndex, true));
      if (S.SectionIndex != ELF::SHN_UNDEF && S.SectionIndex < ELF::SHN_LORESERVE) {
        if (S.SectionIndex >= Obj->Sections.size())
          return locError(Where + " refers to section " + Twine(S.SectionIndex) +
                          ", which does not exist");
        // An offset past the end would place the symbol outside its
        // section's bytes in the image.
        const InputSection &In = Obj->Sections[S.SectionIndex];
        if (S.Type != ELF::STT_SECTION && S.Value > In.Size)
          return locError(Where + " lies at 0x" + utohexstr(S.Value, true) +
                          ", outside section " + In.Name + " (0x" + utohexstr(In.Size, true) +
                          " bytes)");
      }
      Obj->Symbols.push_back(std::move(S));
    }
  }
  for (InputSection &S : Obj->Sections)
    for (const Relocation &R : S.Relocs)
      if (R.SymbolIndex >= Obj->Symbols.size())
        return locError(Obj->location(S.Index, R.Offset) +
                        ": relocation refers to a symbol that does not exist");

  for (const InputSection &S : Obj->Sections) {
    if (S.Name == format::InfoSection)
      for (const std::string &KV : splitStrings(S.Contents)) {
        auto [K, V] = StringRef(KV).split('=');
        Obj->Info[K] = V.str();
      }
    else if (S.Name == format::ImportsSection)
      Obj->Imports = splitStrings(S.Contents);
  }
  return std::move(Obj);
}

std::string InputObject::location(unsigned SectionIndex, uint64_t Offset) const {
  std::string Sec = SectionIndex < Sections.size() ? Sections[SectionIndex].Name
                                                   : "<unknown section>";
  return (Path + ":(" + Sec + "+0x" + utohexstr(Offset, true) + ")");
}

std::string InputObject::symbolName(uint32_t Index) const {
  const Symbol &S = Symbols[Index];
  if (S.Type == ELF::STT_SECTION && S.SectionIndex < Sections.size())
    return Sections[S.SectionIndex].Name;
  return S.Name;
}

const Symbol *InputObject::findDefined(StringRef Name) const {
  for (const Symbol &S : Symbols)
    if (S.Name == Name && !S.isUndefined() && S.Type != ELF::STT_SECTION &&
        S.Type != ELF::STT_FILE)
      return &S;
  return nullptr;
}

} // namespace twochains::jamlink
