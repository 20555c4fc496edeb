// The rule call-position (x86-64): a call that does not end its bundle (its return would land elsewhere).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: call-position: `callq {{.*}}its bundle
  .text
  movl %eax, %ebx
  callq f
f:
  ud2
