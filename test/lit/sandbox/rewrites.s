// The sandbox's assembler hook rewrites each instruction that reaches
// memory, moves sp, loads x30 or branches through a register into the
// guarded form (docs/sandbox.md); what it writes, the verifier accepts.
// RUN: %sandbox-as --emit-rewritten -o %t.s %s
// RUN: grep -v "^//" %t.s | FileCheck %s
// RUN: llvm-mc -triple=aarch64 -mattr=+lse -filetype=obj %t.s -o %t.o
// RUN: %verify %t.o | FileCheck %s --check-prefix=VERIFIED
// VERIFIED: .text: verified
// RUN: not %verify --raw %S/Inputs/unsandboxed.bin 2>&1 | FileCheck %s --check-prefix=RAW
// RAW: error: code+0x0 (offset 0x0): memory-base: `ldr w8, [x1]`
	.text
f:
// CHECK-LABEL: f:
	sub	sp, sp, #48
// CHECK-NEXT: sub x26, sp, #48
// CHECK-NEXT: add sp, x27, w26, uxtw
	stp	x29, x30, [sp, #16]
// CHECK-NEXT: stp x29, x30, [sp, #16]
	ldr	w8, [x1]
// CHECK-NEXT: ldr w8, [x27, w1, uxtw]
	ldr	x9, [x1, #8]
// CHECK-NEXT: add x28, x27, w1, uxtw
// CHECK-NEXT: ldr x9, [x28, #8]
	str	w13, [x9, w12, uxtw #2]
// CHECK-NEXT: add x26, x9, w12, uxtw #2
// CHECK-NEXT: str w13, [x27, w26, uxtw]
	ldr	x0, [x2, x3, lsl #3]
// CHECK-NEXT: add x26, x2, x3, lsl #3
// CHECK-NEXT: ldr x0, [x27, w26, uxtw]
	ldr	x4, [x5, #16]!
// CHECK-NEXT: add x5, x5, #16
// CHECK-NEXT: add x28, x27, w5, uxtw
// CHECK-NEXT: ldr x4, [x28]
	str	x4, [x5, #-8]!
// CHECK-NEXT: sub x5, x5, #8
// CHECK-NEXT: add x28, x27, w5, uxtw
// CHECK-NEXT: str x4, [x28]
	ldr	w6, [x7], #4
// CHECK-NEXT: ldr w6, [x27, w7, uxtw]
// CHECK-NEXT: add x7, x7, #4
	ldp	x10, x11, [x12], #16
// CHECK-NEXT: add x28, x27, w12, uxtw
// CHECK-NEXT: ldp x10, x11, [x28]
// CHECK-NEXT: add x12, x12, #16
	ld1	{ v0.16b }, [x13], x14
// CHECK-NEXT: add x28, x27, w13, uxtw
// CHECK-NEXT: ld1 { v0.16b }, [x28]
// CHECK-NEXT: add x13, x13, x14
	ldaxr	x15, [x16]
// CHECK-NEXT: add x28, x27, w16, uxtw
// CHECK-NEXT: ldaxr x15, [x28]
	ldadd	w1, w2, [x3]
// CHECK-NEXT: add x28, x27, w3, uxtw
// CHECK-NEXT: ldadd w1, w2, [x28]
	ldr	x30, [x4]
// CHECK-NEXT: ldr x30, [x27, w4, uxtw]
// CHECK-NEXT: add x30, x27, w30, uxtw
	blr	x8
// CHECK-NEXT: add x28, x27, w8, uxtw
// CHECK-NEXT: blr x28
	brk	#0x1
// CHECK-NEXT: udf #0x1
	mov	sp, x29
// CHECK-NEXT: add sp, x27, w29, uxtw
	ldp	x29, x30, [sp], #48
// CHECK-NEXT: ldp x29, x30, [sp], #48
// CHECK-NEXT: add x30, x27, w30, uxtw
	br	x9
// CHECK-NEXT: add x28, x27, w9, uxtw
// CHECK-NEXT: br x28
	ret
// CHECK-NEXT: ret
