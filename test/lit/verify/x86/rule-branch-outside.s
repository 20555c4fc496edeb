// The rule branch-outside (x86-64): a direct branch past the code's end.
// RUN: llvm-mc -triple=x86_64 -filetype=obj %s -o %t.o
// RUN: not %verify %t.o 2>&1 | FileCheck %s
// CHECK: error: .text+0x2 {{.*}}: branch-outside: `jmp {{.*}}`{{.*}}outside the code
  .text
  .bundle_align_mode 5
  movl %eax, %ebx
  .byte 0xe9
  .long 0x1000
  ud2
