//===- X86Verifier.cpp - One linear pass over sandboxed x86-64 code -------===//
//
// Decode, then check. Zydis decodes each instruction into its operands,
// the registers it writes and the memory it reaches; the rules apply to
// that. Only the instruction-set extensions a C compiler emits for user
// code are admitted (base, x87, SSE to SSE4, AVX, AVX2, FMA, BMI and a few
// more); every other encoding is rejected, so a gap costs a rejected image,
// never an escape.
//
// The invariants (docs/sandbox.md, "x86-64"): the %gs segment's base holds
// the region's base, 4 GiB aligned, and nothing of the jam writes it; %rsp
// lies inside the region, or within a step of it until the next
// instruction touches the stack (the guard zones catch the step); the code
// is cut into 32-byte bundles that no instruction and no guard sequence
// crosses, and every indirect branch lands at a bundle's start. A memory
// operand is `%gs:` with a 32-bit address (any address it computes lies in
// the region), `%rsp` plus a small displacement, or `%rip`-relative inside
// the region.
//
//===----------------------------------------------------------------------===//
#include "verify/Verify.h"

#include <Zydis/Zydis.h>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace twochains::verify;

namespace {

constexpr ZydisMachineMode Mode = ZYDIS_MACHINE_MODE_LONG_64;

/// The extensions whose instructions may be admitted (each instruction is
/// then checked by the rules).
bool admittedExtension(ZydisISAExt E) {
  switch (E) {
  case ZYDIS_ISA_EXT_BASE:
  case ZYDIS_ISA_EXT_LONGMODE:
  case ZYDIS_ISA_EXT_X87:
  case ZYDIS_ISA_EXT_SSE:
  case ZYDIS_ISA_EXT_SSE2:
  case ZYDIS_ISA_EXT_SSE3:
  case ZYDIS_ISA_EXT_SSSE3:
  case ZYDIS_ISA_EXT_SSE4:
  case ZYDIS_ISA_EXT_AVX:
  case ZYDIS_ISA_EXT_AVX2:
  case ZYDIS_ISA_EXT_FMA:
  case ZYDIS_ISA_EXT_F16C:
  case ZYDIS_ISA_EXT_BMI1:
  case ZYDIS_ISA_EXT_BMI2:
  case ZYDIS_ISA_EXT_LZCNT:
  case ZYDIS_ISA_EXT_MOVBE:
  case ZYDIS_ISA_EXT_ADOX_ADCX:
  case ZYDIS_ISA_EXT_PAUSE:
  case ZYDIS_ISA_EXT_AES:
  case ZYDIS_ISA_EXT_AVXAES:
  case ZYDIS_ISA_EXT_PCLMULQDQ:
  case ZYDIS_ISA_EXT_SHA: return true;
  default: return false;
  }
}

/// Instructions of admitted extensions that the sandbox still refuses:
/// they change state the receiver relies on (flags it expects clear,
/// frame pointers it restores), reach memory through registers no operand
/// names, or tell the jam about the machine.
const char *forbiddenMnemonic(ZydisMnemonic M) {
  switch (M) {
  case ZYDIS_MNEMONIC_ENTER:
  case ZYDIS_MNEMONIC_LEAVE: return "moves the stack pointer to or from the frame pointer";
  case ZYDIS_MNEMONIC_POPF:
  case ZYDIS_MNEMONIC_POPFD:
  case ZYDIS_MNEMONIC_POPFQ:
  case ZYDIS_MNEMONIC_STD:
    return "sets flags the receiver relies on (direction, trap, alignment check)";
  case ZYDIS_MNEMONIC_XLAT:
  case ZYDIS_MNEMONIC_MASKMOVQ:
  case ZYDIS_MNEMONIC_MASKMOVDQU:
  case ZYDIS_MNEMONIC_VMASKMOVDQU:
    return "reaches memory through a register its operands do not name";
  case ZYDIS_MNEMONIC_CLI:
  case ZYDIS_MNEMONIC_STI:
  case ZYDIS_MNEMONIC_SGDT:
  case ZYDIS_MNEMONIC_SIDT:
  case ZYDIS_MNEMONIC_SLDT:
  case ZYDIS_MNEMONIC_STR:
  case ZYDIS_MNEMONIC_SMSW:
  case ZYDIS_MNEMONIC_LAR:
  case ZYDIS_MNEMONIC_LSL:
  case ZYDIS_MNEMONIC_VERR:
  case ZYDIS_MNEMONIC_VERW:
  case ZYDIS_MNEMONIC_CPUID:
  case ZYDIS_MNEMONIC_RDTSC:
  case ZYDIS_MNEMONIC_RDTSCP:
  case ZYDIS_MNEMONIC_RDPMC:
  case ZYDIS_MNEMONIC_FXSAVE:
  case ZYDIS_MNEMONIC_FXSAVE64:
  case ZYDIS_MNEMONIC_FXRSTOR:
  case ZYDIS_MNEMONIC_FXRSTOR64: return "is a system instruction";
  default: return nullptr;
  }
}

/// Why an instruction's category is refused outright, or null.
const char *forbiddenCategory(ZydisInstructionCategory C) {
  switch (C) {
  case ZYDIS_CATEGORY_SYSCALL:
  case ZYDIS_CATEGORY_SYSRET:
  case ZYDIS_CATEGORY_SYSTEM: return "is a system instruction";
  case ZYDIS_CATEGORY_IO:
  case ZYDIS_CATEGORY_IOSTRINGOP: return "is an I/O instruction";
  case ZYDIS_CATEGORY_STRINGOP:
    return "is a string instruction (it reaches memory through %rsi and %rdi, unconfined)";
  case ZYDIS_CATEGORY_SEGOP: return "loads a segment register";
  default: return nullptr;
  }
}

bool isTrap(ZydisMnemonic M) {
  return M == ZYDIS_MNEMONIC_UD0 || M == ZYDIS_MNEMONIC_UD1 || M == ZYDIS_MNEMONIC_UD2 ||
         M == ZYDIS_MNEMONIC_INT3;
}

bool isSegmentRegister(ZydisRegister R) {
  return ZydisRegisterGetClass(R) == ZYDIS_REGCLASS_SEGMENT;
}

ZydisRegister full(ZydisRegister R) {
  ZydisRegister F = ZydisRegisterGetLargestEnclosing(Mode, R);
  return F == ZYDIS_REGISTER_NONE ? R : F;
}

bool isGpr64(ZydisRegister R) { return ZydisRegisterGetClass(R) == ZYDIS_REGCLASS_GPR64; }
bool isGpr32(ZydisRegister R) { return ZydisRegisterGetClass(R) == ZYDIS_REGCLASS_GPR32; }

/// One decoded instruction and where it lies.
struct Instruction {
  size_t Offset = 0;
  ZydisDecodedInstruction I;
  ZydisDecodedOperand Ops[ZYDIS_MAX_OPERAND_COUNT];

