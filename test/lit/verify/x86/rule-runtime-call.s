// The rule runtime-call (x86-64): a call through memory is only through a slot of the call table.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x18 {{.*}}: runtime-call: `callq *%gs:4096`
  .text
  .bundle_align_mode 5
  nop
  .bundle_lock align_to_end
  callq *%gs:4096
  .bundle_unlock
  ud2
