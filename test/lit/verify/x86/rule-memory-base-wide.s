// The rule memory-base (x86-64): %gs with a 64-bit address (a register's upper half would carry it out of the region).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: memory-base: `movq %gs:(%rax), %rbx`{{.*}}64-bit address
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movq %gs:(%rax), %rbx
  ud2