  size_t end() const { return Offset + I.length; }
  ZydisMnemonic mnemonic() const { return I.mnemonic; }
  /// The explicit operands.
  unsigned visible() const { return I.operand_count_visible; }
  const ZydisDecodedOperand &op(unsigned N) const { return Ops[N]; }
  bool regOp(unsigned N, ZydisRegister R) const {
    return N < visible() && Ops[N].type == ZYDIS_OPERAND_TYPE_REGISTER && Ops[N].reg.value == R;
  }
  bool immOp(unsigned N, int64_t &V) const {
    if (N >= visible() || Ops[N].type != ZYDIS_OPERAND_TYPE_IMMEDIATE)
      return false;
    V = Ops[N].imm.value.s;
    return true;
  }
  bool segment(ZydisInstructionAttributes A) const { return (I.attributes & A) != 0; }
};

/// `%gs:0`: the call table's first entry, the region's base. Either
/// address size (no base, no index: a displacement of 0 is 0 in both).
bool isBaseCell(const ZydisDecodedOperand &O) {
  return O.type == ZYDIS_OPERAND_TYPE_MEMORY && O.mem.type == ZYDIS_MEMOP_TYPE_MEM &&
         O.mem.segment == ZYDIS_REGISTER_GS && O.mem.base == ZYDIS_REGISTER_NONE &&
         O.mem.index == ZYDIS_REGISTER_NONE && O.mem.disp.value == 0;
}

/// `addq %gs:0, %rR`: R confined to the region, given that its upper half
/// was cleared just before.
bool addsBase(const Instruction &X, ZydisRegister R) {
  return X.mnemonic() == ZYDIS_MNEMONIC_ADD && X.visible() == 2 && X.regOp(0, R) &&
         isBaseCell(X.op(1));
}

/// `andl $-32, %eR`: the low half of R aligned to a bundle, the upper half
/// cleared.
bool masksToBundle(const Instruction &X, ZydisRegister R32) {
  int64_t V = 0;
  return X.mnemonic() == ZYDIS_MNEMONIC_AND && X.visible() == 2 && X.regOp(0, R32) &&
         X.immOp(1, V) && uint32_t(V) == uint32_t(-int64_t(X86BundleBytes));
}

/// `movl %eR, %eR`: the upper half of R cleared.
bool clearsUpperHalf(const Instruction &X, ZydisRegister R32) {
  return X.mnemonic() == ZYDIS_MNEMONIC_MOV && X.visible() == 2 && X.regOp(0, R32) &&
         X.regOp(1, R32);
}

/// The 32-bit register of a 64-bit general register.
ZydisRegister low32(ZydisRegister R64) {
  // Zydis orders each class alike: rax..r15 as eax..r15d.
  return ZydisRegister(ZYDIS_REGISTER_EAX + (R64 - ZYDIS_REGISTER_RAX));
}

class Checker {
public:
  Checker(const SandboxLayout &Layout, const uint8_t *Code, size_t Bytes)
      : Layout(Layout), Code(Code), Bytes(Bytes), Start(Bytes + 1, false),
        Interior(Bytes + 1, false) {
    ZydisDecoderInit(&Decoder, Mode, ZYDIS_STACK_WIDTH_64);
    ZydisFormatterInit(&Formatter, ZYDIS_FORMATTER_STYLE_ATT);
  }

