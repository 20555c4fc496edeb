// Everything the sandbox's rules admit verifies (docs/sandbox.md): the
// guard sequences, runtime calls, the stack moved by writeback, the base
// plus a 32-bit register, SIMD and floating point, zero padding.
// RUN: llvm-mc -triple=aarch64 -mattr=+lse -filetype=obj %s -o %t.o
// RUN: %verify %t.o | FileCheck %s
// CHECK: .text: verified, 33 instructions
  stp x29, x30, [sp, #-32]!
  mov x29, sp
  add x28, x27, w0, uxtw
  ldr x1, [x28, #8]
  ldr w2, [x27, w1, uxtw]
  str q0, [x28, #65520]
  ldur x3, [x28, #-8]
  stp x1, x2, [sp, #16]
  sub x26, sp, #4096
  add sp, x27, w26, uxtw
  ldxr x4, [x28]
  stxr w5, x4, [x28]
  ldadd x4, x5, [x28]
  ld1 {v1.4s}, [sp], #16
  fadd v0.4s, v1.4s, v2.4s
  umov w6, v0.s[1]
  mrs x7, fpcr
  add x28, x27, w9, uxtw
  blr x28
  ldr x30, [x27, #8]
  blr x30
  cbz x0, 1f
  b.ne 1f
1:
  ldr x30, [sp, #8]
  add x30, x27, w30, uxtw
  ldp x29, x30, [sp], #32
  add x30, x27, w30, uxtw
  add x28, x27, w8, uxtw
  br x28
  ret
  udf #0
  .inst 0x00000000
  ldr x0, 1b
