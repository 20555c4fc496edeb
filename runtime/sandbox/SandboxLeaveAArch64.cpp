//===- SandboxLeaveAArch64.cpp - Leaving the sandbox on aarch64 -----------===//
//
// twochains_sandbox_exit (the exit gate's runtime call) and
// twochains_sandbox_abort (a service that refuses the jam) restore the
// runtime's stack pointer and registers twochains_sandbox_enter saved and
// return from it, 0 and 1. Apart from the entry (SandboxAArch64.cpp),
// which calls the services, so that the services, which abort, and the
// entry do not call each other.
//
//===----------------------------------------------------------------------===//
#include <cstdint>

extern "C" {
__attribute__((visibility("hidden"))) uint64_t twochains_sandbox_saved_sp;
}

asm(R"(
  .text
  .p2align 2
  .globl twochains_sandbox_exit
  .hidden twochains_sandbox_exit
  .type twochains_sandbox_exit, %function
twochains_sandbox_exit:
  mov x0, xzr
  b 1f
  .size twochains_sandbox_exit, .-twochains_sandbox_exit

  .p2align 2
  .globl twochains_sandbox_abort
  .hidden twochains_sandbox_abort
  .type twochains_sandbox_abort, %function
twochains_sandbox_abort:
  mov x0, #1
1:
  adrp x9, twochains_sandbox_saved_sp
  add x9, x9, :lo12:twochains_sandbox_saved_sp
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
  .size twochains_sandbox_abort, .-twochains_sandbox_abort

)");
