//===- SandboxLeaveX86.cpp - Leaving the sandbox on x86-64 ----------------===//
//
// twochains_sandbox_exit (the exit gate's runtime call) and
// twochains_sandbox_abort (a service that refuses the jam) restore what
// twochains_sandbox_enter saved at twochains_sandbox_saved_sp (the
// runtime's callee-saved registers, MXCSR and x87 control word) and
// return from it, 0 and 1. Apart from the entry (SandboxX86.cpp), which
// calls the services, so that the services, which abort, and the entry
// do not call each other.
//
//===----------------------------------------------------------------------===//
#include <cstdint>

extern "C" {
__attribute__((visibility("hidden"))) uint64_t twochains_sandbox_saved_sp;
}

asm(R"(
  .text
  .p2align 4
  .globl twochains_sandbox_exit
  .hidden twochains_sandbox_exit
  .type twochains_sandbox_exit, @function
twochains_sandbox_exit:
  xorl %eax, %eax
  jmp 1f
  .size twochains_sandbox_exit, .-twochains_sandbox_exit

  .p2align 4
  .globl twochains_sandbox_abort
  .hidden twochains_sandbox_abort
  .type twochains_sandbox_abort, @function
twochains_sandbox_abort:
  movl $1, %eax
1:
  movq twochains_sandbox_saved_sp(%rip), %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  cld
  retq
  .size twochains_sandbox_abort, .-twochains_sandbox_abort

)");
