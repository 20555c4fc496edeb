//===- Verify.h - The verifier of sandboxed jam code ----------------------===//
//
// A jam built with --sandbox keeps every load, store and branch inside its
// tenant's region by fixed instruction patterns (docs/sandbox.md); the
// receiver runs such code only once this verifier, in one linear pass over
// every instruction, has shown that it does. It trusts nothing about the
// bytes: what it cannot decode, it rejects.
//
// The verifier depends on nothing else of the runtime (the code cache and
// twochains-verify call it), so that it stays small enough to be read whole.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_VERIFY_VERIFY_H
#define TWOCHAINS_RUNTIME_VERIFY_VERIFY_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace twochains::verify {

/// The rules a sandboxed image keeps, each one a reason for rejecting it.
/// docs/sandbox.md states each rule and why the sandbox needs it.
enum class Rule : unsigned {
  None = 0,
  /// Code is whole instructions (4 bytes on aarch64).
  Truncated,
  /// An encoding the verifier does not know, or one it knows and never
  /// admits (system registers, exceptions, pointer authentication, SVE,
  /// memory tagging, unprivileged access, cache maintenance).
  Undecodable,
  Forbidden,
  /// The region's base register (aarch64: x27) is never written.
  WritesBase,
  /// The address register (x28) is only written as base + 32-bit offset.
  WritesAddress,
  /// The stack pointer is only written as base + 32-bit offset, or by a
  /// load or store through it that moves it by an immediate.
  WritesStack,
  /// The link register (x30), written other than by a call, is confined by
  /// the very next instruction, or is a runtime call's entry.
  UnguardedLink,
  /// A runtime call is `ldr x30, [x27, #slot]` then `blr x30`, its slot
  /// inside the call table.
  RuntimeCall,
  /// Memory is reached through the address register, the stack pointer or
  /// the base (immediate offsets), or as base + 32-bit register offset.
  MemoryBase,
  /// Only a load or store through the stack pointer moves its base.
  Writeback,
  /// A PC-relative load reads inside the code.
  LiteralOutside,
  /// A direct branch lands inside the code.
  BranchOutside,
  /// An indirect branch goes through the address register; a return
  /// through the link register.
  IndirectBranch,
  /// The code ends in the middle of a guard sequence (x86-64: or in an
  /// instruction that falls through).
  EndsUnguarded,
  /// x86-64: a %rip-relative operand reaches inside the region.
  RipOutside,
  /// x86-64: no instruction crosses a 32-byte bundle.
  CrossesBundle,
  /// x86-64: a direct branch lands on an instruction's start, not inside a
  /// guard sequence.
  BranchIntoGuard,
  /// x86-64: a call ends at its bundle's end, so that the return address a
  /// masked return jumps to starts a bundle.
  CallPosition,
};

/// A rule's short name (as twochains-verify prints it: "writes-base").
const char *ruleName(Rule R);
/// What the rule asks, in a sentence.
const char *ruleText(Rule R);

/// What the verifier knows of the region the code will run in.
struct SandboxLayout {
  /// The runtime's call table, read-only, at the region's base: a runtime
  /// call's slot lies below this.
  uint32_t CallTableBytes = 4096;
  /// Where the code's first byte lies from the region's base (x86-64's
  /// %rip-relative operands must reach inside the region); the first
  /// image's place unless the code is verified as installed.
  uint64_t CodeOffset = 1u << 20;
  uint64_t RegionBytes = uint64_t(4) << 30;
};

/// The first violation found: where, the instruction, and which rule.
struct Violation {
  uint64_t Offset = 0;
  /// The instruction's first bytes (aarch64: its word), and its length.
  uint32_t Word = 0;
  unsigned Length = 4;
  Rule Broken = Rule::None;
  /// The instruction's kind as the decoder saw it ("ldr (register
  /// offset)"), and what about it breaks the rule.
  std::string Instruction, Detail;
};

/// Verifies Bytes bytes of aarch64 code that will run at the start of a
/// sandboxed image's text. True if every instruction keeps every rule;
/// otherwise false with Out describing the first violation (Out is left
/// alone on success).
bool verifyAArch64(const uint8_t *Code, size_t Bytes, const SandboxLayout &Layout, Violation &Out);

/// Verifies Bytes bytes of x86-64 code that will run at Layout.CodeOffset
/// of a region, the first byte starting a bundle; as verifyAArch64.
bool verifyX86_64(const uint8_t *Code, size_t Bytes, const SandboxLayout &Layout, Violation &Out);

/// x86-64's bundles; how far %rsp may be stepped by an immediate (the next
/// instruction must touch the stack within X86StackTouchBytes of it), and
/// how far from %rsp an operand may reach. With %rsp inside the region but
/// for a touch's slack, every access lands inside it or in the 128 KiB
/// guard zones around it, a signal's frame included.
constexpr unsigned X86BundleBytes = 32;
constexpr unsigned X86StackStepBytes = 64 << 10, X86StackReachBytes = 64 << 10,
                   X86StackTouchBytes = 64;

/// The encodings of the guard sequences (the compiler emits them, the
/// verifier accepts them): `add Xd, x27, wM, uxtw`.
constexpr unsigned AArch64BaseRegister = 27, AArch64AddressRegister = 28,
                   AArch64ScratchRegister = 26, AArch64LinkRegister = 30;
constexpr uint32_t aarch64Confine(unsigned Rd, unsigned Rm) {
  return 0x8B204000u | (Rm << 16) | (AArch64BaseRegister << 5) | Rd;
}

} // namespace twochains::verify

#endif
