// The rule ends-unguarded: code that breaks it and nothing else is rejected,
// at the instruction that breaks it (docs/sandbox.md).
// RUN: llvm-mc -triple=aarch64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x4 (offset 0x{{[0-9a-f]+}}): ends-unguarded: `ldr x30, [sp]`
  nop
  ldr x30, [sp]
