// The rule writes-stack (x86-64): a stack step larger than the guard zone allows.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x0 {{.*}}: writes-stack: `subq $65544, %rsp`
  .text
  .bundle_align_mode 5
  subq $65544, %rsp
  movq %rax, (%rsp)
  ud2
