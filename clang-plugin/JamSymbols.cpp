//===- JamSymbols.cpp -----------------------------------------------------===//
#include "JamSymbols.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"

using namespace llvm;

namespace twochains {

static Error jamError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// Returns the functions annotated with Annotation through
/// __attribute__((annotate(...))), which the plugin's attributes lower to.
static SmallVector<Function *, 1> annotatedFunctions(Module &M,
                                                     StringRef Annotation) {
  SmallVector<Function *, 1> Result;
  GlobalVariable *GA = M.getNamedGlobal("llvm.global.annotations");
  if (!GA || !GA->hasInitializer())
    return Result;
  auto *Array = dyn_cast<ConstantArray>(GA->getInitializer());
  if (!Array)
    return Result;
  for (Value *Op : Array->operands()) {
    auto *Entry = dyn_cast<ConstantStruct>(Op);
    if (!Entry || Entry->getNumOperands() < 2)
      continue;
    auto *F = dyn_cast<Function>(Entry->getOperand(0)->stripPointerCasts());
    auto *StrGV =
        dyn_cast<GlobalVariable>(Entry->getOperand(1)->stripPointerCasts());
    if (!F || !StrGV || !StrGV->hasInitializer())
      continue;
    auto *Str = dyn_cast<ConstantDataArray>(StrGV->getInitializer());
    if (Str && Str->isCString() && Str->getAsCString() == Annotation)
      Result.push_back(F);
  }
  return Result;
}

static Expected<Function *> findRole(Module &M, StringRef ExplicitName,
                                     StringRef Annotation,
                                     StringRef CanonicalName, bool Required,
                                     StringRef What) {
  if (!ExplicitName.empty()) {
    Function *F = M.getFunction(ExplicitName);
    if (!F || F->isDeclaration())
      return jamError("jam " + What + " '" + ExplicitName +
                      "' is not defined in this module");
    return F;
  }
  SmallVector<Function *, 1> Marked = annotatedFunctions(M, Annotation);
  if (Marked.size() > 1)
    return jamError("more than one function is marked as the jam " + What +
                    ": '" + Marked[0]->getName() + "' and '" +
                    Marked[1]->getName() + "'");
  if (Marked.size() == 1)
    return Marked[0];
  Function *F = M.getFunction(CanonicalName);
  if (F && !F->isDeclaration())
    return F;
  if (Required)
    return jamError("no jam " + What + ": define '" + CanonicalName +
                    "' or mark a function with __attribute__((jam_entry))");
  return nullptr;
}

Expected<JamSymbols> findJamSymbols(Module &M, const JamOptions &Opts) {
  JamSymbols Syms;
  Syms.Element = Opts.Element;
  if (Syms.Element.empty())
    Syms.Element = elementNameFromPath(M.getSourceFileName());
  if (Syms.Element.empty())
    return jamError("cannot tell the element name of '" +
                    M.getSourceFileName() +
                    "': name the source jam_<name>.amc or pass element=<name>");
  if (!isValidJamName(Syms.Element))
    return jamError("invalid element name '" + Syms.Element +
                    "': use letters, digits and '_'");

  auto Entry = findRole(M, Opts.Entry, EntryAnnotation,
                        Syms.Element + "_main", /*Required=*/true, "entry");
  if (!Entry)
    return Entry.takeError();
  auto Size =
      findRole(M, Opts.PayloadSize, PayloadSizeAnnotation,
               Syms.Element + "_payload_size", /*Required=*/false,
               "payload-size helper");
  if (!Size)
    return Size.takeError();
  auto Init =
      findRole(M, Opts.PayloadInit, PayloadInitAnnotation,
               Syms.Element + "_payload_init", /*Required=*/false,
               "payload-init helper");
  if (!Init)
    return Init.takeError();
  Syms.Entry = *Entry;
  Syms.PayloadSize = *Size;
  Syms.PayloadInit = *Init;
  if (Syms.Entry->isVarArg())
    return jamError("jam entry '" + Syms.Entry->getName() +
                    "' must not be variadic");
  return Syms;
}

void dropAnnotations(Module &M) {
  if (GlobalVariable *GA = M.getNamedGlobal("llvm.global.annotations"))
    GA->eraseFromParent();
}

void internalizeAllBut(Module &M, ArrayRef<const GlobalValue *> Keep) {
  SmallPtrSet<const GlobalValue *, 4> KeepSet(Keep.begin(), Keep.end());
  auto Internalize = [&](GlobalValue &GV) {
    if (GV.isDeclaration() || KeepSet.count(&GV) ||
        GV.getName().starts_with("llvm."))
      return;
    if (auto *GO = dyn_cast<GlobalObject>(&GV))
      GO->setComdat(nullptr);
    GV.setLinkage(GlobalValue::InternalLinkage);
    GV.setVisibility(GlobalValue::DefaultVisibility);
    GV.setDSOLocal(true);
  };
  for (Function &F : M)
    Internalize(F);
  for (GlobalVariable &GV : M.globals())
    Internalize(GV);
  for (GlobalAlias &GA : M.aliases())
    Internalize(GA);
}

bool eraseDeadGlobals(Module &M) {
  bool Changed = false;
  bool Progress = true;
  while (Progress) {
    Progress = false;
    SmallVector<GlobalValue *, 16> Dead;
    auto Consider = [&](GlobalValue &GV) {
      if (GV.getName().starts_with("llvm.") || GV.getName() == StringRef(GOTPSymbol))
        return;
      if (!GV.hasLocalLinkage() && !GV.isDeclaration())
        return;
      GV.removeDeadConstantUsers();
      if (GV.use_empty())
        Dead.push_back(&GV);
    };
    for (Function &F : M)
      if (!F.isIntrinsic())
        Consider(F);
    for (GlobalVariable &GV : M.globals())
      Consider(GV);
    for (GlobalValue *GV : Dead) {
      if (auto *F = dyn_cast<Function>(GV))
        F->deleteBody();
      else if (auto *V = dyn_cast<GlobalVariable>(GV))
        V->setInitializer(nullptr);
      GV->eraseFromParent();
      Progress = Changed = true;
    }
  }
  return Changed;
}

} // namespace twochains
