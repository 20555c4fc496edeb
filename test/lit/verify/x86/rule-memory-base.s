// The rule memory-base (x86-64): memory through a register without %gs.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: memory-base: `movq (%rax), %rbx`{{.*}}without %gs
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movq (%rax), %rbx
  ud2
