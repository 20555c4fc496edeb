// Everything the x86-64 sandbox admits verifies (docs/sandbox.md, "x86-64"):
// pushes and pops, stack steps each followed by a touch of the stack, %gs:
// with 32-bit addresses, %rsp plus small displacements, %rip-relative
// data, lea of anything, atomics, AVX, multi-byte nops (their operands
// reach nothing), the guard sequences for %rsp and indirect branches,
// runtime calls, direct calls ending their bundles, traps.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: %verify %t.o | FileCheck %s
// CHECK: .text: verified, 218 bytes
  .text
  .bundle_align_mode 5
f:
  pushq %rbp
  pushq %rbx
  subq $4096, %rsp
  movq %rax, (%rsp)
  movq %gs:8(%eax,%ebx,4), %rcx
  movl %ecx, %gs:(%edi)
  movl 16(%rsp), %eax
  movq g(%rip), %rax
  leaq 100(%rax,%rbx,8), %rdx
  lock cmpxchgq %rcx, %gs:(%eax)
  vmovdqu %gs:(%esi), %ymm0
  addsd %gs:8(%eax), %xmm1
  nopw %cs:0(%rax,%rax,1)
  .bundle_lock
  movl %ebp, %ebp
  addq %gs:0, %rbp
  movq %rbp, %rsp
  .bundle_unlock
  addq $4096, %rsp
  popq %rbx
  .bundle_lock align_to_end
  callq f
  .bundle_unlock
  .bundle_lock align_to_end
  callq *%gs:16
  .bundle_unlock
  .bundle_lock align_to_end
  andl $-32, %eax
  addq %gs:0, %rax
  callq *%rax
  .bundle_unlock
  jne f
  ud2
  .bundle_lock
  popq %r11
  andl $-32, %r11d
  addq %gs:0, %r11
  jmpq *%r11
  .bundle_unlock
  .data
g:
  .quad 0
