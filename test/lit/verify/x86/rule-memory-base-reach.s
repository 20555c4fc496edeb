// The rule memory-base (x86-64): %rsp plus more than the guard zone catches.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: memory-base: `movq 65544(%rsp), %rbx`{{.*}}beyond
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movq 65544(%rsp), %rbx
  ud2
