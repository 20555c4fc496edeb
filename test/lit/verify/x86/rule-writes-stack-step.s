// The rule writes-stack (x86-64): a stack step the next instruction does not follow by touching the stack (steps without touches would walk %rsp past the guard zone).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x0 {{.*}}: writes-stack: `subq $64, %rsp`{{.*}}does not touch the stack
  .text
  .bundle_align_mode 5
  subq $64, %rsp
  movq %rax, %rbx
  movq %rax, (%rsp)
  ud2