  bool run(Violation &Out);

private:
  const SandboxLayout &Layout;
  const uint8_t *Code;
  size_t Bytes;
  ZydisDecoder Decoder;
  ZydisFormatter Formatter;
  /// Instruction starts, and starts inside a guard sequence (not the
  /// sequence's first): what a direct branch may and may not land on.
  std::vector<bool> Start, Interior;
  /// The last three instructions (guard sequences), a ring: decoded in
  /// place, never copied. Newest is Window[Newest].
  Instruction Window[3];
  unsigned Newest = 0, Seen = 0;
  /// Direct branches: (offset of the branch, its target).
  std::vector<std::pair<size_t, int64_t>> Branches;
  /// A stack step waits for the next instruction to touch the stack.
  bool StepPending = false;

  const Instruction &back(unsigned N) const { return Window[(Newest + 3 - N) % 3]; }
  bool fail(const Instruction &X, Rule R, std::string Detail, Violation &Out);
  bool checkMemory(const Instruction &X, const ZydisDecodedOperand &O, Violation &Out);
  bool checkWrites(const Instruction &X, Violation &Out);
  bool checkBranch(const Instruction &X, Violation &Out);
  bool touchesStack(const Instruction &X) const;
  bool sameBundle(size_t A, size_t B) const { return A / X86BundleBytes == B / X86BundleBytes; }
  void markInterior(unsigned Back) {
    for (unsigned N = 0; N < Back; ++N)
      Interior[back(N).Offset] = true;
  }
};

bool Checker::fail(const Instruction &X, Rule R, std::string Detail, Violation &Out) {
  Violation V;
  V.Offset = X.Offset;
  V.Length = X.I.length;
  for (unsigned N = 0; N < 4 && X.Offset + N < Bytes; ++N)
    V.Word |= uint32_t(Code[X.Offset + N]) << (8 * N);
  V.Broken = R;
  char Text[256] = "";
  if (ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&Formatter, &X.I, X.Ops,
                                                   X.I.operand_count_visible, Text, sizeof Text,
                                                   ZYDIS_RUNTIME_ADDRESS_NONE, nullptr)))
    V.Instruction = Text;
  else
    V.Instruction = ZydisMnemonicGetString(X.I.mnemonic);
  V.Detail = std::move(Detail);
  Out = std::move(V);
  return false;
}

