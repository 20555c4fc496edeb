// The rule ends-unguarded (x86-64): the code falls off its end (into whatever bytes follow).
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: ends-unguarded: `movq %rax, %rbx`
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  movq %rax, %rbx
