// The rule branch-into-guard (x86-64): a direct jump to the middle of a guard sequence, past the mask.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x0 {{.*}}: branch-into-guard: `jmp {{.*}}inside a guard sequence
  .text
  .bundle_align_mode 5
  jmp 1f
  .p2align 5
  .bundle_lock
  andl $-32, %eax
1:
  addq %gs:0, %rax
  jmpq *%rax
  .bundle_unlock
