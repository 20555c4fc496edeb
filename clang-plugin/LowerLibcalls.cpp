//===- LowerLibcalls.cpp --------------------------------------------------===//
#include "LowerLibcalls.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"

using namespace llvm;

namespace twochains {

namespace {

/// libm names of math intrinsics that some supported ISA lowers to a call.
/// Intrinsics every ISA expands inline (sqrt, fabs, copysign, ...) are absent.
struct MathLibcall {
  Intrinsic::ID ID;
  const char *Name; // double; "f" / "l" suffixes for float / long double
};
constexpr MathLibcall MathLibcalls[] = {
    {Intrinsic::sin, "sin"},         {Intrinsic::cos, "cos"},
    {Intrinsic::tan, "tan"},         {Intrinsic::exp, "exp"},
    {Intrinsic::exp2, "exp2"},       {Intrinsic::exp10, "exp10"},
    {Intrinsic::log, "log"},         {Intrinsic::log2, "log2"},
    {Intrinsic::log10, "log10"},     {Intrinsic::pow, "pow"},
    {Intrinsic::fma, "fma"},         {Intrinsic::floor, "floor"},
    {Intrinsic::ceil, "ceil"},       {Intrinsic::trunc, "trunc"},
    {Intrinsic::rint, "rint"},       {Intrinsic::nearbyint, "nearbyint"},
    {Intrinsic::round, "round"},     {Intrinsic::roundeven, "roundeven"},
    {Intrinsic::lround, "lround"},   {Intrinsic::llround, "llround"},
    {Intrinsic::lrint, "lrint"},     {Intrinsic::llrint, "llrint"},
};

/// Returns the libm name for a scalar of type Ty, or "" if Ty has none.
std::string libmName(const char *Base, Type *Ty) {
  if (Ty->isDoubleTy())
    return Base;
  if (Ty->isFloatTy())
    return std::string(Base) + "f";
  if (Ty->isX86_FP80Ty())
    return std::string(Base) + "l";
  return "";
}

class LibcallLowering {
public:
  explicit LibcallLowering(Module &M)
      : M(M), DL(M.getDataLayout()), Ctx(M.getContext()),
        PtrTy(PointerType::getUnqual(Ctx)), IntPtrTy(DL.getIntPtrType(Ctx)) {}

  bool run() {
    bool Changed = false;
    for (Function &F : M) {
      if (F.isDeclaration())
        continue;
      SmallVector<Instruction *, 16> Work;
      for (Instruction &I : instructions(F))
        Work.push_back(&I);
      for (Instruction *I : Work)
        Changed |= visit(*I);
    }
    return Changed;
  }

private:
  Module &M;
  const DataLayout &DL;
  LLVMContext &Ctx;
  PointerType *PtrTy;
  IntegerType *IntPtrTy;

  FunctionCallee libcall(StringRef Name, Type *Ret, ArrayRef<Type *> Params) {
    return M.getOrInsertFunction(Name, FunctionType::get(Ret, Params, false));
  }

  void replaceWithCall(Instruction &I, FunctionCallee Callee,
                       ArrayRef<Value *> Args) {
    IRBuilder<> B(&I);
    CallInst *Call = B.CreateCall(Callee, Args);
    Call->setDebugLoc(I.getDebugLoc());
    if (!I.getType()->isVoidTy())
      I.replaceAllUsesWith(Call);
    I.eraseFromParent();
  }

  bool visit(Instruction &I) {
    if (auto *MI = dyn_cast<MemIntrinsic>(&I))
      return lowerMemIntrinsic(*MI);
    if (auto *II = dyn_cast<IntrinsicInst>(&I))
      return lowerMathIntrinsic(*II) || lowerClearCache(*II);
    if (auto *BO = dyn_cast<BinaryOperator>(&I))
      return lowerWideDivision(*BO) || lowerFRem(*BO);
    if (auto *Cast = dyn_cast<CastInst>(&I))
      return lowerWideConversion(*Cast);
    return false;
  }

  bool lowerMemIntrinsic(MemIntrinsic &MI) {
    // The .inline variants never become calls.
    if (isa<MemCpyInlineInst>(MI) || isa<MemSetInlineInst>(MI))
      return false;
    if (auto *Len = dyn_cast<ConstantInt>(MI.getLength()))
      if (Len->getZExtValue() <= MaxInlineMemOpBytes)
        return expandInline(MI, Len->getZExtValue());
    IRBuilder<> B(&MI);
    Value *Len = B.CreateZExtOrTrunc(MI.getLength(), IntPtrTy);
    if (auto *MS = dyn_cast<MemSetInst>(&MI)) {
      Value *Byte = B.CreateZExt(MS->getValue(), B.getInt32Ty());
      replaceWithCall(MI, libcall("memset", PtrTy, {PtrTy, B.getInt32Ty(), IntPtrTy}),
                      {MS->getDest(), Byte, Len});
      return true;
    }
    auto *MT = cast<MemTransferInst>(&MI);
    StringRef Name = isa<MemMoveInst>(MT) ? "memmove" : "memcpy";
    replaceWithCall(MI, libcall(Name, PtrTy, {PtrTy, PtrTy, IntPtrTy}),
                    {MT->getDest(), MT->getSource(), Len});
    return true;
  }

