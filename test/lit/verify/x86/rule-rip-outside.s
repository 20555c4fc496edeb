// The rule rip-outside (x86-64): a %rip-relative operand before the region's base (the code lies 1 MiB into it).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: rip-outside: `movq -2097152(%rip), %rax`
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movq -2097152(%rip), %rax
  ud2
