//===- SandboxAArch64.cpp - Entering and leaving the sandbox on aarch64 ---===//
//
// twochains_sandbox_enter saves the runtime's callee-saved registers and stack
// pointer, sets the sandbox's registers (x27 = x28 = the region's base, sp
// the region's stack, x30 the exit gate, docs/sandbox.md) and branches to
// the jam. The jam returns to the exit gate, which calls twochains_sandbox_exit
// through the call table: it restores the runtime's stack pointer and
// registers and returns from twochains_sandbox_enter. The other general registers
// are cleared on the way in, so the jam learns no address of the runtime.
//
// A service (Services.h) is call table slot s >= 1, whose entry is thunk s:
// it records s and goes to twochains_sandbox_service, which saves the jam's sp,
// x30 and x17 (the gate's copy of the jam's return address), moves to the
// runtime's stack below twochains_sandbox_enter's frame, calls the dispatcher,
// restores the jam's registers and clears the caller-saved ones it might
// have left runtime addresses in. twochains_sandbox_abort leaves the jam from a
// service as the exit does, twochains_sandbox_enter then returning 1.
//
//===----------------------------------------------------------------------===//
#include "sandbox/Region.h"
#include "sandbox/Services.h"

#include <cstring>

extern "C" {
__attribute__((visibility("hidden"))) extern uint64_t twochains_sandbox_saved_sp;
__attribute__((visibility("hidden"))) uint64_t twochains_sandbox_jam_state[3];
__attribute__((visibility("hidden"))) extern const uint8_t twochains_sandbox_thunks[];
__attribute__((visibility("hidden"))) int twochains_sandbox_enter(const uint8_t *Entry, void *Ctx,
                                                                  void *Payload, size_t Size,
                                                                  uint8_t *Base, uint8_t *StackTop,
                                                                  const uint8_t *ExitGate);
__attribute__((visibility("hidden"))) void twochains_sandbox_exit();
}

asm(R"(
  .text
  .p2align 2
  .globl twochains_sandbox_enter
  .hidden twochains_sandbox_enter
  .type twochains_sandbox_enter, %function
twochains_sandbox_enter:
  stp x29, x30, [sp, #-160]!
  stp x19, x20, [sp, #16]
  stp x21, x22, [sp, #32]
  stp x23, x24, [sp, #48]
  stp x25, x26, [sp, #64]
  stp x27, x28, [sp, #80]
  stp d8, d9, [sp, #96]
  stp d10, d11, [sp, #112]
  stp d12, d13, [sp, #128]
  stp d14, d15, [sp, #144]
  adrp x9, twochains_sandbox_saved_sp
  add x9, x9, :lo12:twochains_sandbox_saved_sp
  mov x10, sp
  str x10, [x9]
  mov x16, x0
  mov x0, x1
  mov x1, x2
  mov x2, x3
  mov x27, x4
  mov x28, x4
  mov sp, x5
  mov x30, x6
  mov x3, xzr
  mov x4, xzr
  mov x5, xzr
  mov x6, xzr
  mov x7, xzr
  mov x8, xzr
  mov x9, xzr
  mov x10, xzr
  mov x11, xzr
  mov x12, xzr
  mov x13, xzr
  mov x14, xzr
  mov x15, xzr
  mov x17, xzr
  mov x18, xzr
  mov x19, xzr
  mov x20, xzr
  mov x21, xzr
  mov x22, xzr
  mov x23, xzr
  mov x24, xzr
  mov x25, xzr
  mov x26, xzr
  mov x29, xzr
  br x16
  .size twochains_sandbox_enter, .-twochains_sandbox_enter

  .p2align 3
  .globl twochains_sandbox_thunks
  .hidden twochains_sandbox_thunks
twochains_sandbox_thunks:
  .irp n, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
  mov x16, #\n
  b twochains_sandbox_service
  .endr

  .p2align 2
  .type twochains_sandbox_service, %function
twochains_sandbox_service:
  adrp x9, twochains_sandbox_jam_state
  add x9, x9, :lo12:twochains_sandbox_jam_state
  mov x10, sp
  stp x10, x30, [x9]
  str x17, [x9, #16]
  adrp x10, twochains_sandbox_saved_sp
  ldr x10, [x10, :lo12:twochains_sandbox_saved_sp]
  mov sp, x10
  mov x6, x16
  bl twochains_sandbox_dispatch
  adrp x9, twochains_sandbox_jam_state
  add x9, x9, :lo12:twochains_sandbox_jam_state
  ldp x10, x30, [x9]
  ldr x17, [x9, #16]
  mov sp, x10
  mov x1, xzr
  mov x2, xzr
  mov x3, xzr
  mov x4, xzr
  mov x5, xzr
  mov x6, xzr
  mov x7, xzr
  mov x8, xzr
  mov x9, xzr
  mov x10, xzr
  mov x11, xzr
  mov x12, xzr
  mov x13, xzr
  mov x14, xzr
  mov x15, xzr
  mov x16, xzr
  mov x18, xzr
  ret
  .size twochains_sandbox_service, .-twochains_sandbox_service
)");

namespace twochains::rt {

bool enterSandbox(const uint8_t *Entry, void *Ctx, void *Payload, size_t Size, uint8_t *Base,
                  uint8_t *StackTop, const uint8_t *ExitGate, bool &Abandoned) {
  Abandoned = twochains_sandbox_enter(Entry, Ctx, Payload, Size, Base, StackTop, ExitGate) != 0;
  return true;
}

bool sandboxAvailable() { return true; }

void writeSandboxGates(uint8_t *Base, unsigned Slots) {
  using L = SandboxLayout;
  for (unsigned S = 0; S < Slots; ++S)
    reinterpret_cast<const void **>(Base)[S] = sandboxSlotEntry(S);
  // The exit: `ldr x30, [x27, #ExitSlot*8]; blr x30`. Service slot S's
  // gate: `mov x17, x30; ldr x30, [x27, #8*S]; blr x30; add x30, x27, w17,
  // uxtw; ret` (the services' entries keep x17). Zeros elsewhere: udf.
  const uint32_t Exit[] = {0xF940037Eu | (L::ExitSlot << 10), 0xD63F03C0u};
  std::memcpy(Base + L::ExitGate, Exit, sizeof Exit);
  for (unsigned S = 1; S < Slots; ++S) {
    const uint32_t Code[] = {0xAA1E03F1u, 0xF940037Eu | (S << 10), 0xD63F03C0u,
                             verify::aarch64Confine(30, 17), 0xD65F03C0u};
    std::memcpy(Base + L::ExitGate + L::GateStride * S, Code, sizeof Code);
  }
}

bool verifySandboxCode(const uint8_t *Code, size_t Bytes, uint64_t CodeOffset,
                       verify::Violation &V) {
  verify::SandboxLayout Layout;
  Layout.CodeOffset = CodeOffset;
  return verify::verifyAArch64(Code, Bytes, Layout, V);
}

uint8_t sandboxCodeFill() { return 0; } // udf

const void *sandboxSlotEntry(unsigned S) {
  if (S == 0)
    return reinterpret_cast<const void *>(&twochains_sandbox_exit);
  return S < 16 ? twochains_sandbox_thunks + 8 * (S - 1) : nullptr;
}

} // namespace twochains::rt
