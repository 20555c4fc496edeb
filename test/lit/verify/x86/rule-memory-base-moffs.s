// The rule memory-base (x86-64): %gs: with a 64-bit displacement alone
// (movabs) must stay inside the region; this one reads 4 GiB past its
// base, and a larger one anywhere.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: memory-base: `movabsb %gs:4294967296, %al`
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movabsb %gs:0x100000000, %al
  ud2
