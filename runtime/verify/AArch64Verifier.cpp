//===- AArch64Verifier.cpp - One linear pass over sandboxed aarch64 code --===//
//
// Decode, then check: each 4-byte word is decoded into what the rules need
// (the general registers it writes, the memory it reaches and how, where it
// branches), and the rules are applied to that. The decoder knows the
// encodings a C compiler emits for user code (base instructions, loads and
// stores of every addressing mode, atomics, SIMD and floating point); every
// other encoding is rejected, so a gap in the decoder costs a rejected
// image, never an escape. The encodings are the Arm ARM's (DDI 0487),
// top-level groups first.
//
// The invariants (docs/sandbox.md): x27 holds the region's base, 4 GiB
// aligned, and is never written; x28 always holds an address inside the
// region, written only as `add x28, x27, wM, uxtw`; sp always lies inside
// the region or, after an immediate writeback, within the guard zone around
// it; x30 lies inside the region at every instruction but the one right
// after a write to it, which must confine it again. Every memory operand
// is one of these plus an immediate, or `[x27, wM, uxtw]`, and the 128 KiB
// guard zones around the region catch the immediates.
//
//===----------------------------------------------------------------------===//
#include "verify/Verify.h"

using namespace twochains::verify;

namespace {

constexpr uint32_t bits(uint32_t W, unsigned Hi, unsigned Lo) {
  return (W >> Lo) & ((1u << (Hi - Lo + 1)) - 1);
}
constexpr bool bit(uint32_t W, unsigned B) { return (W >> B) & 1; }
constexpr int64_t signExtend(uint32_t V, unsigned Bits) {
  return int32_t(V << (32 - Bits)) >> (32 - Bits);
}

constexpr unsigned Sp = 31;
constexpr uint32_t BlrX30 = 0xD63F03C0u;
constexpr uint32_t RmField = 0x1Fu << 16;

/// How an instruction reaches memory.
enum class Addressing {
  None,
  /// Base plus an immediate (or nothing), base unchanged.
  Immediate,
  /// Base plus an immediate, base moved by it (pre- or post-index).
  ImmediateWriteback,
  /// Base moved by a register (SIMD structure post-index).
  RegisterWriteback,
  /// Base plus a register, extended or shifted.
  RegisterOffset,
  /// The PC plus an immediate.
  Literal,
};

enum class Branch { None, Direct, Register, Return };

/// What the rules need to know of one instruction.
struct Decoded {
  /// Null: not an encoding the verifier knows.
  const char *Name = nullptr;
  bool Forbidden = false;
  /// General registers x0-x30 written (bit r), and whether sp is.
  uint32_t Writes = 0;
  bool WritesSp = false;
  Addressing Mode = Addressing::None;
  unsigned Base = 0;
  /// RegisterOffset: whether it is `[Xn, wM, uxtw]` with no shift.
  bool Uxtw32 = false;
  int64_t Displacement = 0; // Literal and Direct: bytes from this instruction
  Branch Kind = Branch::None;
  unsigned Target = 0; // Register, Return: the register branched through
};

/// Records a write to register field R: 31 is sp where SpForm, else the
/// zero register (not a write).
void writes(Decoded &D, unsigned R, bool SpForm = false) {
  if (R != 31)
    D.Writes |= 1u << R;
  else if (SpForm)
    D.WritesSp = true;
}

Decoded named(const char *Name) {
  Decoded D;
  D.Name = Name;
  return D;
}

Decoded forbidden(const char *Name) {
  Decoded D = named(Name);
  D.Forbidden = true;
  return D;
}

Decoded memory(const char *Name, Addressing Mode, unsigned Base) {
  Decoded D = named(Name);
  D.Mode = Mode;
  D.Base = Base;
  return D;
}

//===--------------------------------------------------------------------===//
// Data processing, immediate (op0 = 100x)
//===--------------------------------------------------------------------===//

Decoded decodeImmediate(uint32_t W) {
  unsigned Rd = bits(W, 4, 0), Sf = bit(W, 31);
  switch (bits(W, 25, 23)) {
  case 0b000:
  case 0b001: {
    Decoded D = named(bit(W, 31) ? "adrp" : "adr");
    writes(D, Rd);
    return D;
  }
  case 0b010: { // add/sub (immediate): Rd is sp unless flags are set
    Decoded D = named("add/sub (immediate)");
    writes(D, Rd, !bit(W, 29));
    return D;
  }
  case 0b011: return forbidden("addg/subg (memory tags)");
  case 0b100: { // logical (immediate): Rd is sp but for ANDS
    if (!Sf && bit(W, 22))
      return {};
    Decoded D = named("logical (immediate)");
    writes(D, Rd, bits(W, 30, 29) != 0b11);
    return D;
  }
  case 0b101: { // move wide
    if (bits(W, 30, 29) == 0b01 || (!Sf && bit(W, 22)))
      return {};
    Decoded D = named("movn/movz/movk");
    writes(D, Rd);
    return D;
  }
  case 0b110: { // bitfield
    if (bits(W, 30, 29) == 0b11 || Sf != bit(W, 22))
      return {};
    Decoded D = named("bitfield move");
    writes(D, Rd);
    return D;
  }
  default: { // extract
    if (bits(W, 30, 29) != 0 || bit(W, 21) || Sf != bit(W, 22))
      return {};
    Decoded D = named("extr");
    writes(D, Rd);
    return D;
  }
  }
}

//===--------------------------------------------------------------------===//
// Branches, exception generation and system instructions (op0 = 101x)
//===--------------------------------------------------------------------===//

/// System registers a jam may read and write: the flags and the floating-
/// point control and status (op0:op1:CRn:CRm:op2).
bool isUserRegister(uint32_t W) {
  uint32_t Reg = bits(W, 20, 5);
  constexpr auto reg = [](unsigned Op0, unsigned Op1, unsigned CRn, unsigned CRm, unsigned Op2) {
    return uint32_t((Op0 - 2) << 14 | Op1 << 11 | CRn << 7 | CRm << 3 | Op2) | 1u << 15;
  };
  return Reg == reg(3, 3, 4, 2, 0) || Reg == reg(3, 3, 4, 4, 0) || Reg == reg(3, 3, 4, 4, 1);
}

Decoded decodeBranchSystem(uint32_t W) {
  if (bits(W, 30, 26) == 0b00101) { // b, bl
    Decoded D = named(bit(W, 31) ? "bl" : "b");
    D.Kind = Branch::Direct;
    D.Displacement = signExtend(bits(W, 25, 0), 26) * 4;
    return D;
  }
  if (bits(W, 30, 25) == 0b011010) { // cbz, cbnz
    Decoded D = named("cbz/cbnz");
    D.Kind = Branch::Direct;
    D.Displacement = signExtend(bits(W, 23, 5), 19) * 4;
    return D;
  }
  if (bits(W, 30, 25) == 0b011011) { // tbz, tbnz
    Decoded D = named("tbz/tbnz");
    D.Kind = Branch::Direct;
    D.Displacement = signExtend(bits(W, 18, 5), 14) * 4;
    return D;
  }
  if (bits(W, 31, 24) == 0b01010100) { // b.cond; bit 4 set is bc.cond
    if (bit(W, 4))
      return {};
    Decoded D = named("b.cond");
    D.Kind = Branch::Direct;
    D.Displacement = signExtend(bits(W, 23, 5), 19) * 4;
    return D;
  }
  if (bits(W, 31, 24) == 0b11010100)
    return forbidden("exception generation (svc, hvc, smc, brk, hlt, dcps)");
  if (bits(W, 31, 22) == 0b1101010100) {    // system
    if ((W & 0xFFFFF01Fu) == 0xD503201Fu) { // hints
      unsigned Hint = bits(W, 11, 5);
      return Hint <= 1 ? named(Hint ? "yield" : "nop") : forbidden("hint");
    }
    if ((W & 0xFFFFF01Fu) == 0xD503301Fu) { // barriers
      unsigned Op2 = bits(W, 7, 5);
      if (Op2 == 0b010 || Op2 >= 0b100)
        return named("barrier (clrex, dsb, dmb, isb, sb)");
      return forbidden("barrier");
    }
    if (bit(W, 20)) { // mrs, msr (register)
      if (!isUserRegister(W))
        return forbidden(bit(W, 21) ? "mrs" : "msr");
      Decoded D = named(bit(W, 21) ? "mrs (nzcv, fpcr, fpsr)" : "msr (nzcv, fpcr, fpsr)");
      if (bit(W, 21))
        writes(D, bits(W, 4, 0));
      return D;
    }
    return forbidden("system instruction (sys, sysl, msr immediate)");
  }
  if (bits(W, 31, 25) == 0b1101011) { // branch to register
    unsigned Opc = bits(W, 24, 21);
    if (bits(W, 20, 16) != 0b11111 || bits(W, 15, 10) != 0 || bits(W, 4, 0) != 0 || Opc > 0b0010)
      return forbidden("branch to register (pointer authentication, eret, drps)");
    Decoded D = named(Opc == 0 ? "br" : Opc == 1 ? "blr" : "ret");
    D.Kind = Opc == 0b0010 ? Branch::Return : Branch::Register;
    D.Target = bits(W, 9, 5);
    return D;
  }
  return {};
}

//===--------------------------------------------------------------------===//
// Loads and stores (op0 = x1x0)
//===--------------------------------------------------------------------===//

/// The ordered and exclusive group: [Xn|SP] with no offset.
Decoded decodeExclusive(uint32_t W) {
  unsigned Rt = bits(W, 4, 0), Rt2 = bits(W, 14, 10), Rn = bits(W, 9, 5), Rs = bits(W, 20, 16);
  bool O2 = bit(W, 23), L = bit(W, 22), O1 = bit(W, 21);
  Decoded D = memory("load/store exclusive or ordered", Addressing::Immediate, Rn);
  if (O2 && O1) { // cas: Rs receives the old value
    D.Name = "cas";
    writes(D, Rs);
  } else if (O2) { // ldar, stlr, ldlar, stllr
    D.Name = L ? "ldar" : "stlr";
    if (L)
      writes(D, Rt);
  } else if (!bit(W, 31) && O1) { // casp: Rs and Rs+1 receive the old pair
    if (Rt2 != 0b11111 || Rs % 2 || Rt % 2)
      return {};
    D.Name = "casp";
    writes(D, Rs);
    writes(D, Rs + 1);
  } else if (L) { // ldxr, ldaxr, ldxp, ldaxp
    D.Name = O1 ? "ldxp" : "ldxr";
    writes(D, Rt);
    if (O1)
      writes(D, Rt2);
  } else { // stxr, stlxr, stxp, stlxp: Rs receives the status
    D.Name = O1 ? "stxp" : "stxr";
    writes(D, Rs);
  }
  return D;
}

/// Whether a load/store register form (size, V, opc) loads into a general
/// register, is a prefetch, or is unallocated.
enum class Access { Store, LoadGeneral, LoadVector, Prefetch, Unallocated };
Access registerAccess(uint32_t W, bool ImmediateWriteback) {
  unsigned Size = bits(W, 31, 30), Opc = bits(W, 23, 22);
  if (bit(W, 26)) {
    if (Opc >= 0b10 && Size != 0)
      return Access::Unallocated;
    return Opc & 1 ? Access::LoadVector : Access::Store;
  }
  switch (Opc) {
  case 0b00: return Access::Store;
  case 0b01: return Access::LoadGeneral;
  case 0b10:
    if (Size == 0b11)
      return ImmediateWriteback ? Access::Unallocated : Access::Prefetch;
    return Access::LoadGeneral;
  default: return Size <= 0b01 ? Access::LoadGeneral : Access::Unallocated;
  }
}

/// Loads and stores of one register (op0 = xx111).
Decoded decodeRegisterForm(uint32_t W) {
  unsigned Rt = bits(W, 4, 0), Rn = bits(W, 9, 5);
  bool V = bit(W, 26);
  Decoded D;
  bool Writeback = false;
  if (bit(W, 24)) {
    D = memory("ldr/str (unsigned immediate)", Addressing::Immediate, Rn);
  } else if (!bit(W, 21)) {
    switch (bits(W, 11, 10)) {
    case 0b00: D = memory("ldur/stur", Addressing::Immediate, Rn); break;
    case 0b01:
      D = memory("ldr/str (post-index)", Addressing::ImmediateWriteback, Rn);
      Writeback = true;
      break;
    case 0b11:
      D = memory("ldr/str (pre-index)", Addressing::ImmediateWriteback, Rn);
      Writeback = true;
      break;
    default: return forbidden("ldtr/sttr (unprivileged)");
    }
  } else if (bits(W, 11, 10) == 0b00) { // atomic memory operations
    if (V)
      return {};
    unsigned Opc = bits(W, 14, 12);
    bool O3 = bit(W, 15);
    if (O3 && Opc != 0) {
      if (Opc == 0b100 && bit(W, 23) && !bit(W, 22) && bits(W, 20, 16) == 0b11111) {
        D = memory("ldapr", Addressing::Immediate, Rn);
        writes(D, Rt);
        return D;
      }
      return forbidden("ld64b/st64b");
    }
    D = memory(O3 ? "swp" : "ldadd/ldclr/ldeor/ldset/ldmax/ldmin", Addressing::Immediate, Rn);
    writes(D, Rt);
    return D;
  } else if (bits(W, 11, 10) == 0b10) {
    unsigned Option = bits(W, 15, 13);
    if (!(Option & 0b010))
      return {};
    D = memory("ldr/str (register offset)", Addressing::RegisterOffset, Rn);
    D.Uxtw32 = Option == 0b010 && !bit(W, 12);
  } else {
    return forbidden("ldraa/ldrab (pointer authentication)");
  }
  switch (registerAccess(W, Writeback)) {
  case Access::Unallocated: return {};
  case Access::LoadGeneral: writes(D, Rt); break;
  default: break;
  }
  return D;
}

/// Load and store pairs (op0 = xx101).
Decoded decodePair(uint32_t W) {
  unsigned Opc = bits(W, 31, 30), Mode = bits(W, 25, 23), Rn = bits(W, 9, 5);
  bool V = bit(W, 26), L = bit(W, 22);
  if (Mode > 0b011 || Opc == 0b11)
    return {};
  if (!V && Opc == 0b01 && (!L || Mode == 0b000))
    return L ? Decoded{} : forbidden("stgp (memory tags)");
  bool Writeback = Mode == 0b001 || Mode == 0b011;
  Decoded D = memory(Mode == 0 ? "ldnp/stnp" : "ldp/stp",
                     Writeback ? Addressing::ImmediateWriteback : Addressing::Immediate, Rn);
  if (L && !V) {
    writes(D, bits(W, 4, 0));
    writes(D, bits(W, 14, 10));
  }
  return D;
}

Decoded decodeLoadStore(uint32_t W) {
  unsigned Rn = bits(W, 9, 5), Rt = bits(W, 4, 0);
  bool V = bit(W, 26);
  if (!bit(W, 31) && bits(W, 29, 25) == 0b00110) { // SIMD structures (bit 24: single)
    bool Post = bit(W, 23);
    if (!Post && bits(W, 20, 16) != 0)
      return {};
    if (!bit(W, 24) && bit(W, 21))
      return {};
    Addressing Mode = !Post                        ? Addressing::Immediate
                      : bits(W, 20, 16) == 0b11111 ? Addressing::ImmediateWriteback
                                                   : Addressing::RegisterWriteback;
    return memory("ld1-ld4/st1-st4 (structures)", Mode, Rn);
  }
  if (bits(W, 29, 24) == 0b001000)
    return decodeExclusive(W);
  if (bits(W, 29, 24) == 0b011001) { // ldapur, stlur
    if (bit(W, 21) || bits(W, 11, 10) != 0 || V)
      return {};
    Decoded D = memory("ldapur/stlur", Addressing::Immediate, Rn);
    unsigned Opc = bits(W, 23, 22);
    if (Opc == 0b11 && bits(W, 31, 30) >= 0b10)
      return {};
    if (Opc != 0)
      writes(D, Rt);
    return D;
  }
  if (bits(W, 29, 27) == 0b011 && bits(W, 25, 24) == 0b00) { // literal
    unsigned Opc = bits(W, 31, 30);
    if (V && Opc == 0b11)
      return {};
    Decoded D = named(Opc == 0b11 && !V ? "prfm (literal)" : "ldr (literal)");
    D.Mode = Addressing::Literal;
    D.Displacement = signExtend(bits(W, 23, 5), 19) * 4;
    if (!V && Opc != 0b11)
      writes(D, Rt);
    return D;
  }
  if (bits(W, 29, 27) == 0b101)
    return decodePair(W);
  if (bits(W, 29, 27) == 0b111)
    return decodeRegisterForm(W);
  return {};
}

//===--------------------------------------------------------------------===//
// Data processing, register (op0 = x101)
//===--------------------------------------------------------------------===//

Decoded decodeRegister(uint32_t W) {
  unsigned Rd = bits(W, 4, 0), Sf = bit(W, 31), Op3 = bits(W, 15, 10);
  Decoded D;
  if (!bit(W, 28)) {
    if (!bit(W, 24)) {
      if (!Sf && bit(W, 15))
        return {};
      D = named("logical (shifted register)");
    } else if (!bit(W, 21)) {
      if (bits(W, 23, 22) == 0b11 || (!Sf && bit(W, 15)))
        return {};
      D = named("add/sub (shifted register)");
    } else {
      if (bits(W, 23, 22) != 0 || bits(W, 12, 10) > 4)
        return {};
      D = named("add/sub (extended register)");
      writes(D, Rd, !bit(W, 29));
      return D;
    }
    writes(D, Rd);
    return D;
  }
  unsigned Op2 = bits(W, 24, 21);
  if (bit(W, 24)) { // three sources
    unsigned Op31 = bits(W, 23, 21);
    bool O0 = bit(W, 15);
    bool Ok = bits(W, 30, 29) == 0 && (Op31 == 0 || (Sf && (Op31 == 0b001 || Op31 == 0b101)) ||
                                       (Sf && !O0 && (Op31 == 0b010 || Op31 == 0b110)));
    if (!Ok)
      return {};
    D = named("madd/msub/smull/umulh");
  } else if (Op2 == 0b0000) {
    if (Op3 != 0)
      return forbidden("rmif/setf");
    D = named("adc/sbc");
  } else if (Op2 == 0b0010) { // conditional compare: flags only
    if (!bit(W, 29) || bit(W, 10) || bit(W, 4))
      return {};
    return named("ccmp/ccmn");
  } else if (Op2 == 0b0100) {
    if (bit(W, 29) || bit(W, 11))
      return {};
    D = named("csel/csinc/csinv/csneg");
  } else if (Op2 == 0b0110 && !bit(W, 30)) { // two sources
    if (bit(W, 29))
      return {};
    bool Ok = Op3 == 0b000010 || Op3 == 0b000011 || (Op3 >= 0b001000 && Op3 <= 0b001011) ||
              (Op3 >= 0b010000 && Op3 <= 0b010111);
    if (!Ok)
      return Op3 == 0b001100 || Op3 == 0 || Op3 == 0b000100 || Op3 == 0b000101
                 ? forbidden("pacga/subp/irg/gmi")
                 : Decoded{};
    D = named("udiv/sdiv/lslv/lsrv/asrv/rorv/crc32");
  } else if (Op2 == 0b0110) { // one source
    if (bit(W, 29))
      return {};
    if (bits(W, 20, 16) == 0b00001)
      return forbidden("pointer authentication");
    if (bits(W, 20, 16) != 0 || Op3 > 0b000101 || (!Sf && Op3 == 0b000011))
      return {};
    D = named("rbit/rev/clz/cls");
  } else {
    return {};
  }
  writes(D, Rd);
  return D;
}

//===--------------------------------------------------------------------===//
// SIMD and floating point (op0 = x111): only a few write general registers
//===--------------------------------------------------------------------===//

Decoded decodeVector(uint32_t W) {
  unsigned Rd = bits(W, 4, 0);
  if (!bit(W, 30) && bits(W, 28, 24) == 0b11110) {
    unsigned Opcode = bits(W, 18, 16);
    if (bit(W, 21) && bits(W, 15, 10) == 0) { // to and from integers
      Decoded D = named("fcvt*/fmov/scvtf/ucvtf (integer)");
      if (Opcode <= 0b001 || Opcode == 0b100 || Opcode == 0b101 || Opcode == 0b110)
        writes(D, Rd);
      return D;
    }
    if (!bit(W, 21)) { // to and from fixed point
      Decoded D = named("fcvtz*/scvtf/ucvtf (fixed point)");
      if (Opcode <= 0b001)
        writes(D, Rd);
      return D;
    }
  }
  if ((W & 0x9FE08400u) == 0x0E000400u && !bit(W, 29)) { // copy: smov, umov
    unsigned Imm4 = bits(W, 14, 11);
    Decoded D = named("simd copy (dup, ins, smov, umov)");
    if (Imm4 == 0b0101 || Imm4 == 0b0111)
      writes(D, Rd);
    return D;
  }
  return named("simd/fp data processing");
}

Decoded decode(uint32_t W) {
  unsigned Op0 = bits(W, 28, 25);
  if ((Op0 & 0b1110) == 0b1000)
    return decodeImmediate(W);
  if ((Op0 & 0b1110) == 0b1010)
    return decodeBranchSystem(W);
  if ((Op0 & 0b0101) == 0b0100)
    return decodeLoadStore(W);
  if ((Op0 & 0b0111) == 0b0101)
    return decodeRegister(W);
  if ((Op0 & 0b0111) == 0b0111)
    return decodeVector(W);
  if ((W >> 16) == 0) // udf: traps, as the zeros padding code do
    return named("udf");
  return {}; // reserved, SME, SVE
}

//===--------------------------------------------------------------------===//
// The rules
//===--------------------------------------------------------------------===//

bool isConfine(uint32_t W, unsigned Rd) { return (W & ~RmField) == aarch64Confine(Rd, 0); }

/// `ldr x30, [x27, #imm]`: a runtime call's first half.
bool isRuntimeCallLoad(uint32_t W) {
  return (W & 0xFFC003FFu) == (0xF9400000u | AArch64BaseRegister << 5 | AArch64LinkRegister);
}

/// What the next instruction must be.
enum class Expect { Anything, LinkGuard, RuntimeCall };

class Checker {
public:
  Checker(const SandboxLayout &Layout, uint64_t Bytes) : Layout(Layout), Bytes(Bytes) {}