/// The stack, touched: an access through %rsp (explicit and small, or a
/// push, pop or call's own).
bool Checker::touchesStack(const Instruction &X) const {
  switch (X.mnemonic()) {
  case ZYDIS_MNEMONIC_PUSH:
  case ZYDIS_MNEMONIC_PUSHFQ:
  case ZYDIS_MNEMONIC_POP:
  case ZYDIS_MNEMONIC_CALL: return true;
  default: break;
  }
  for (unsigned N = 0; N < X.visible(); ++N) {
    const ZydisDecodedOperand &O = X.op(N);
    if (O.type == ZYDIS_OPERAND_TYPE_MEMORY && O.mem.type == ZYDIS_MEMOP_TYPE_MEM &&
        O.mem.base == ZYDIS_REGISTER_RSP && O.mem.index == ZYDIS_REGISTER_NONE &&
        X.I.address_width == 64 && !X.segment(ZYDIS_ATTRIB_HAS_SEGMENT) &&
        O.mem.disp.value >= -int64_t(X86StackTouchBytes) &&
        O.mem.disp.value <= int64_t(X86StackTouchBytes))
      return true;
  }
  return false;
}

bool Checker::checkMemory(const Instruction &X, const ZydisDecodedOperand &O, Violation &Out) {
  if (O.mem.type == ZYDIS_MEMOP_TYPE_AGEN)
    return true; // lea computes an address and reaches nothing
  if (O.mem.type != ZYDIS_MEMOP_TYPE_MEM)
    return fail(X, Rule::MemoryBase, "a vector-indexed or bound memory operand", Out);
  ZydisRegister Base = O.mem.base, Index = O.mem.index;
  int64_t Disp = O.mem.disp.value;
  if (O.mem.segment == ZYDIS_REGISTER_GS && X.segment(ZYDIS_ATTRIB_HAS_SEGMENT_GS)) {
    if (Base == ZYDIS_REGISTER_EIP || Base == ZYDIS_REGISTER_RIP)
      return fail(X, Rule::MemoryBase, "%gs: relative to the instruction pointer", Out);
    if (X.I.address_width == 32)
      return true; // base + any 32-bit address lies in the region
    // A displacement alone, 64-bit: a movabs's reaches anywhere.
    if (Base == ZYDIS_REGISTER_NONE && Index == ZYDIS_REGISTER_NONE && Disp >= 0 &&
        uint64_t(Disp) < Layout.RegionBytes)
      return true;
    return fail(X, Rule::MemoryBase,
                "%gs: with a 64-bit address (it needs the 0x67 prefix, a 32-bit address)", Out);
  }
  if (X.segment(ZYDIS_ATTRIB_HAS_SEGMENT))
    return fail(X, Rule::MemoryBase, "a segment other than %gs", Out);
  if (X.I.address_width != 64)
    return fail(X, Rule::MemoryBase, "a 32-bit address without %gs", Out);
  if (Base == ZYDIS_REGISTER_RSP) {
    if (Index != ZYDIS_REGISTER_NONE)
      return fail(X, Rule::MemoryBase, "%rsp with an index register", Out);
    if (Disp < -int64_t(X86StackReachBytes) || Disp > int64_t(X86StackReachBytes))
      return fail(X, Rule::MemoryBase,
                  "%rsp plus " + std::to_string(Disp) + ", beyond the guard zone's reach (" +
                      std::to_string(X86StackReachBytes) + " bytes)",
                  Out);
    return true;
  }
  if (Base == ZYDIS_REGISTER_RIP) {
    if (Index != ZYDIS_REGISTER_NONE)
      return fail(X, Rule::MemoryBase, "%rip with an index register", Out);
    int64_t Target = int64_t(Layout.CodeOffset) + int64_t(X.end()) + Disp;
    if (Target < 0 || uint64_t(Target) >= Layout.RegionBytes)
      return fail(X, Rule::RipOutside,
                  "it reaches " + std::to_string(Target) + " bytes from the region's base", Out);
    return true;
  }
  return fail(X, Rule::MemoryBase, "memory through a register without %gs", Out);
}

