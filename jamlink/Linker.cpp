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
  error(Sec.File->location(Sec.Index, R.Offset) + ": relocation " + relocName(R.Type) +
        " against symbol '" + Sec.File->symbolName(R.SymbolIndex) + "' " + What);
}

std::string LinkContext::relocName(uint32_t Type) const {
  StringRef Name = object::getELFRelocationTypeName(Target.machine(), Type);
  if (Name == "Unknown")
    return "type " + std::to_string(Type);
  return Name.str();
}

std::string LinkContext::name() const {
  std::vector<std::string> Paths;
  for (const InputObject *F : Files)
    Paths.push_back(F->Path);
  return join(Paths, ", ");
}

unsigned LinkContext::importFor(const std::string &Name) {
  auto [It, Inserted] = ImportIndex.try_emplace(Name, Imports.size());
  if (Inserted)
    Imports.push_back(Name);
  return It->second;
}

uint64_t LinkContext::symbolOffset(const SymbolRef &S) const {
  const InputSection &Sec = S.File->Sections[S.Sym->SectionIndex];
  return Sec.ImageOffset + (S.Sym->Type == ELF::STT_SECTION ? 0 : S.Sym->Value);
}

/// Every object's global names into one table. A plugin object indexes
/// its imports itself and reaches nothing but them: another object's
/// functions would be imports it looks for on the receiver, so it is
/// linked alone.
void resolveSymbols(LinkContext &Ctx) {
  if (Ctx.Files.size() > 1)
    for (const InputObject *F : Ctx.Files)
      if (F->hasPluginInfo())
        Ctx.error(F->Path + ": an object of the Two-Chains plugin is a whole jam and is "
                            "linked alone; give a plugin jam several files as parts "
                            "(a jam folder, docs/packages.md)");
  for (const InputObject *F : Ctx.Files)
    if (F->Machine != Ctx.Target.machine())
      Ctx.error(F->Path + ": is for another ISA than " + Ctx.Files[0]->Path);
  if (!Ctx.Errors.empty())
    return;
  for (InputObject *F : Ctx.Files)
    Ctx.Symtab.addFile(*F, Ctx.Errors);
}

/// The element a jam of several objects is named after: its one object
/// named jam_<name>.o.
static std::string elementFromFileNames(LinkContext &Ctx) {
  std::string Element, From;
  for (const InputObject *F : Ctx.Files) {
    StringRef Stem = sys::path::stem(F->Path);
    if (!Stem.consume_front("jam_"))
      continue;
    if (!Element.empty()) {
      Ctx.error("cannot tell the element name: both " + From + " and " + F->Path +
                " are named jam_<name>.o; pass --element=<name>");
      return "";
    }
    Element = Stem.str();
    From = F->Path;
  }
  return Element;
}

/// The entry: a global name of any object, else, for a jam of one object,
/// a local one too.
static SymbolRef findEntrySymbol(const LinkContext &Ctx, StringRef Name) {
  if (SymbolRef S = Ctx.Symtab.findDefined(Name))
    return S;
  if (Ctx.Files.size() == 1)
    if (const Symbol *S = Ctx.Files[0]->findDefined(Name))
      return {Ctx.Files[0], S};
  return {};
}

