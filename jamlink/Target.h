//===- Target.h - What jamlink needs to know about an ISA -----------------===//
//
// As in lld/ELF: a relocation is first classified into a target-independent
// RelExpr (how its value is computed), then applied by the target (how the
// value is encoded into the instruction or data). Trampolines that reach an
// import through GOTP are written by the target as well.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_TARGET_H
#define TWOCHAINS_JAMLINK_TARGET_H

#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <memory>
#include <string>

namespace twochains::jamlink {

enum class RelExpr {
  None,          // nothing to do
  PC,            // S + A - P
  Abs64,         // S + A, absolute: a fixup applied on arrival
  Call,          // S + A - P to a function; through a trampoline if S is an import
  GotPC,         // G + A - P, G = the symbol's GOT slot in the image
  GotPCCall,     // as GotPC, but the instruction is an indirect call or
                 // jump the target may relax into a direct one to a trampoline
  PagePC,        // Page(S + A) - Page(P): ADRP, rewritten to ADR
  GotPagePC,     // Page(G) - Page(P): ADRP of a GOT slot, rewritten to ADR
  Lo12,          // (S + A) & 0xfff, scaled by the access size
  GotLo12,       // G & 0xfff, scaled
  ThreadLocal,   // cannot travel: the receiver thread's TLS is elsewhere
  Absolute32,    // cannot travel: a 32-bit (or narrower) absolute address
  Unsupported,   // anything else
};

class TargetInfo {
public:
  virtual ~TargetInfo() = default;

  virtual llvm::StringRef name() const = 0;     // "x86_64", "aarch64"
  virtual uint16_t machine() const = 0;         // EM_*
  /// Alignment code needs for correctness (not speed).
  virtual unsigned codeAlignment() const = 0;

  virtual RelExpr classify(uint32_t Type) const = 0;

  /// Bytes a relocation of Type reads and writes at its offset.
  virtual unsigned fieldSize(uint32_t Type) const = 0;

  /// Writes Value into the field at Loc for a relocation of Type. Returns an
  /// empty string, or why it cannot (out of range, misaligned).
  virtual std::string relocate(uint8_t *Loc, uint32_t Type,
                               uint64_t Value) const = 0;

  /// x86_64 reaches calls through PC32 too: true if the bytes before Loc
  /// (LocOffset bytes into Section) make a direct call or jump whose rel32
  /// is at Loc, so the call may go to a trampoline.
  virtual bool isDirectBranch(const uint8_t *Section, uint64_t LocOffset,
                              uint32_t Type) const {
    return classify(Type) == RelExpr::Call;
  }

  /// For RelExpr::GotPCCall: turns the indirect `call/jmp *G(%rip)` whose
  /// displacement is at LocOffset into a direct call/jmp, and moves
  /// LocOffset to the new displacement, which is then written like a Call's
  /// (same addend). Returns false if the instruction is not one it knows;
  /// it then stays a load from the GOT slot.
  virtual bool relaxGotCall(uint8_t *Section, uint64_t &LocOffset) const {
    return false;
  }

  /// A page-relative reference that must stay page-relative (aarch64: an
  /// ADRP into the data part, beyond ADR's reach), Value = Page(S + A) -
  /// Page(P); the image is then placed on a 4 KiB boundary. Empty, or why not.
  virtual std::string relocatePage(uint8_t *Loc, uint32_t Type, uint64_t Value) const {
    return "page-relative references are not used on this target";
  }

  /// A trampoline jumps to import ImportIndex: loads the table address from GOTP
  /// and jumps through entry ImportIndex, clobbering only registers the ABI
  /// lets a call clobber before the callee runs.
  virtual unsigned trampolineSize() const = 0;
  virtual void writeTrampoline(uint8_t *Buf, uint64_t TrampolineOffset,
                         uint64_t GOTPOffset, unsigned ImportIndex) const = 0;

  /// Sandboxed x86-64 keeps the GOTP cell at the start of the data part:
  /// a confined jump may land on the text's first byte, which must be code
  /// (aarch64's cell, once filled, decodes as two traps).
  virtual bool gotpInDataPart() const { return false; }
  /// The byte that fills the text between and after sections: zero, or a
  /// trap where zeros would decode as an instruction (x86-64: int3).
  virtual uint8_t textPadding() const { return 0; }
};

/// Returns the target for an ELF e_machine, or null.
/// Sandboxed: the target writes the sandbox's forms (docs/sandbox.md).
std::unique_ptr<TargetInfo> createTarget(uint16_t Machine, bool Sandboxed = false);
std::unique_ptr<TargetInfo> createX86_64Target(bool Sandboxed = false);
std::unique_ptr<TargetInfo> createAArch64Target(bool Sandboxed = false);

/// Helpers shared by the targets.
std::string checkSignedRange(int64_t V, unsigned Bits);
void write32le(uint8_t *P, uint32_t V);
uint32_t read32le(const uint8_t *P);
void write64le(uint8_t *P, uint64_t V);

} // namespace twochains::jamlink

#endif
