// The rule indirect-branch (x86-64): a jump through a register not masked to a bundle and confined.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: indirect-branch: `jmpq *%rax`
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  jmpq *%rax
