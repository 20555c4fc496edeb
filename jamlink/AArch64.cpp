//===- AArch64.cpp - aarch64 relocations and trampolines ------------------------===//
//
// An image may land at any 64-byte boundary, so page-relative ADRP cannot
// stay: each ADRP becomes an ADR (byte-exact, +-1 MiB) of the same page as
// laid out in the image. Every :lo12: that pairs with it keeps its value, so
// an ADRP shared by several loads stays correct. An ADRP into the data
// part, which lies JamDataDistance away, stays an ADRP (+-4 GiB), and the
// image asks to be placed on a 4 KiB boundary so that pages line up.
//
//===----------------------------------------------------------------------===//
#include "Target.h"
#include "Isa.h"

#include "llvm/BinaryFormat/ELF.h"

using namespace llvm::ELF;

namespace twochains::jamlink {
namespace {

uint32_t withImm19(uint32_t Insn, int64_t Words) {
  return (Insn & ~(0x7ffffu << 5)) | ((uint32_t(Words) & 0x7ffff) << 5);
}

uint32_t asADR(uint32_t Insn, int64_t Bytes) {
  // ADR and ADRP differ in bit 31; immlo is bits 30:29, immhi bits 23:5.
  Insn &= ~(1u << 31);
  Insn &= ~((3u << 29) | (0x7ffffu << 5));
  uint32_t Imm = uint32_t(Bytes) & 0x1fffff;
  return Insn | ((Imm & 3) << 29) | ((Imm >> 2) << 5);
}

class AArch64 final : public TargetInfo {
public:
  explicit AArch64(bool Sandboxed) : Sandboxed(Sandboxed) {}

  llvm::StringRef name() const override {
    return twochains::format::isaName(twochains::format::IsaAArch64);
  }
  uint16_t machine() const override { return EM_AARCH64; }
  unsigned codeAlignment() const override { return 4; }

  RelExpr classify(uint32_t Type) const override {
    switch (Type) {
    case R_AARCH64_NONE:
      return RelExpr::None;
    case R_AARCH64_PREL64:
    case R_AARCH64_PREL32:
    case R_AARCH64_PREL16:
    case R_AARCH64_ADR_PREL_LO21:
    case R_AARCH64_LD_PREL_LO19:
    case R_AARCH64_CONDBR19:
    case R_AARCH64_TSTBR14:
      return RelExpr::PC;
    case R_AARCH64_CALL26:
    case R_AARCH64_JUMP26:
      return RelExpr::Call;
    case R_AARCH64_ABS64:
      return RelExpr::Abs64;
    case R_AARCH64_ADR_PREL_PG_HI21:
    case R_AARCH64_ADR_PREL_PG_HI21_NC:
      return RelExpr::PagePC;
    case R_AARCH64_ADR_GOT_PAGE:
      return RelExpr::GotPagePC;
    case R_AARCH64_ADD_ABS_LO12_NC:
    case R_AARCH64_LDST8_ABS_LO12_NC:
    case R_AARCH64_LDST16_ABS_LO12_NC:
    case R_AARCH64_LDST32_ABS_LO12_NC:
    case R_AARCH64_LDST64_ABS_LO12_NC:
    case R_AARCH64_LDST128_ABS_LO12_NC:
      return RelExpr::Lo12;
    case R_AARCH64_LD64_GOT_LO12_NC:
      return RelExpr::GotLo12;
    case R_AARCH64_GOT_LD_PREL19:
      return RelExpr::GotPC;
    case R_AARCH64_ABS32:
    case R_AARCH64_ABS16:
    case R_AARCH64_MOVW_UABS_G0:
    case R_AARCH64_MOVW_UABS_G0_NC:
    case R_AARCH64_MOVW_UABS_G1:
    case R_AARCH64_MOVW_UABS_G1_NC:
    case R_AARCH64_MOVW_UABS_G2:
    case R_AARCH64_MOVW_UABS_G2_NC:
    case R_AARCH64_MOVW_UABS_G3:
      return RelExpr::Absolute32;
    default:
      if (Type >= R_AARCH64_TLSGD_ADR_PREL21 && Type <= R_AARCH64_TLSDESC_CALL)
        return RelExpr::ThreadLocal;
      return RelExpr::Unsupported;
    }
  }

  unsigned fieldSize(uint32_t Type) const override {
    switch (Type) {
    case R_AARCH64_NONE:
      return 0;
    case R_AARCH64_ABS64:
    case R_AARCH64_PREL64:
      return 8;
    case R_AARCH64_PREL16:
    case R_AARCH64_ABS16:
      return 2;
    default:
      return 4;
    }
  }

  std::string relocatePage(uint8_t *Loc, uint32_t Type, uint64_t Value) const override {
    int64_t V = int64_t(Value);
    if (Type != R_AARCH64_ADR_PREL_PG_HI21 && Type != R_AARCH64_ADR_PREL_PG_HI21_NC)
      return "not an ADRP";
    if (V & 0xfff)
      return "page delta is not a whole page";
    std::string Err = checkSignedRange(V, 33);
    if (!Err.empty())
      return Err;
    uint32_t Imm = uint32_t(V >> 12) & 0x1fffff;
    uint32_t Insn = read32le(Loc) & ~((3u << 29) | (0x7ffffu << 5));
    write32le(Loc, Insn | ((Imm & 3) << 29) | ((Imm >> 2) << 5));
    return "";
  }

