//===- ImportRewriter.cpp -------------------------------------------------===//
#include "ImportRewriter.h"
#include "JamOptions.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/ReplaceConstant.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

namespace twochains {

static bool isImportCandidate(const GlobalValue &GV) {
  if (!GV.isDeclaration() || GV.getName().starts_with("llvm."))
    return false;
  if (auto *F = dyn_cast<Function>(&GV))
    if (F->isIntrinsic())
      return false;
  return true;
}

StringRef importName(const GlobalValue &GV) {
  StringRef Name = GV.getName();
  Name.consume_front(RenamedImportPrefix);
  return Name;
}

std::vector<GlobalValue *> collectImports(Module &M) {
  std::vector<GlobalValue *> Imports;
  auto Consider = [&](GlobalValue &GV) {
    GV.removeDeadConstantUsers();
    if (isImportCandidate(GV) && !GV.use_empty())
      Imports.push_back(&GV);
  };
  for (Function &F : M)
    Consider(F);
  for (GlobalVariable &GV : M.globals())
    Consider(GV);
  llvm::sort(Imports, [](GlobalValue *A, GlobalValue *B) {
    return importName(*A) < importName(*B);
  });
  return Imports;
}

/// Returns true if C refers to GV, looking through constant expressions.

/// The block where an instruction-use of a value must be available: for a
/// PHI, the end of the incoming block; otherwise the user's block.
static BasicBlock *useBlock(const Use &U) {
  auto *I = cast<Instruction>(U.getUser());
  if (auto *PN = dyn_cast<PHINode>(I))
    return PN->getIncomingBlock(U);
  return I->getParent();
}

/// Moves a placement block out of all loops that contain it: the immediate
/// dominator of a loop header lies outside that loop.
static BasicBlock *hoistOutOfLoops(BasicBlock *BB, DominatorTree &DT,
                                   LoopInfo &LI) {
  while (Loop *L = LI.getLoopFor(BB)) {
    Loop *Outer = L->getOutermostLoop();
    DomTreeNode *IDom = DT.getNode(Outer->getHeader())->getIDom();
    if (!IDom)
      break;
    BB = IDom->getBlock();
  }
  return BB;
}

/// Nearest point in BB that precedes every use placed in BB, so the new
/// value dominates them; the terminator if none of the uses is in BB.
static Instruction *insertionPoint(BasicBlock *BB,
                                   ArrayRef<Instruction *> UsersInBB) {
  for (Instruction &I : *BB) {
    if (isa<PHINode>(I))
      continue;
    if (llvm::is_contained(UsersInBB, &I))
      return &I;
  }
  return BB->getTerminator();
}

namespace {

/// Places one value (an import address or the table pointer) for a set of
/// uses within one function.
struct Placement {
  BasicBlock *Block = nullptr;
  Instruction *Before = nullptr;
};

Placement placeFor(ArrayRef<Use *> Uses, DominatorTree &DT, LoopInfo &LI) {
  BasicBlock *BB = nullptr;
  for (Use *U : Uses) {
    BasicBlock *UB = useBlock(*U);
    BB = BB ? DT.findNearestCommonDominator(BB, UB) : UB;
  }
  BB = hoistOutOfLoops(BB, DT, LI);
  SmallVector<Instruction *, 8> UsersInBB;
  for (Use *U : Uses) {
    auto *I = cast<Instruction>(U->getUser());
    if (!isa<PHINode>(I) && I->getParent() == BB)
      UsersInBB.push_back(I);
  }
  return {BB, insertionPoint(BB, UsersInBB)};
}

} // namespace

void rewriteImports(Module &M, ArrayRef<GlobalValue *> Imports,
                    FunctionAnalysisManager &FAM) {
  LLVMContext &Ctx = M.getContext();
  PointerType *PtrTy = PointerType::getUnqual(Ctx);
  Align PtrAlign = M.getDataLayout().getPointerABIAlignment(0);
  MDNode *Invariant = MDNode::get(Ctx, {});

  // GOTP is written by the sender (or by the runtime on arrival), never by
  // the jam, so nothing may assume it still holds its null initialiser.
  auto *GOTP = new GlobalVariable(M, PtrTy, /*isConstant=*/false,
                                  GlobalValue::InternalLinkage,
                                  ConstantPointerNull::get(PtrTy), GOTPSymbol);
  GOTP->setSection(GOTPSection);
  GOTP->setAlignment(PtrAlign);
  GOTP->setExternallyInitialized(true);
  appendToCompilerUsed(M, {GOTP});

  // Constant expressions over imports (a GEP into an outside array, a
  // pointer cast of an outside function) become instructions first, so every
  // remaining use is an instruction operand we can replace.
  SmallVector<Constant *, 16> ImportConsts(Imports.begin(), Imports.end());
  convertUsersOfConstantsToInstructions(ImportConsts);

  for (Function &F : M) {
    if (F.isDeclaration())
      continue;
    MapVector<GlobalValue *, SmallVector<Use *, 8>> UsesOf;
    for (GlobalValue *Import : Imports)
      for (Use &U : Import->uses())
        if (auto *I = dyn_cast<Instruction>(U.getUser()))
          if (I->getFunction() == &F)
            UsesOf[Import].push_back(&U);
    if (UsesOf.empty())
      continue;

    auto &DT = FAM.getResult<DominatorTreeAnalysis>(F);
    auto &LI = FAM.getResult<LoopAnalysis>(F);

    // Entry loads first, then the table load that all of them need.
    SmallVector<std::pair<LoadInst *, unsigned>, 8> EntryLoads;
    for (auto &[Import, Uses] : UsesOf) {
      unsigned Index = llvm::find(Imports, Import) - Imports.begin();
      Placement P = placeFor(Uses, DT, LI);
      auto *Load = new LoadInst(PtrTy, PoisonValue::get(PtrTy),
                                "tc.imp." + importName(*Import), false, PtrAlign,
                                P.Before);
      Load->setMetadata(LLVMContext::MD_invariant_load, Invariant);
      for (Use *U : Uses) {
        // An indirect call knows nothing of its target: keep what the
        // declaration promised (noreturn, returns_twice for setjmp, ...).
        if (auto *CB = dyn_cast<CallBase>(U->getUser()))
          if (CB->isCallee(U))
            if (auto *Callee = dyn_cast<Function>(Import))
              CB->setAttributes(CB->getAttributes().addFnAttributes(
                  Ctx, AttrBuilder(Ctx, Callee->getAttributes().getFnAttrs())));
        U->set(Load);
      }
      EntryLoads.push_back({Load, Index});
    }

    SmallVector<Use *, 8> TableUses;
    for (auto &[Load, Index] : EntryLoads)
      TableUses.push_back(&Load->getOperandUse(0));
    Placement P = placeFor(TableUses, DT, LI);
    auto *Table = new LoadInst(PtrTy, GOTP, "tc.imports", false, PtrAlign,
                               P.Before);
    Table->setMetadata(LLVMContext::MD_invariant_load, Invariant);
    for (auto &[Load, Index] : EntryLoads) {
      IRBuilder<> B(Load);
      Value *Slot = B.CreateConstInBoundsGEP1_64(PtrTy, Table, Index,
                                                 "tc.slot." + Twine(Index));
      Load->setOperand(0, Slot);
    }
    FAM.invalidate(F, PreservedAnalyses::none());
  }

  for (GlobalValue *Import : Imports) {
    Import->removeDeadConstantUsers();
    removeFromUsedLists(M, [Import](Constant *C) {
      return C->stripPointerCasts() == Import;
    });
    if (Import->use_empty())
      Import->eraseFromParent();
  }
}

} // namespace twochains
