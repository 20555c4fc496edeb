// The rule crosses-bundle (x86-64): an instruction across a 32-byte bundle (a masked jump to the bundle would land inside it).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x1e {{.*}}: crosses-bundle: `movl $1, %eax`
  .text
  .fill 30, 1, 0x90
  movl $1, %eax
  ud2
