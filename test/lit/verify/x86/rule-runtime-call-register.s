// The rule runtime-call (x86-64): a call through memory a register names (the jam could write the entry).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x1c {{.*}}: runtime-call: `callq *%gs:(%eax)`
  .text
  .bundle_align_mode 5
  nop
  .bundle_lock align_to_end
  callq *%gs:(%eax)
  .bundle_unlock
  ud2