  std::string relocate(uint8_t *Loc, uint32_t Type,
                       uint64_t Value) const override {
    int64_t V = int64_t(Value);
    // Only instruction fields are 4 bytes wide; a 2-byte field may end the
    // image, so it must not be read as 4.
    uint32_t Insn = fieldSize(Type) >= 4 ? read32le(Loc) : 0;
    std::string Err;
    switch (Type) {
    case R_AARCH64_ABS64:
    case R_AARCH64_PREL64:
      write64le(Loc, Value);
      return "";
    case R_AARCH64_PREL32:
      if ((Err = checkSignedRange(V, 32)).empty())
        write32le(Loc, uint32_t(V));
      return Err;
    case R_AARCH64_PREL16:
      if ((Err = checkSignedRange(V, 16)).empty()) {
        Loc[0] = uint8_t(V);
        Loc[1] = uint8_t(V >> 8);
      }
      return Err;
    case R_AARCH64_ADR_PREL_LO21:
      if ((Err = checkSignedRange(V, 21)).empty())
        write32le(Loc, asADR(Insn, V));
      return Err;
    case R_AARCH64_ADR_PREL_PG_HI21:
    case R_AARCH64_ADR_PREL_PG_HI21_NC:
    case R_AARCH64_ADR_GOT_PAGE:
      // Value is Page(target) - P, in bytes: an ADR of the page.
      if ((Err = checkSignedRange(V, 21)).empty())
        write32le(Loc, asADR(Insn, V));
      return Err;
    case R_AARCH64_LD_PREL_LO19:
    case R_AARCH64_CONDBR19:
    case R_AARCH64_GOT_LD_PREL19:
      if (V & 3)
        return "target is not 4-byte aligned";
      if ((Err = checkSignedRange(V, 21)).empty())
        write32le(Loc, withImm19(Insn, V >> 2));
      return Err;
    case R_AARCH64_TSTBR14:
      if (V & 3)
        return "target is not 4-byte aligned";
      if ((Err = checkSignedRange(V, 16)).empty())
        write32le(Loc, (Insn & ~(0x3fffu << 5)) |
                           ((uint32_t(V >> 2) & 0x3fff) << 5));
      return Err;
    case R_AARCH64_CALL26:
    case R_AARCH64_JUMP26:
      if (V & 3)
        return "target is not 4-byte aligned";
      if ((Err = checkSignedRange(V, 28)).empty())
        write32le(Loc, (Insn & ~0x3ffffffu) | (uint32_t(V >> 2) & 0x3ffffff));
      return Err;
    case R_AARCH64_ADD_ABS_LO12_NC:
    case R_AARCH64_LDST8_ABS_LO12_NC:
    case R_AARCH64_LDST16_ABS_LO12_NC:
    case R_AARCH64_LDST32_ABS_LO12_NC:
    case R_AARCH64_LDST64_ABS_LO12_NC:
    case R_AARCH64_LDST128_ABS_LO12_NC:
    case R_AARCH64_LD64_GOT_LO12_NC: {
      unsigned Shift = 0;
      switch (Type) {
      case R_AARCH64_LDST16_ABS_LO12_NC: Shift = 1; break;
      case R_AARCH64_LDST32_ABS_LO12_NC: Shift = 2; break;
      case R_AARCH64_LDST64_ABS_LO12_NC:
      case R_AARCH64_LD64_GOT_LO12_NC: Shift = 3; break;
      case R_AARCH64_LDST128_ABS_LO12_NC: Shift = 4; break;
      default: break;
      }
      uint64_t Lo12 = Value & 0xfff;
      if (Lo12 & ((1u << Shift) - 1))
        return "low 12 bits are not aligned to the access size";
      write32le(Loc, (Insn & ~(0xfffu << 10)) |
                         (uint32_t(Lo12 >> Shift) << 10));
      return "";
    }
    default:
      return "cannot apply relocation type " + std::to_string(Type);
    }
  }

  // ldr x16, GOTP         (LDR literal)
  // ldr x16, [x16, #8*i]
  // br  x16
  // x16 (IP0) is the register the AAPCS64 gives veneers and PLT trampolines.
  // Sandboxed (docs/sandbox.md), each address is confined first:
  // ldr x16, GOTP ; add x28, x27, w16, uxtw ; ldr x16, [x28, #8*i]
  // add x28, x27, w16, uxtw ; br x28
  unsigned trampolineSize() const override { return Sandboxed ? 20 : 12; }
  void writeTrampoline(uint8_t *Buf, uint64_t TrampolineOffset, uint64_t GOTPOffset,
                 unsigned ImportIndex) const override {
    int64_t Rel = int64_t(GOTPOffset) - int64_t(TrampolineOffset);
    write32le(Buf, withImm19(0x58000010, Rel >> 2));
    if (!Sandboxed) {
      write32le(Buf + 4, 0xf9400210 | ((ImportIndex & 0xfff) << 10));
      write32le(Buf + 8, 0xd61f0200);
      return;
    }
    constexpr uint32_t ConfineX16 = 0x8B30437C; // add x28, x27, w16, uxtw
    write32le(Buf + 4, ConfineX16);
    write32le(Buf + 8, 0xf9400390 | ((ImportIndex & 0xfff) << 10));
    write32le(Buf + 12, ConfineX16);
    write32le(Buf + 16, 0xd61f0380); // br x28
  }

private:
  bool Sandboxed;
};

} // namespace

std::unique_ptr<TargetInfo> createAArch64Target(bool Sandboxed) {
  return std::make_unique<AArch64>(Sandboxed);
}

} // namespace twochains::jamlink
