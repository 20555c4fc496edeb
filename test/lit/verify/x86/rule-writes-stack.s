// The rule writes-stack (x86-64): %rsp written from a register it does not confine.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: writes-stack: `movq %rax, %rsp`
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movq %rax, %rsp
  ud2
