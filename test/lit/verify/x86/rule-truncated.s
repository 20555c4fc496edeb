// The rule truncated (x86-64): code that ends inside an instruction.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 (offset 0x{{[0-9a-f]+}}): truncated: `<partial>`
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  .byte 0x48, 0x8b
