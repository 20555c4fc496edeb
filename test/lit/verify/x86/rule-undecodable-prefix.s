// The rule undecodable (x86-64): a prefix the processor ignores (here a
// REX before the address-size prefix), which decoders read differently:
// LLVM's takes the instruction after it as one with a 64-bit address.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: undecodable: {{.*}}a prefix the processor ignores
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  .byte 0x48, 0x67, 0x65, 0x8b, 0x4c, 0x0f, 0x65
  ud2