  /// Checks the instruction W at Offset; false with Out set on a violation.
  bool check(uint64_t Offset, uint32_t W, Violation &Out);
  /// Checks the end of the code.
  bool finish(Violation &Out) const;

private:
  bool fail(Rule R, uint64_t Offset, uint32_t W, const char *Name, std::string Detail,
            Violation &Out) const {
    Out.Offset = Offset;
    Out.Word = W;
    Out.Broken = R;
    Out.Instruction = Name ? Name : "unknown encoding";
    Out.Detail = std::move(Detail);
    return false;
  }
  bool checkMemory(uint64_t Offset, uint32_t W, const Decoded &D, Violation &Out) const;
  bool checkWrites(uint64_t Offset, uint32_t W, const Decoded &D, Violation &Out);
  bool checkBranch(uint64_t Offset, uint32_t W, const Decoded &D, Violation &Out) const;

  const SandboxLayout &Layout;
  uint64_t Bytes;
  Expect Next = Expect::Anything;
  uint64_t PendingOffset = 0;
  uint32_t PendingWord = 0;
};

bool Checker::check(uint64_t Offset, uint32_t W, Violation &Out) {
  if (Next == Expect::LinkGuard) {
    Next = Expect::Anything;
    if (!isConfine(W, AArch64LinkRegister))
      return fail(Rule::UnguardedLink, PendingOffset, PendingWord, "write to x30",
                  "x30 is written and the next instruction is not `add x30, x27, w30, uxtw`", Out);
    return true;
  }
  if (Next == Expect::RuntimeCall) {
    Next = Expect::Anything;
    if (W != BlrX30)
      return fail(Rule::RuntimeCall, PendingOffset, PendingWord, "ldr x30, [x27, #slot]",
                  "a runtime call's entry is loaded into x30 and the next instruction is not "
                  "`blr x30`",
                  Out);
    return true;
  }
  Decoded D = decode(W);
  if (!D.Name)
    return fail(Rule::Undecodable, Offset, W, nullptr, "the verifier does not know this encoding",
                Out);
  if (D.Forbidden)
    return fail(Rule::Forbidden, Offset, W, D.Name, "never admitted in a sandboxed jam", Out);
  return checkMemory(Offset, W, D, Out) && checkWrites(Offset, W, D, Out) &&
         checkBranch(Offset, W, D, Out);
}

bool Checker::checkMemory(uint64_t Offset, uint32_t W, const Decoded &D, Violation &Out) const {
  auto IsConfinedBase = [](unsigned R) {
    return R == AArch64AddressRegister || R == Sp || R == AArch64BaseRegister;
  };
  switch (D.Mode) {
  case Addressing::None: return true;
  case Addressing::Literal: {
    int64_t At = int64_t(Offset) + D.Displacement;
    if (At < 0 || uint64_t(At) >= Bytes)
      return fail(Rule::LiteralOutside, Offset, W, D.Name,
                  "reads at offset " + std::to_string(At) + ", outside the code", Out);
    return true;
  }
  case Addressing::Immediate:
    if (!IsConfinedBase(D.Base))
      return fail(Rule::MemoryBase, Offset, W, D.Name,
                  "its base is x" + std::to_string(D.Base) + ", not x28, sp or x27", Out);
    return true;
  case Addressing::ImmediateWriteback:
    if (D.Base != Sp)
      return fail(Rule::Writeback, Offset, W, D.Name,
                  "moves its base x" + std::to_string(D.Base) + "; only sp may be moved so", Out);
    return true;
  case Addressing::RegisterWriteback:
    return fail(Rule::Writeback, Offset, W, D.Name, "moves its base by a register", Out);
  case Addressing::RegisterOffset:
    if (D.Base != AArch64BaseRegister || !D.Uxtw32)
      return fail(Rule::MemoryBase, Offset, W, D.Name,
                  "a register offset is allowed only as [x27, wM, uxtw]", Out);
    return true;
  }
  return true;
}

bool Checker::checkWrites(uint64_t Offset, uint32_t W, const Decoded &D, Violation &Out) {
  if (D.Writes & (1u << AArch64BaseRegister))
    return fail(Rule::WritesBase, Offset, W, D.Name, "writes x27, the region's base", Out);
  if ((D.Writes & (1u << AArch64AddressRegister)) && !isConfine(W, AArch64AddressRegister))
    return fail(Rule::WritesAddress, Offset, W, D.Name,
                "writes x28 other than as `add x28, x27, wM, uxtw`", Out);
  if (D.WritesSp && !isConfine(W, Sp))
    return fail(Rule::WritesStack, Offset, W, D.Name,
                "writes sp other than as `add sp, x27, wM, uxtw`", Out);
  if ((D.Writes & (1u << AArch64LinkRegister)) && !isConfine(W, AArch64LinkRegister)) {
    PendingOffset = Offset;
    PendingWord = W;
    if (isRuntimeCallLoad(W)) {
      uint64_t Slot = uint64_t(bits(W, 21, 10)) * 8;
      if (Slot >= Layout.CallTableBytes)
        return fail(Rule::RuntimeCall, Offset, W, D.Name,
                    "loads x30 from [x27, #" + std::to_string(Slot) + "], beyond the call table (" +
                        std::to_string(Layout.CallTableBytes) + " bytes)",
                    Out);
      Next = Expect::RuntimeCall;
    } else {
      Next = Expect::LinkGuard;
    }
  }
  return true;
}

bool Checker::checkBranch(uint64_t Offset, uint32_t W, const Decoded &D, Violation &Out) const {
  switch (D.Kind) {
  case Branch::None: return true;
  case Branch::Direct: {
    int64_t At = int64_t(Offset) + D.Displacement;
    if (At < 0 || uint64_t(At) >= Bytes)
      return fail(Rule::BranchOutside, Offset, W, D.Name,
                  "lands at offset " + std::to_string(At) + ", outside the code", Out);
    return true;
  }
  case Branch::Register:
    if (D.Target != AArch64AddressRegister)
      return fail(Rule::IndirectBranch, Offset, W, D.Name,
                  "branches through x" + std::to_string(D.Target) + ", not x28", Out);
    return true;
  case Branch::Return:
    if (D.Target != AArch64LinkRegister)
      return fail(Rule::IndirectBranch, Offset, W, D.Name,
                  "returns through x" + std::to_string(D.Target) + ", not x30", Out);
    return true;
  }
  return true;
}

bool Checker::finish(Violation &Out) const {
  if (Next == Expect::Anything)
    return true;
  return fail(Rule::EndsUnguarded, PendingOffset, PendingWord, "write to x30",
              "the code ends before the sequence this instruction begins", Out);
}

} // namespace

bool twochains::verify::verifyAArch64(const uint8_t *Code, size_t Bytes,
                                      const SandboxLayout &Layout, Violation &Out) {
  Violation Found;
  if (Bytes % 4) {
    Found.Offset = Bytes & ~size_t(3);
    Found.Broken = Rule::Truncated;
    Found.Instruction = "partial instruction";
    Found.Detail = "the code is " + std::to_string(Bytes) + " bytes, not whole instructions";
    Out = std::move(Found);
    return false;
  }
  Checker C(Layout, Bytes);
  for (size_t Offset = 0; Offset < Bytes; Offset += 4) {
    uint32_t W = uint32_t(Code[Offset]) | uint32_t(Code[Offset + 1]) << 8 |
                 uint32_t(Code[Offset + 2]) << 16 | uint32_t(Code[Offset + 3]) << 24;
    if (!C.check(Offset, W, Found)) {
      Out = std::move(Found);
      return false;
    }
  }
  if (!C.finish(Found)) {
    Out = std::move(Found);
    return false;
  }
  return true;
}
