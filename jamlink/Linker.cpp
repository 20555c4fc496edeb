//===- Linker.cpp - Image mode: the steps, entry and result ---------------===//
#include "Linker.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace twochains::jamlink {

void LinkContext::relocError(const InputSection &Sec, const Relocation &R,
                             const std::string &What) {
  error(Obj.location(Sec.Index, R.Offset) + ": relocation " +
        relocName(R.Type) + " against symbol '" +
        Obj.symbolName(R.SymbolIndex) + "' " + What);
}

std::string LinkContext::relocName(uint32_t Type) const {
  StringRef Name = object::getELFRelocationTypeName(Obj.Machine, Type);
  if (Name == "Unknown")
    return "type " + std::to_string(Type);
  return Name.str();
}

unsigned LinkContext::importFor(const std::string &Name) {
  auto [It, Inserted] = ImportIndex.try_emplace(Name, Imports.size());
  if (Inserted)
    Imports.push_back(Name);
  return It->second;
}

uint64_t LinkContext::symbolOffset(const Symbol &S) const {
  const InputSection &Sec = Obj.Sections[S.SectionIndex];
  return Sec.ImageOffset + (S.Type == ELF::STT_SECTION ? 0 : S.Value);
}

/// Element and entry come from the options, else from the plugin's .tc.jam,
/// else from the file name (jam_<name>.o) and the canonical <name>_main.
void findEntry(LinkContext &Ctx) {
  InputObject &Obj = Ctx.Obj;
  if (Obj.hasPluginInfo()) {
    std::string ABI = Obj.Info.lookup(format::JamABIFact);
    if (ABI != std::to_string(format::JamABIVersion))
      Ctx.error(Obj.Path + ": jam ABI version '" + ABI + "' is not supported (expected " +
                std::to_string(format::JamABIVersion) + ")");
    if (Obj.Info.lookup(format::fact::Mode) == format::fact::ModeLocal)
      Ctx.error(Obj.Path + ": a local-mode object goes into the "
                           "Local-Function library: use jamlink --shared");
  }
  Ctx.Element = Ctx.Opts.Element;
  if (Ctx.Element.empty())
    Ctx.Element = Obj.Info.lookup(format::fact::Element);
  if (Ctx.Element.empty()) {
    StringRef Stem = sys::path::stem(Obj.Path);
    if (Stem.consume_front("jam_"))
      Ctx.Element = Stem.str();
  }
  if (Ctx.Element.empty()) {
    Ctx.error(Obj.Path + ": cannot tell the element name: name the object "
                         "jam_<name>.o or pass --element=<name>");
    return;
  }
  std::string EntryName = Ctx.Opts.Entry;
  if (EntryName.empty())
    EntryName = Obj.Info.lookup(format::fact::Entry);
  if (EntryName.empty())
    EntryName = Ctx.Element + "_main";
  const Symbol *Entry = Obj.findDefined(EntryName);
  if (!Entry) {
    Ctx.error(Obj.Path + ": entry '" + EntryName + "' is not defined" +
              (Obj.hasPluginInfo() ? "" : " (pass --entry=<symbol>)"));
    return;
  }
  if (Entry->SectionIndex >= Obj.Sections.size() ||
      Obj.Sections[Entry->SectionIndex].Kind != SectionKind::Code) {
    Ctx.error(Obj.Path + ": entry '" + EntryName + "' is not in a code section");
    return;
  }
  // At or past the end of its section the entry would run whatever the
  // layout places next (InputObject has checked it is not beyond).
  if (Entry->Value >= Obj.Sections[Entry->SectionIndex].Size) {
    Ctx.error(Obj.location(Entry->SectionIndex, Entry->Value) + ": entry '" + EntryName +
              "' lies at the end of its section, where there is no code");
    return;
  }
  Ctx.Entry = Entry;
  // The plugin's code indexes its imports already: they keep their places.
  for (const std::string &Name : Obj.Imports)
    Ctx.importFor(Name);
}

Expected<JamImage> linkImage(InputObject &Obj, const LinkOptions &Opts) {
  std::unique_ptr<TargetInfo> Target = createTarget(Obj.Machine);
  if (!Target)
    return createStringError(inconvertibleErrorCode(),
                             Obj.Path + ": unsupported machine " +
                                 std::to_string(Obj.Machine) +
                                 " (jams are x86_64 or aarch64)");
  LinkContext Ctx(Obj, *Target, Opts);
  findEntry(Ctx);
  if (Ctx.Errors.empty()) {
    markLive(Ctx);
    scanRelocations(Ctx);
  }
  if (Ctx.Errors.empty())
    assignLayout(Ctx);
  // Only a layout without errors has its bytes allocated and every section
  // placed inside them.
  if (Ctx.Errors.empty()) {
    applyRelocations(Ctx);
    writeTrampolines(Ctx);
  }
  if (!Ctx.Errors.empty())
    return createStringError(inconvertibleErrorCode(),
                             join(Ctx.Errors, "\n"));

  JamImage &Image = Ctx.Image;
  Image.Element = Ctx.Element;
  Image.ISA = Target->name().str();
  Image.Machine = Target->machine();
  Image.EntrySymbol = Ctx.Entry->Name;
  Image.Entry = Ctx.symbolOffset(*Ctx.Entry);
  Image.GOTP = Ctx.GOTPOffset;
  Image.Imports = Ctx.Imports;
  Image.Source = sys::path::filename(Obj.Path).str();
  Image.Hash = format::jamImageHash(Image);
  return std::move(Ctx.Image);
}

} // namespace twochains::jamlink