/// Writes to %rsp and to segment registers.
bool Checker::checkWrites(const Instruction &X, Violation &Out) {
  bool WritesSp = false;
  for (unsigned N = 0; N < X.I.operand_count; ++N) {
    const ZydisDecodedOperand &O = X.Ops[N];
    if (O.type != ZYDIS_OPERAND_TYPE_REGISTER || !(O.actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
      continue;
    if (isSegmentRegister(O.reg.value))
      return fail(X, Rule::WritesBase, "it writes a segment register", Out);
    if (full(O.reg.value) == ZYDIS_REGISTER_RSP)
      WritesSp = true;
  }
  if (X.I.meta.isa_ext == ZYDIS_ISA_EXT_RDWRFSGS)
    return fail(X, Rule::WritesBase, "it reads or writes a segment base", Out);
  if (!WritesSp)
    return true;
  ZydisMnemonic M = X.mnemonic();
  bool Explicit = false;
  for (unsigned N = 0; N < X.visible(); ++N)
    if (X.op(N).type == ZYDIS_OPERAND_TYPE_REGISTER &&
        full(X.op(N).reg.value) == ZYDIS_REGISTER_RSP &&
        (X.op(N).actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
      Explicit = true;
  // A push, pop or call moves %rsp by 8 and touches the stack there.
  if (!Explicit && (M == ZYDIS_MNEMONIC_PUSH || M == ZYDIS_MNEMONIC_POP ||
                    M == ZYDIS_MNEMONIC_PUSHFQ || M == ZYDIS_MNEMONIC_CALL))
    return true;
  int64_t V = 0;
  bool Step = false;
  if (X.visible() == 2 && X.regOp(0, ZYDIS_REGISTER_RSP) && X.immOp(1, V)) {
    if (M == ZYDIS_MNEMONIC_ADD || M == ZYDIS_MNEMONIC_SUB)
      Step = V >= -int64_t(X86StackStepBytes) && V <= int64_t(X86StackStepBytes);
    else if (M == ZYDIS_MNEMONIC_AND)
      Step = V < 0 && V >= -int64_t(X86StackStepBytes);
  } else if (M == ZYDIS_MNEMONIC_LEA && X.visible() == 2 && X.regOp(0, ZYDIS_REGISTER_RSP)) {
    const ZydisDecodedOperand &A = X.op(1);
    Step = A.mem.base == ZYDIS_REGISTER_RSP && A.mem.index == ZYDIS_REGISTER_NONE &&
           X.I.address_width == 64 && A.mem.disp.value >= -int64_t(X86StackStepBytes) &&
           A.mem.disp.value <= int64_t(X86StackStepBytes);
  }
  if (Step) {
    StepPending = true;
    return true;
  }
  // `movl %eR, %eR ; addq %gs:0, %rR ; movq %rR, %rsp`, in one bundle.
  if (M == ZYDIS_MNEMONIC_MOV && X.visible() == 2 && X.regOp(0, ZYDIS_REGISTER_RSP) &&
      X.op(1).type == ZYDIS_OPERAND_TYPE_REGISTER && isGpr64(X.op(1).reg.value) && Seen >= 3) {
    ZydisRegister R = X.op(1).reg.value;
    if (R != ZYDIS_REGISTER_RSP && clearsUpperHalf(back(2), low32(R)) && addsBase(back(1), R) &&
        sameBundle(back(2).Offset, X.Offset)) {
      markInterior(2);
      return true;
    }
  }
  return fail(X, Rule::WritesStack,
              "%rsp is written only as `movl %eR, %eR ; addq %gs:0, %rR ; movq %rR, %rsp`, by "
              "push, pop and call, or stepped by an immediate of at most " +
                  std::to_string(X86StackStepBytes) + " bytes",
              Out);
}

bool Checker::checkBranch(const Instruction &X, Violation &Out) {
  ZydisInstructionCategory C = X.I.meta.category;
  if (C == ZYDIS_CATEGORY_RET)
    return fail(X, Rule::IndirectBranch,
                "a return is `popq %r11` then the masked jump (`andl $-32, %r11d ; addq %gs:0, "
                "%r11 ; jmpq *%r11`)",
                Out);
  bool Call = C == ZYDIS_CATEGORY_CALL, Jump = C == ZYDIS_CATEGORY_UNCOND_BR;
  if (C != ZYDIS_CATEGORY_COND_BR && !Call && !Jump)
    return true;
  if (X.I.meta.branch_type == ZYDIS_BRANCH_TYPE_FAR)
    return fail(X, Rule::Forbidden, "a far branch", Out);
  if (Call && X.end() % X86BundleBytes)
    return fail(X, Rule::CallPosition,
                "it ends at " + std::to_string(X.end() % X86BundleBytes) +
                    " bytes into its bundle: its return address would not start one",
                Out);
  const ZydisDecodedOperand &O = X.op(0);
  if (X.visible() >= 1 && O.type == ZYDIS_OPERAND_TYPE_IMMEDIATE && O.imm.is_relative) {
    Branches.push_back({X.Offset, int64_t(X.end()) + O.imm.value.s});
    return true;
  }
  if (X.visible() >= 1 && O.type == ZYDIS_OPERAND_TYPE_MEMORY) {
    // The runtime's calls: `callq *%gs:slot`, through the read-only table.
    int64_t Disp = O.mem.disp.value;
    if (Call && O.mem.type == ZYDIS_MEMOP_TYPE_MEM && O.mem.segment == ZYDIS_REGISTER_GS &&
        X.segment(ZYDIS_ATTRIB_HAS_SEGMENT_GS) && O.mem.base == ZYDIS_REGISTER_NONE &&
        O.mem.index == ZYDIS_REGISTER_NONE && Disp >= 0 && Disp % 8 == 0 &&
        uint64_t(Disp) + 8 <= Layout.CallTableBytes)
      return true;
    return fail(X, Rule::RuntimeCall,
                "a branch through memory is only `callq *%gs:slot`, its slot in the call table "
                "(below " +
                    std::to_string(Layout.CallTableBytes) + ")",
                Out);
  }
  if (X.visible() >= 1 && O.type == ZYDIS_OPERAND_TYPE_REGISTER && isGpr64(O.reg.value) &&
      (Jump || Call) && Seen >= 3) {
    ZydisRegister R = O.reg.value;
    if (R != ZYDIS_REGISTER_RSP && masksToBundle(back(2), low32(R)) && addsBase(back(1), R) &&
        sameBundle(back(2).Offset, X.Offset)) {
      markInterior(2);
      return true;
    }
  }
  return fail(X, Rule::IndirectBranch,
              "an indirect branch is `andl $-32, %eR ; addq %gs:0, %rR ; jmpq *%rR` (or callq) "
              "in one bundle",
              Out);
}

bool Checker::run(Violation &Out) {
  size_t Offset = 0;
  Violation Found;
  bool Good = true;
  while (Offset < Bytes) {
    Instruction &X = Window[(Newest + 1) % 3];
    X.Offset = Offset;
    ZyanStatus St = ZydisDecoderDecodeFull(&Decoder, Code + Offset, Bytes - Offset, &X.I, X.Ops);
    if (!ZYAN_SUCCESS(St)) {
      // Would the bytes decode with more after them? Then they are cut.
      uint8_t Longer[ZYDIS_MAX_INSTRUCTION_LENGTH] = {};
      size_t Have = std::min<size_t>(Bytes - Offset, sizeof Longer);
      std::copy(Code + Offset, Code + Offset + Have, Longer);
      ZydisDecodedInstruction Probe;
      ZydisDecodedOperand ProbeOps[ZYDIS_MAX_OPERAND_COUNT];
      bool Cut = Have < sizeof Longer &&
                 ZYAN_SUCCESS(
                     ZydisDecoderDecodeFull(&Decoder, Longer, sizeof Longer, &Probe, ProbeOps)) &&
                 Probe.length > Have;
      Found.Offset = Offset;
      Found.Length = unsigned(Have);
      for (unsigned N = 0; N < 4 && Offset + N < Bytes; ++N)
        Found.Word |= uint32_t(Code[Offset + N]) << (8 * N);
      Found.Broken = Cut ? Rule::Truncated : Rule::Undecodable;
      Found.Instruction = Cut ? "partial instruction" : "unknown encoding";
      Found.Detail = Cut ? "the code ends inside an instruction"
                         : "not an x86-64 instruction the decoder knows";
      Good = false;
      break;
    }
    Start[Offset] = true;
    Newest = (Newest + 1) % 3;
    ++Seen;
    const Instruction &Y = X;
    Good = false;
    if (!sameBundle(Y.Offset, Y.end() - 1)) {
      fail(Y, Rule::CrossesBundle,
           "it crosses the " + std::to_string(X86BundleBytes) + "-byte bundle at " +
               std::to_string((Y.end() - 1) / X86BundleBytes * X86BundleBytes),
           Found);
      break;
    }
    if (StepPending && !touchesStack(Y)) {
      fail(back(1), Rule::WritesStack,
           "it steps the stack pointer and the next instruction does not touch the stack there "
           "(push, pop, call, or an access within " +
               std::to_string(X86StackTouchBytes) + " bytes of %rsp)",
           Found);
      break;
    }
    StepPending = false;
    ZydisMnemonic M = Y.mnemonic();
    // Multi-byte nops name memory they never reach; traps reach nothing.
    if (M == ZYDIS_MNEMONIC_NOP || isTrap(M)) {
      Offset = Y.end();
      Good = true;
      continue;
    }
    {
      // A REX before a legacy prefix, or a prefix repeated, is ignored by
      // the processor and read differently by decoders; compilers never
      // write one.
      bool Ignored = false;
      for (unsigned N = 0; N < Y.I.raw.prefix_count; ++N)
        Ignored |= Y.I.raw.prefixes[N].type == ZYDIS_PREFIX_TYPE_IGNORED;
      if (Ignored) {
        fail(Y, Rule::Undecodable, "a prefix the processor ignores", Found);
        break;
      }
      if (!admittedExtension(Y.I.meta.isa_ext) && Y.I.meta.isa_ext != ZYDIS_ISA_EXT_RDWRFSGS) {
        fail(Y, Rule::Forbidden,
             std::string("an instruction of the ") + ZydisISAExtGetString(Y.I.meta.isa_ext) +
                 " extension, which the sandbox does not admit",
             Found);
        break;
      }
      if (Y.I.attributes & ZYDIS_ATTRIB_IS_PRIVILEGED) {
        fail(Y, Rule::Forbidden, "a privileged instruction", Found);
        break;
      }
      if (const char *Why = forbiddenCategory(Y.I.meta.category)) {
        fail(Y, Rule::Forbidden, std::string("it ") + Why, Found);
        break;
      }
      if (Y.I.meta.category == ZYDIS_CATEGORY_INTERRUPT) {
        fail(Y, Rule::Forbidden, "a software interrupt", Found);
        break;
      }
      if (const char *Why = forbiddenMnemonic(M)) {
        fail(Y, Rule::Forbidden, std::string("it ") + Why, Found);
        break;
      }
      // A bit test of memory by a register's bit offset reaches up to 2^60
      // bytes past its operand, past any guard zone.
      bool BitTest = M == ZYDIS_MNEMONIC_BT || M == ZYDIS_MNEMONIC_BTS || M == ZYDIS_MNEMONIC_BTR ||
                     M == ZYDIS_MNEMONIC_BTC;
      if (BitTest && Y.visible() == 2 && Y.op(0).type == ZYDIS_OPERAND_TYPE_MEMORY &&
          Y.op(1).type == ZYDIS_OPERAND_TYPE_REGISTER) {
        fail(Y, Rule::Forbidden,
             "a bit test of memory by a register offset (it reaches past its operand)", Found);
        break;
      }
    }
    // A return writes %rsp too; it is refused as the branch it is.
    if ((Y.I.meta.category == ZYDIS_CATEGORY_RET && !checkBranch(Y, Found)) ||
        !checkWrites(Y, Found))
      break;
    bool MemoryGood = true;
    for (unsigned N = 0; N < Y.I.operand_count && MemoryGood; ++N) {
      const ZydisDecodedOperand &O = Y.Ops[N];
      if (O.type != ZYDIS_OPERAND_TYPE_MEMORY)
        continue;
      if (O.visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT) {
        bool BranchOperand = N == 0 && (Y.I.meta.category == ZYDIS_CATEGORY_CALL ||
                                        Y.I.meta.category == ZYDIS_CATEGORY_UNCOND_BR);
        if (!BranchOperand)
          MemoryGood = checkMemory(Y, O, Found);
      } else if (O.mem.base != ZYDIS_REGISTER_RSP) {
        MemoryGood = fail(Y, Rule::MemoryBase, "memory through a register no operand names", Found);
      }
    }
    if (!MemoryGood || !checkBranch(Y, Found))
      break;
    Offset = Y.end();
    Good = true;
  }
  // The end: nothing falls off it, no step is left untouched.
  if (Good && Seen) {
    const Instruction &Last = back(0);
    ZydisInstructionCategory C = Last.I.meta.category;
    bool Stops = isTrap(Last.mnemonic()) || C == ZYDIS_CATEGORY_UNCOND_BR;
    if (StepPending || !Stops) {
      fail(Last, Rule::EndsUnguarded,
           StepPending ? "the code ends right after a stack step"
                       : "the code ends in an instruction that falls through (end it with a "
                         "jump or ud2)",
           Found);
      Good = false;
    }
  }
  // Direct branches before the first violation: each lands on an
  // instruction of the code, not inside a guard sequence. The earliest
  // violation wins.
  size_t Limit = Good ? Bytes : Found.Offset;
  for (const auto &[At, Target] : Branches) {
    if (At >= Limit)
      break;
    Rule R = Rule::None;
    std::string Detail;
    if (Target < 0 || uint64_t(Target) >= Bytes) {
      R = Rule::BranchOutside;
      Detail = "its target " + std::to_string(Target) + " lies outside the code";
    } else if (!Start[size_t(Target)]) {
      R = Rule::BranchIntoGuard;
      Detail = "its target " + std::to_string(Target) + " is inside an instruction";
    } else if (Interior[size_t(Target)]) {
      R = Rule::BranchIntoGuard;
      Detail = "its target " + std::to_string(Target) + " is inside a guard sequence";
    }
    if (R == Rule::None)
      continue;
    Instruction B;
    B.Offset = At;
    ZydisDecoderDecodeFull(&Decoder, Code + At, Bytes - At, &B.I, B.Ops);
    fail(B, R, Detail, Found);
    Good = false;
    break;
  }
  if (!Good)
    Out = std::move(Found);
  return Good;
}

} // namespace

bool twochains::verify::verifyX86_64(const uint8_t *Code, size_t Bytes, const SandboxLayout &Layout,
                                     Violation &Out) {
  Checker C(Layout, Code, Bytes);
  return C.run(Out);
}
