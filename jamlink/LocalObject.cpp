//===- LocalObject.cpp ----------------------------------------------------===//
#include "LocalObject.h"
#include "InputObject.h"
#include "JamAbi.h"
#include "SymbolTable.h"
#include "Target.h"

#include "lld/Common/Driver.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/ObjCopy/ConfigManager.h"
#include "llvm/ObjCopy/ObjCopy.h"
#include "llvm/Object/Binary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

LLD_HAS_DRIVER(elf)

using namespace llvm;

namespace twochains::jamlink {

static Error localError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// The objects as one relocatable object: references between them are
/// resolved before their names become local.
static Error linkRelocatable(const std::vector<std::string> &Inputs, StringRef Output) {
  std::vector<const char *> Args = {"ld.lld", "-r", "-o", Output.data()};
  for (const std::string &In : Inputs)
    Args.push_back(In.c_str());
  std::string Errors;
  raw_string_ostream ErrOS(Errors);
  lld::Result R = lld::lldMain(Args, outs(), ErrOS, {{lld::Gnu, &lld::elf::link}});
  if (R.retCode != 0)
    return localError("linking the objects of the jam's Local-Function copy failed:\n" +
                      ErrOS.str());
  return Error::success();
}

/// The .tc.jam facts of a local-mode object (docs/jam-object-format.md).
static std::string localFacts(const LocalObjectOptions &Opts, StringRef Entry, StringRef ISA) {
  std::string Facts;
  for (const auto &[K, V] : std::initializer_list<std::pair<std::string_view, std::string>>{
           {format::JamABIFact, std::to_string(format::JamABIVersion)},
           {format::fact::Mode, std::string(format::fact::ModeLocal)},
           {format::fact::Package, Opts.Package},
           {format::fact::Element, Opts.Element},
           {format::fact::Entry, Entry.str()},
           {format::fact::ISA, ISA.str()}}) {
    Facts.append(K.data(), K.size());
    Facts += "=" + V;
    Facts.push_back('\0');
  }
  return Facts;
}

Error makeLocalObject(const LocalObjectOptions &Opts) {
  if (Opts.Inputs.empty())
    return localError("jam '" + Opts.Element + "' has no objects");
  SmallString<128> Merged;
  if (std::error_code EC = sys::fs::createTemporaryFile("tc_local_jam", "o", Merged))
    return localError("cannot create a temporary file: " + EC.message());
  FileRemover RemoveMerged(Merged);
  if (Error E = linkRelocatable(Opts.Inputs, Merged))
    return E;

  auto Obj = InputObject::open(Merged);
  if (!Obj)
    return Obj.takeError();
  std::unique_ptr<TargetInfo> Target = createTarget((*Obj)->Machine);
  if (!Target)
    return localError(Opts.Inputs[0] + ": jams are x86_64 or aarch64");
  std::string OldEntry = Opts.Entry.empty() ? Opts.Element + "_main" : Opts.Entry;
  std::string NewEntry = format::localSymbol(Opts.Package, Opts.Element, "main");
  const Symbol *Entry = (*Obj)->findDefined(OldEntry);
  if (!Entry || !isGlobal(*Entry))
    return localError("jam '" + Opts.Element + "': no object defines the global entry '" +
                      OldEntry + "'");

  objcopy::ConfigManager Config;
  objcopy::CommonConfig &Common = Config.Common;
  Common.InputFilename = Merged;
  Common.OutputFilename = Opts.Output;
  auto Literal = [](StringRef Name) {
    return objcopy::NameOrPattern::create(Name, objcopy::MatchStyle::Literal,
                                          [](Error E) { return E; });
  };
  // objcopy matches its lists against the names as they were: the entry is
  // kept global under its old name, then renamed.
  if (Error E = Common.SymbolsToKeepGlobal.addMatcher(Literal(OldEntry)))
    return E;
  Common.SymbolsToRename[OldEntry] = NewEntry;
  for (const Symbol &S : (*Obj)->Symbols)
    if (S.isUndefined() && isGlobal(S) && S.Name != "_GLOBAL_OFFSET_TABLE_")
      if (Error E = Common.SymbolsToWeaken.addMatcher(Literal(S.Name)))
        return E;
  Common.AddSection.emplace_back(format::InfoSection, MemoryBuffer::getMemBufferCopy(localFacts(
                                                          Opts, NewEntry, Target->name())));
  Common.SetSectionFlags[format::InfoSection] = {
      format::InfoSection, objcopy::SectionFlag(objcopy::SecReadonly | objcopy::SecExclude)};

  auto Bytes = MemoryBuffer::getFile(Merged);
  if (!Bytes)
    return localError("cannot read " + Merged + ": " + Bytes.getError().message());
  auto Binary = object::createBinary((*Bytes)->getMemBufferRef());
  if (!Binary)
    return Binary.takeError();
  std::error_code EC;
  ToolOutputFile Out(Opts.Output, EC, sys::fs::OF_None);
  if (EC)
    return localError("cannot write " + Opts.Output + ": " + EC.message());
  if (Error E = objcopy::executeObjcopyOnBinary(Config, **Binary, Out.os()))
    return localError("making the Local-Function copy of jam '" + Opts.Element +
                      "': " + toString(std::move(E)));
  Out.keep();
  return Error::success();
}

} // namespace twochains::jamlink
