// The rule indirect-branch (x86-64): a guard sequence split over two bundles (a masked jump could land between the mask and the jump).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x29 {{.*}}: indirect-branch: `jmpq *%rax`
  .text
  .bundle_align_mode 5
  .fill 26, 1, 0x90
  andl $-32, %eax
  addq %gs:0, %rax
  jmpq *%rax
