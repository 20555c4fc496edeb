//===- X86_64.cpp - x86_64 relocations and trampolines --------------------------===//
#include "Target.h"
#include "Isa.h"

#include "llvm/BinaryFormat/ELF.h"

using namespace llvm::ELF;

namespace twochains::jamlink {
namespace {

class X86_64 final : public TargetInfo {
public:
  explicit X86_64(bool Sandboxed) : Sandboxed(Sandboxed) {}
  llvm::StringRef name() const override {
    return twochains::format::isaName(twochains::format::IsaX86_64);
  }
  uint16_t machine() const override { return EM_X86_64; }
  /// Sandboxed: functions start 32-byte bundles (masked branches land
  /// there), and so does each section of code.
  unsigned codeAlignment() const override { return Sandboxed ? 32 : 1; }
  bool gotpInDataPart() const override { return Sandboxed; }
  uint8_t textPadding() const override { return Sandboxed ? 0xcc : 0; }

  RelExpr classify(uint32_t Type) const override {
    switch (Type) {
    case R_X86_64_NONE:
      return RelExpr::None;
    case R_X86_64_PC32:
    case R_X86_64_PC64:
      return RelExpr::PC;
    case R_X86_64_PLT32:
      return RelExpr::Call;
    case R_X86_64_64:
      return RelExpr::Abs64;
    case R_X86_64_GOTPCREL:
      return RelExpr::GotPC;
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX:
      return RelExpr::GotPCCall;
    case R_X86_64_32:
    case R_X86_64_32S:
    case R_X86_64_16:
    case R_X86_64_8:
      return RelExpr::Absolute32;
    case R_X86_64_TPOFF32:
    case R_X86_64_TPOFF64:
    case R_X86_64_GOTTPOFF:
    case R_X86_64_TLSGD:
    case R_X86_64_TLSLD:
    case R_X86_64_DTPOFF32:
    case R_X86_64_DTPOFF64:
    case R_X86_64_GOTPC32_TLSDESC:
    case R_X86_64_TLSDESC_CALL:
      return RelExpr::ThreadLocal;
    default:
      return RelExpr::Unsupported;
    }
  }

  unsigned fieldSize(uint32_t Type) const override {
    switch (Type) {
    case R_X86_64_NONE:
      return 0;
    case R_X86_64_64:
    case R_X86_64_PC64:
      return 8;
    default:
      return 4;
    }
  }

  std::string relocate(uint8_t *Loc, uint32_t Type,
                       uint64_t Value) const override {
    switch (Type) {
    case R_X86_64_PC32:
    case R_X86_64_PLT32:
    case R_X86_64_GOTPCREL:
    case R_X86_64_GOTPCRELX:
    case R_X86_64_REX_GOTPCRELX: {
      std::string Err = checkSignedRange(int64_t(Value), 32);
      if (Err.empty())
        write32le(Loc, uint32_t(Value));
      return Err;
    }
    case R_X86_64_PC64:
    case R_X86_64_64:
      write64le(Loc, Value);
      return "";
    default:
      return "cannot apply relocation type " + std::to_string(Type);
    }
  }

  // call rel32 (E8), jmp rel32 (E9), jcc rel32 (0F 80..8F).
  bool isDirectBranch(const uint8_t *Sec, uint64_t Off,
                      uint32_t Type) const override {
    if (Type == R_X86_64_PLT32)
      return true;
    if (Type != R_X86_64_PC32)
      return false;
    if (Off >= 1 && (Sec[Off - 1] == 0xe8 || Sec[Off - 1] == 0xe9))
      return true;
    return Off >= 2 && Sec[Off - 2] == 0x0f && (Sec[Off - 1] & 0xf0) == 0x80;
  }

  // `call *G(%rip)` is FF 15 disp32, `jmp *G(%rip)` is FF 25 disp32. Both
  // become the 6-byte direct form: `addr32 call rel32` (67 E8) and
  // `jmp rel32; int3` (E9 ... CC), as lld relaxes them.
  bool relaxGotCall(uint8_t *Sec, uint64_t &Off) const override {
    if (Off < 2 || Sec[Off - 2] != 0xff)
      return false;
    if (Sec[Off - 1] == 0x15) {
      Sec[Off - 2] = 0x67;
      Sec[Off - 1] = 0xe8;
      return true;
    }
    if (Sec[Off - 1] == 0x25) {
      // The displacement moves one byte earlier and still ends where the
      // jump ends, so the addend stays -4.
      Sec[Off - 2] = 0xe9;
      Sec[Off + 3] = 0xcc;
      Off -= 1;
      return true;
    }
    return false;
  }

  // movq GOTP(%rip), %r11      4C 8B 1D disp32
  // jmpq *(8*i)(%r11)          41 FF A3 disp32
  // %r11 is the scratch register the psABI gives PLT trampolines.
  //
  // Sandboxed (docs/sandbox.md, "x86-64"), one 32-byte bundle:
  // movq GOTP(%rip), %r11          4C 8B 1D disp32
  // movq %gs:(8*i)(%r11d), %r11    65 67 4D 8B 9B disp32
  // andl $-32, %r11d               41 83 E3 E0
  // addq %gs:0, %r11               65 4C 03 1C 25 00 00 00 00
  // jmpq *%r11                     41 FF E3
  unsigned trampolineSize() const override { return Sandboxed ? 32 : 14; }
  void writeTrampoline(uint8_t *Buf, uint64_t TrampolineOffset, uint64_t GOTPOffset,
                 unsigned ImportIndex) const override {
    const uint8_t Load[] = {0x4c, 0x8b, 0x1d, 0, 0, 0, 0};
    std::copy(std::begin(Load), std::end(Load), Buf);
    write32le(Buf + 3, uint32_t(int64_t(GOTPOffset) - int64_t(TrampolineOffset + 7)));
    if (!Sandboxed) {
      const uint8_t Jump[] = {0x41, 0xff, 0xa3, 0, 0, 0, 0};
      std::copy(std::begin(Jump), std::end(Jump), Buf + 7);
      write32le(Buf + 10, uint32_t(ImportIndex * 8));
      return;
    }
    const uint8_t Confined[] = {0x65, 0x67, 0x4d, 0x8b, 0x9b, 0, 0, 0, 0, 0x41, 0x83, 0xe3, 0xe0,
                                0x65, 0x4c, 0x03, 0x1c, 0x25, 0, 0, 0, 0, 0x41, 0xff, 0xe3};
    std::copy(std::begin(Confined), std::end(Confined), Buf + 7);
    write32le(Buf + 12, uint32_t(ImportIndex * 8));
  }

private:
  bool Sandboxed;
};

} // namespace

std::unique_ptr<TargetInfo> createX86_64Target(bool Sandboxed) {
  return std::make_unique<X86_64>(Sandboxed);
}

} // namespace twochains::jamlink
