// The rule branch-into-guard (x86-64): a direct jump into the middle of an instruction.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x0 {{.*}}: branch-into-guard: {{.*}}inside an instruction
  .text
  .bundle_align_mode 5
  .byte 0xeb, 0x01
  ud2
  ud2
