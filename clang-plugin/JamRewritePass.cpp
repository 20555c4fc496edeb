//===- JamRewritePass.cpp - Inject mode -----------------------------------===//
//
// Steps, in order:
//   1. find the entry and the sender-side helpers
//   2. internalise every definition but the entry
//   3. make library calls the backend would introduce explicit
//   4. drop what the entry does not reach (the helpers, unless it calls them)
//   5. collect the imports (those in static initialisers stay relocations,
//      which jamlink turns into import fixups applied on arrival)
//   6. rewrite every use of an import into loads through GOTP
//   7. record element, entry, ISA, ABI, imports and hash in .tc.* sections
//
//===----------------------------------------------------------------------===//
#include "ImportRewriter.h"
#include "JamMetadata.h"
#include "JamPasses.h"
#include "JamSymbols.h"
#include "LowerLibcalls.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace llvm;

namespace twochains {

static bool diagnoseThreadLocals(Module &M) {
  bool OK = true;
  for (GlobalVariable &GV : M.globals()) {
    if (!GV.isThreadLocal() || GV.use_empty())
      continue;
    M.getContext().emitError("thread-local variable '" + GV.getName() +
                             "' cannot be used in a jam");
    OK = false;
  }
  return OK;
}

/// The stack protector's failure call is created by the backend after this
/// pass, by name. A local function of that name in the module captures it,
/// and reaches the receiver's __stack_chk_fail through the import table.
/// (On x86_64 the canary itself is read from the thread pointer and needs
/// nothing; the front end refuses the stack protector where the canary
/// lives in a global.)
static void addStackProtectorTrampoline(Module &M) {
  if (none_of(M, [](Function &F) {
        return !F.isDeclaration() && F.hasStackProtectorFnAttr();
      }))
    return;
  LLVMContext &Ctx = M.getContext();
  auto *FnTy = FunctionType::get(Type::getVoidTy(Ctx), false);
  Function *Existing = M.getFunction("__stack_chk_fail");
  if (Existing && !Existing->isDeclaration())
    return;
  if (Existing)
    Existing->setName(Twine(RenamedImportPrefix) + "__stack_chk_fail");
  FunctionCallee Real = M.getOrInsertFunction(
      (Twine(RenamedImportPrefix) + "__stack_chk_fail").str(), FnTy);
  Function *Trampoline = Function::Create(FnTy, GlobalValue::InternalLinkage,
                                          "__stack_chk_fail", M);
  Trampoline->setDoesNotReturn();
  Trampoline->setDoesNotThrow();
  Trampoline->addFnAttr(Attribute::NoUnwind);
  IRBuilder<> B(BasicBlock::Create(Ctx, "", Trampoline));
  B.CreateCall(Real)->setDoesNotReturn();
  B.CreateUnreachable();
  appendToCompilerUsed(M, {Trampoline});
}

PreservedAnalyses JamRewritePass::run(Module &M, ModuleAnalysisManager &MAM) {
  // Lets the test suite show what fails without the pass (docs/testing.md).
  if (std::getenv("TWOCHAINS_JAM_DISABLE_PASS"))
    return PreservedAnalyses::all();
  Expected<JamSymbols> Syms = findJamSymbols(M, Opts);
  if (!Syms) {
    M.getContext().emitError(toString(Syms.takeError()));
    return PreservedAnalyses::all();
  }
  Function *Entry = Syms->Entry;

  dropAnnotations(M);
  internalizeAllBut(M, {Entry});
  // Hidden and dso_local: a recursive call of the entry binds inside the
  // image instead of going through a PLT.
  Entry->setVisibility(GlobalValue::HiddenVisibility);
  Entry->setDSOLocal(true);
  Entry->setComdat(nullptr);

  lowerLibcalls(M);
  eraseDeadGlobals(M);
  addStackProtectorTrampoline(M);

  std::vector<GlobalValue *> Imports = collectImports(M);
  if (!diagnoseThreadLocals(M))
    return PreservedAnalyses::none();

  std::vector<std::string> ImportNames;
  for (GlobalValue *GV : Imports)
    ImportNames.push_back(importName(*GV).str());

  if (!Opts.SkipRewrite) {
    auto &FAM =
        MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
    rewriteImports(M, Imports, FAM);
  }

  JamInfo Info = {
      {std::string(JamABIFact), std::to_string(JamABIVersion)},
      {std::string(format::fact::Mode), std::string(format::fact::ModeInject)},
      {std::string(format::fact::Element), Syms->Element},
      {std::string(format::fact::Entry), Entry->getName().str()},
      {std::string(format::fact::ISA), Triple(M.getTargetTriple()).getArchName().str()},
      {std::string(format::fact::GOTP), std::string(GOTPSymbol)},
      {std::string(format::fact::Imports), std::to_string(ImportNames.size())},
  };
  if (!Opts.ArgsType.empty())
    Info.push_back({std::string(format::fact::Args), Opts.ArgsType});
  if (!Opts.ArgsDecl.empty())
    Info.push_back({std::string(format::fact::ArgsDecl), Opts.ArgsDecl});
  Info.push_back({std::string(format::fact::Hash), contentHash(M)});
  emitJamMetadata(M, Info, ImportNames);
  return PreservedAnalyses::none();
}

} // namespace twochains