  bool expandInline(MemIntrinsic &MI, uint64_t Len) {
    IRBuilder<> B(&MI);
    Instruction *New = nullptr;
    if (auto *MS = dyn_cast<MemSetInst>(&MI)) {
      New = B.CreateMemSetInline(MS->getDest(), MS->getDestAlign(),
                                 MS->getValue(), MS->getLength(),
                                 MS->isVolatile());
      New->copyMetadata(MI);
    } else if (auto *MC = dyn_cast<MemCpyInst>(&MI)) {
      New = B.CreateMemCpyInline(MC->getDest(), MC->getDestAlign(),
                                 MC->getSource(), MC->getSourceAlign(),
                                 MC->getLength(), MC->isVolatile());
      New->copyMetadata(MI);
    } else {
      // memmove: reading all bytes before writing any is correct for any
      // overlap.
      auto *MM = cast<MemMoveInst>(&MI);
      if (Len == 0) {
        MI.eraseFromParent();
        return true;
      }
      auto *Ty = FixedVectorType::get(B.getInt8Ty(), Len);
      LoadInst *L = B.CreateAlignedLoad(Ty, MM->getSource(),
                                        MM->getSourceAlign().valueOrOne(),
                                        MM->isVolatile());
      L->setDebugLoc(MI.getDebugLoc());
      New = B.CreateAlignedStore(L, MM->getDest(),
                                 MM->getDestAlign().valueOrOne(),
                                 MM->isVolatile());
    }
    New->setDebugLoc(MI.getDebugLoc());
    MI.eraseFromParent();
    return true;
  }

  bool lowerMathIntrinsic(IntrinsicInst &II) {
    for (const MathLibcall &L : MathLibcalls) {
      if (II.getIntrinsicID() != L.ID)
        continue;
      Type *ArgTy = II.getArgOperand(0)->getType();
      std::string Name = libmName(L.Name, ArgTy);
      if (Name.empty())
        return false; // vectors and fp128 are diagnosed elsewhere or scalarised
      SmallVector<Type *, 3> Params;
      SmallVector<Value *, 3> Args;
      for (Value *A : II.args()) {
        Params.push_back(A->getType());
        Args.push_back(A);
      }
      // lround and friends return long / long long, which the intrinsic
      // may have narrowed or widened.
      replaceWithCall(II, libcall(Name, II.getType(), Params), Args);
      return true;
    }
    return false;
  }

  bool lowerClearCache(IntrinsicInst &II) {
    if (II.getIntrinsicID() != Intrinsic::clear_cache)
      return false;
    replaceWithCall(II,
                    libcall("__clear_cache", Type::getVoidTy(Ctx), {PtrTy, PtrTy}),
                    {II.getArgOperand(0), II.getArgOperand(1)});
    return true;
  }

  bool lowerFRem(BinaryOperator &BO) {
    if (BO.getOpcode() != Instruction::FRem)
      return false;
    std::string Name = libmName("fmod", BO.getType());
    if (Name.empty())
      return false;
    replaceWithCall(BO, libcall(Name, BO.getType(), {BO.getType(), BO.getType()}),
                    {BO.getOperand(0), BO.getOperand(1)});
    return true;
  }

  /// 128-bit division and remainder call compiler-rt/libgcc helpers unless
  /// the divisor is a power of two.
  bool lowerWideDivision(BinaryOperator &BO) {
    const char *Name = nullptr;
    switch (BO.getOpcode()) {
    case Instruction::SDiv: Name = "__divti3"; break;
    case Instruction::UDiv: Name = "__udivti3"; break;
    case Instruction::SRem: Name = "__modti3"; break;
    case Instruction::URem: Name = "__umodti3"; break;
    default: return false;
    }
    if (!BO.getType()->isIntegerTy(128))
      return false;
    if (auto *C = dyn_cast<ConstantInt>(BO.getOperand(1)))
      if (C->getValue().isPowerOf2())
        return false;
    Type *T = BO.getType();
    replaceWithCall(BO, libcall(Name, T, {T, T}),
                    {BO.getOperand(0), BO.getOperand(1)});
    return true;
  }

  bool lowerWideConversion(CastInst &C) {
    Type *Src = C.getSrcTy(), *Dst = C.getDestTy();
    auto Suffix = [](Type *FP) -> const char * {
      return FP->isDoubleTy() ? "df" : FP->isFloatTy() ? "sf" : nullptr;
    };
    std::string Name;
    switch (C.getOpcode()) {
    case Instruction::FPToSI:
    case Instruction::FPToUI:
      if (!Dst->isIntegerTy(128) || !Suffix(Src))
        return false;
      Name = std::string(C.getOpcode() == Instruction::FPToSI ? "__fix"
                                                               : "__fixuns") +
             Suffix(Src) + "ti";
      break;
    case Instruction::SIToFP:
    case Instruction::UIToFP:
      if (!Src->isIntegerTy(128) || !Suffix(Dst))
        return false;
      Name = std::string(C.getOpcode() == Instruction::SIToFP ? "__floatti"
                                                               : "__floatunti") +
             Suffix(Dst);
      break;
    default:
      return false;
    }
    replaceWithCall(C, libcall(Name, Dst, {Src}), {C.getOperand(0)});
    return true;
  }
};

/// fp128 (long double on aarch64) needs a soft-float helper for every
/// operation; jams do not support it yet, and silently emitting helper calls
/// that bypass GOTP would break the image.
void diagnoseFP128(Module &M) {
  for (Function &F : M) {
    if (F.isDeclaration())
      continue;
    for (Instruction &I : instructions(F)) {
      bool Uses = I.getType()->isFP128Ty() ||
                  any_of(I.operands(), [](const Use &U) {
                    return U->getType()->isFP128Ty();
                  });
      if (!Uses)
        continue;
      M.getContext().diagnose(DiagnosticInfoUnsupported(
          F,
          "128-bit floating point (long double on this target) is not "
          "supported in jams: use double",
          I.getDebugLoc()));
      break;
    }
  }
}

} // namespace

bool lowerLibcalls(Module &M) {
  diagnoseFP128(M);
  return LibcallLowering(M).run();
}

} // namespace twochains