/// Element and entry come from the options, else from the plugin's .tc.jam,
/// else from the file name (jam_<name>.o) and the canonical <name>_main.
void findEntry(LinkContext &Ctx) {
  const InputObject &First = *Ctx.Files[0];
  for (const InputObject *Obj : Ctx.Files) {
    if (!Obj->hasPluginInfo())
      continue;
    std::string ABI = Obj->Info.lookup(format::JamABIFact);
    if (ABI != std::to_string(format::JamABIVersion))
      Ctx.error(Obj->Path + ": jam ABI version '" + ABI + "' is not supported (expected " +
                std::to_string(format::JamABIVersion) + ")");
    if (Obj->Info.lookup(format::fact::Mode) == format::fact::ModeLocal)
      Ctx.error(Obj->Path + ": a local-mode object goes into the "
                            "Local-Function library: use jamlink --shared");
  }
  Ctx.Element = Ctx.Opts.Element;
  if (Ctx.Element.empty())
    Ctx.Element = First.Info.lookup(format::fact::Element);
  if (Ctx.Element.empty())
    Ctx.Element = elementFromFileNames(Ctx);
  if (Ctx.Element.empty()) {
    if (Ctx.Errors.empty())
      Ctx.error(Ctx.name() + ": cannot tell the element name: name " +
                (Ctx.Files.size() == 1 ? "the object" : "one object") +
                " jam_<name>.o or pass --element=<name>");
    return;
  }
  std::string EntryName = Ctx.Opts.Entry;
  if (EntryName.empty())
    EntryName = First.Info.lookup(format::fact::Entry);
  if (EntryName.empty())
    EntryName = Ctx.Element + "_main";
  SymbolRef Entry = findEntrySymbol(Ctx, EntryName);
  if (!Entry) {
    Ctx.error(Ctx.name() + ": entry '" + EntryName + "' is not defined" +
              (First.hasPluginInfo() ? "" : " (pass --entry=<symbol>)"));
    return;
  }
  const InputObject &Obj = *Entry.File;
  if (Entry.Sym->SectionIndex >= Obj.Sections.size() ||
      Obj.Sections[Entry.Sym->SectionIndex].Kind != SectionKind::Code) {
    Ctx.error(Obj.Path + ": entry '" + EntryName + "' is not in a code section");
    return;
  }
  // At or past the end of its section the entry would run whatever the
  // layout places next (InputObject has checked it is not beyond).
  if (Entry.Sym->Value >= Obj.Sections[Entry.Sym->SectionIndex].Size) {
    Ctx.error(Obj.location(Entry.Sym->SectionIndex, Entry.Sym->Value) + ": entry '" + EntryName +
              "' lies at the end of its section, where there is no code");
    return;
  }
  Ctx.Entry = Entry;
  // The plugin's code indexes its imports already: they keep their places.
  for (const std::string &Name : First.Imports)
    Ctx.importFor(Name);
}

Expected<JamImage> linkImage(ArrayRef<InputObject *> Objs, const LinkOptions &Opts) {
  if (Objs.empty())
    return createStringError(inconvertibleErrorCode(), "no jam object to link");
  std::unique_ptr<TargetInfo> Target = createTarget(Objs[0]->Machine, Opts.Sandbox);
  if (!Target)
    return createStringError(inconvertibleErrorCode(), Objs[0]->Path + ": unsupported machine " +
                                                           std::to_string(Objs[0]->Machine) +
                                                           " (jams are x86_64 or aarch64)");
  LinkContext Ctx(Objs.vec(), *Target, Opts);
  resolveSymbols(Ctx);
  if (Ctx.Errors.empty())
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
    if (Opts.Sandbox && Ctx.Errors.empty())
      verifySandboxed(Ctx);
  }
  if (!Ctx.Errors.empty())
    return createStringError(inconvertibleErrorCode(),
                             join(Ctx.Errors, "\n"));

  JamImage &Image = Ctx.Image;
  Image.Element = Ctx.Element;
  Image.ISA = Target->name().str();
  Image.Machine = Target->machine();
  Image.EntrySymbol = Ctx.Entry.Sym->Name;
  Image.Entry = Ctx.symbolOffset(Ctx.Entry);
  Image.GOTP = Ctx.GOTPOffset;
  Image.Imports = Ctx.Imports;
  Image.Sandbox = Opts.Sandbox ? format::JamSandboxScheme : 0;
  std::vector<std::string> Names;
  for (const InputObject *F : Objs)
    Names.push_back(sys::path::filename(F->Path).str());
  Image.Source = join(Names, ",");
  Image.Hash = format::jamImageHash(Image);
  return std::move(Ctx.Image);
}

} // namespace twochains::jamlink
