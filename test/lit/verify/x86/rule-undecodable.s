// The rule undecodable (x86-64): bytes that are no instruction in 64-bit mode (0x06, push %es).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: undecodable:
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  .byte 0x06
  ud2
