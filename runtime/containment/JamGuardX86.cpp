//===- JamGuardX86.cpp - Recovery points and the faulting PC on x86_64 ----===//
#include "containment/JamGuard.h"

#include <ucontext.h>

namespace twochains::rt {

uintptr_t signalPC(const void *UContext) {
  auto *U = static_cast<const ucontext_t *>(UContext);
  return U ? uintptr_t(U->uc_mcontext.gregs[REG_RIP]) : 0;
}

} // namespace twochains::rt

// A recovery point: rbx, rbp, r12-r15 (the System V callee-saved
// registers), the caller's stack pointer and the return address. Resuming
// restores them and returns Value from the save; the handler resumes from
// the alternate signal stack, which the kernel then no longer counts as in
// use (it looks at the stack pointer). endbr64 is a no-op where indirect
// branch tracking is off.
asm(R"(
  .text
  .globl twochainsSaveRecoveryPoint
  .hidden twochainsSaveRecoveryPoint
  .type twochainsSaveRecoveryPoint, @function
  .p2align 4
twochainsSaveRecoveryPoint:
  .cfi_startproc
  endbr64
  movq %rbx, 0(%rdi)
  movq %rbp, 8(%rdi)
  movq %r12, 16(%rdi)
  movq %r13, 24(%rdi)
  movq %r14, 32(%rdi)
  movq %r15, 40(%rdi)
  leaq 8(%rsp), %rdx
  movq %rdx, 48(%rdi)
  movq (%rsp), %rdx
  movq %rdx, 56(%rdi)
  xorl %eax, %eax
  ret
  .cfi_endproc
  .size twochainsSaveRecoveryPoint, .-twochainsSaveRecoveryPoint

  .globl twochainsResumeAtRecoveryPoint
  .hidden twochainsResumeAtRecoveryPoint
  .type twochainsResumeAtRecoveryPoint, @function
  .p2align 4
twochainsResumeAtRecoveryPoint:
  .cfi_startproc
  endbr64
  movq 0(%rdi), %rbx
  movq 8(%rdi), %rbp
  movq 16(%rdi), %r12
  movq 24(%rdi), %r13
  movq 32(%rdi), %r14
  movq 40(%rdi), %r15
  movq 48(%rdi), %rsp
  movl %esi, %eax
  jmpq *56(%rdi)
  .cfi_endproc
  .size twochainsResumeAtRecoveryPoint, .-twochainsResumeAtRecoveryPoint
)");
