// The rule writes-base (x86-64): %gs holds the region's base; nothing writes it.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: writes-base: `mov{{.*}}%gs`{{.*}}it writes a segment register
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movw %ax, %gs
  ud2
