//===- JamLocalPass.cpp - Local mode --------------------------------------===//
//
// The same source, unmodified, for the package's Local-Function library:
// no rewrite; the entry and the sender-side helpers get package-unique names
// (tc.<package>.<element>.main, .payload_size, .payload_init) and everything
// else becomes internal, so elements never clash inside one library.
//
//===----------------------------------------------------------------------===//
#include "JamMetadata.h"
#include "JamPasses.h"
#include "JamSymbols.h"

#include "llvm/TargetParser/Triple.h"

using namespace llvm;

namespace twochains {

PreservedAnalyses JamLocalPass::run(Module &M, ModuleAnalysisManager &) {
  if (Opts.Package.empty() || !isValidJamName(Opts.Package)) {
    M.getContext().emitError(
        Opts.Package.empty()
            ? Twine("local mode needs a package name (package=<name>)")
            : "invalid package name '" + Opts.Package +
                  "': use letters, digits and '_'");
    return PreservedAnalyses::all();
  }
  Expected<JamSymbols> Syms = findJamSymbols(M, Opts);
  if (!Syms) {
    M.getContext().emitError(toString(Syms.takeError()));
    return PreservedAnalyses::all();
  }

  dropAnnotations(M);
  SmallVector<const GlobalValue *, 3> Keep = {Syms->Entry};
  JamInfo Info = {
      {std::string(JamABIFact), std::to_string(JamABIVersion)},
      {std::string(format::fact::Mode), std::string(format::fact::ModeLocal)},
      {std::string(format::fact::Package), Opts.Package},
      {std::string(format::fact::Element), Syms->Element},
      {std::string(format::fact::ISA), Triple(M.getTargetTriple()).getArchName().str()},
  };
  auto Export = [&](Function *F, StringRef Role, StringRef Key) {
    if (!F)
      return;
    F->setName(localSymbol(Opts.Package, Syms->Element, Role));
    F->setLinkage(GlobalValue::ExternalLinkage);
    F->setVisibility(GlobalValue::DefaultVisibility);
    F->setComdat(nullptr);
    Keep.push_back(F);
    Info.push_back({Key.str(), F->getName().str()});
  };
  Export(Syms->Entry, "main", "entry");
  Export(Syms->PayloadSize, "payload_size", "payload-size");
  Export(Syms->PayloadInit, "payload_init", "payload-init");
  internalizeAllBut(M, Keep);
  eraseDeadGlobals(M);
  // Outside symbols are weak in the Local-Function library, so a sender
  // can load it for the payload helpers without the receiver's rieds. On
  // the receiver the runtime resolves every jam's imports before loading
  // the library and refuses the package if one is missing, so no weak
  // symbol is ever left null there.
  for (GlobalValue &GV : M.global_values())
    if (GV.isDeclaration() && !GV.getName().starts_with("llvm.") &&
        !(isa<Function>(GV) && cast<Function>(GV).isIntrinsic()))
      GV.setLinkage(GlobalValue::ExternalWeakLinkage);

  if (!Opts.ArgsType.empty())
    Info.push_back({std::string(format::fact::Args), Opts.ArgsType});
  if (!Opts.ArgsDecl.empty())
    Info.push_back({std::string(format::fact::ArgsDecl), Opts.ArgsDecl});
  Info.push_back({std::string(format::fact::Hash), contentHash(M)});
  emitJamMetadata(M, Info, {});
  return PreservedAnalyses::none();
}

} // namespace twochains
