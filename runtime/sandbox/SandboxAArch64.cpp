//===- SandboxAArch64.cpp - Entering and leaving the sandbox on aarch64 ---===//
//
// tc_sandbox_enter saves the runtime's callee-saved registers and stack
// pointer, sets the sandbox's registers (x27 = x28 = the region's base, sp
// the region's stack, x30 the exit stub, docs/sandbox.md) and branches to
// the jam. The jam returns to the exit stub, which calls tc_sandbox_exit
// through the call table: it restores the runtime's stack pointer and
// registers and returns from tc_sandbox_enter. The other general registers
// are cleared on the way in, so the jam learns no address of the runtime.
//
//===----------------------------------------------------------------------===//
#include "sandbox/Region.h"

extern "C" {
__attribute__((visibility("hidden"))) uint64_t tc_sandbox_saved_sp;
__attribute__((visibility("hidden"))) void tc_sandbox_enter(const uint8_t *Entry, void *Ctx,
                                                            void *Payload, size_t Size,
                                                            uint8_t *Base, uint8_t *StackTop,
                                                            const uint8_t *ExitStub);
__attribute__((visibility("hidden"))) void tc_sandbox_exit();
}

asm(R"(
  .text
  .p2align 2
  .globl tc_sandbox_enter
  .hidden tc_sandbox_enter
  .type tc_sandbox_enter, %function
tc_sandbox_enter:
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
  adrp x9, tc_sandbox_saved_sp
  add x9, x9, :lo12:tc_sandbox_saved_sp
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
  .size tc_sandbox_enter, .-tc_sandbox_enter

  .p2align 2
  .globl tc_sandbox_exit
  .hidden tc_sandbox_exit
  .type tc_sandbox_exit, %function
tc_sandbox_exit:
  adrp x9, tc_sandbox_saved_sp
  add x9, x9, :lo12:tc_sandbox_saved_sp
  ldr x10, [x9]
  mov sp, x10
  ldp x19, x20, [sp, #16]
  ldp x21, x22, [sp, #32]
  ldp x23, x24, [sp, #48]
  ldp x25, x26, [sp, #64]
  ldp x27, x28, [sp, #80]
  ldp d8, d9, [sp, #96]
  ldp d10, d11, [sp, #112]
  ldp d12, d13, [sp, #128]
  ldp d14, d15, [sp, #144]
  ldp x29, x30, [sp], #160
  ret
  .size tc_sandbox_exit, .-tc_sandbox_exit
)");

namespace twochains::rt {

bool enterSandbox(const uint8_t *Entry, void *Ctx, void *Payload, size_t Size, uint8_t *Base,
                  uint8_t *StackTop, const uint8_t *ExitStub) {
  tc_sandbox_enter(Entry, Ctx, Payload, Size, Base, StackTop, ExitStub);
  return true;
}

const void *sandboxExitEntry() { return reinterpret_cast<const void *>(&tc_sandbox_exit); }

} // namespace twochains::rt
