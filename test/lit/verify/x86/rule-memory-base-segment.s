// The rule memory-base (x86-64): a segment other than %gs (%fs is the receiver's thread storage).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: memory-base: `movq %fs:0, %rbx`{{.*}}segment other than %gs
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movq %fs:0, %rbx
  ud2
