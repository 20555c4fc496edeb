// The rule forbidden (x86-64): a system call; the other forbidden kinds are in forbidden-corners.test.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: forbidden: `syscall`
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  syscall
  ud2
