// The rule indirect-return: code that breaks it and nothing else is rejected,
// at the instruction that breaks it (docs/sandbox.md).
// RUN: llvm-mc -triple=aarch64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x0 (offset 0x{{[0-9a-f]+}}): indirect-branch: `ret x0`
  ret x0
