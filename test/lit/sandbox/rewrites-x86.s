# The sandbox's assembler (as --64) rewrites each x86-64 instruction that
# reaches memory, moves %rsp, returns or branches through a register or
# memory into its guarded form (docs/sandbox.md, "x86-64"); what it
# writes, the verifier accepts; what it cannot confine, it refuses with
# the line.
# RUN: %sandbox-as --64 --emit-rewritten -o %t.s %s
# RUN: grep -v "^#" %t.s | FileCheck %s
# RUN: llvm-mc -triple=x86_64 -filetype=obj %t.s -o %t.o
# RUN: %verify %t.o | FileCheck %s --check-prefix=VERIFIED
# VERIFIED: .text: verified
# RUN: rm -rf %t.d && split-file %S/Inputs/unconfinable-x86.txt %t.d
# RUN: for f in %t.d/*.s; do not %sandbox-as --64 -o %t.o $f 2>&1; done | FileCheck %s --check-prefix=REFUSED
# REFUSED: absolute.s:1: an absolute address in a sandboxed jam: `movq foo, %rax`
# REFUSED: fs.s:1: thread-local storage (%fs) in a sandboxed jam: `movq %fs:40, %rax`
# REFUSED: rsp.s:1: a write to %rsp the sandbox cannot confine: `xchgq %rax, %rsp`
# REFUSED: string.s:1: a string instruction (it reaches memory through %rsi and %rdi): `rep movsb`
# CHECK: .bundle_align_mode 5
	.text
	.p2align 5
f:
# CHECK-LABEL: f:
	pushq	%rbx
# CHECK-NEXT: pushq %rbx
	subq	$512, %rsp
# CHECK-NEXT: .bundle_lock
# CHECK-NEXT: subq $512, %rsp
# CHECK-NEXT: pushq %rax
# CHECK-NEXT: .bundle_unlock
# CHECK-NEXT: popq %rax
	movq	8(%rax,%rbx,4), %rcx
# CHECK-NEXT: movq %gs:8(%eax,%ebx,4), %rcx
	movl	%ecx, (%rdi)
# CHECK-NEXT: movl %ecx, %gs:(%edi)
	lock		incq	(%r15)
# CHECK-NEXT: lock incq %gs:(%r15d)
	movq	16(%rsp), %rax
# CHECK-NEXT: movq 16(%rsp), %rax
	movq	g(%rip), %rax
# CHECK-NEXT: movq g(%rip), %rax
	leaq	8(%rax,%rbx), %rdx
# CHECK-NEXT: leaq 8(%rax,%rbx), %rdx
	movq	$1, 16
# CHECK-NEXT: movq $1, %gs:16
	prefetcht0	64(%rsi)
# CHECK-NEXT: prefetcht0 %gs:64(%esi)
	callq	f
# CHECK-NEXT: .bundle_lock align_to_end
# CHECK-NEXT: callq f
# CHECK-NEXT: .bundle_unlock
	callq	*%rax
# CHECK-NEXT: .bundle_lock align_to_end
# CHECK-NEXT: andl $-32, %eax
# CHECK-NEXT: addq %gs:0, %rax
# CHECK-NEXT: callq *%rax
# CHECK-NEXT: .bundle_unlock
	callq	*8(%rdx)
# CHECK-NEXT: movq %gs:8(%edx), %r11
# CHECK-NEXT: .bundle_lock align_to_end
# CHECK-NEXT: andl $-32, %r11d
# CHECK-NEXT: addq %gs:0, %r11
# CHECK-NEXT: callq *%r11
# CHECK-NEXT: .bundle_unlock
	movq	%rbp, %rsp
# CHECK-NEXT: .bundle_lock
# CHECK-NEXT: movl %ebp, %ebp
# CHECK-NEXT: addq %gs:0, %rbp
# CHECK-NEXT: movq %rbp, %rsp
# CHECK-NEXT: .bundle_unlock
	leave
# CHECK-NEXT: .bundle_lock
# CHECK-NEXT: movl %ebp, %ebp
# CHECK-NEXT: addq %gs:0, %rbp
# CHECK-NEXT: movq %rbp, %rsp
# CHECK-NEXT: .bundle_unlock
# CHECK-NEXT: popq %rbp
	addq	$512, %rsp
# CHECK-NEXT: .bundle_lock
# CHECK-NEXT: addq $512, %rsp
# CHECK-NEXT: pushq %rax
# CHECK-NEXT: .bundle_unlock
# CHECK-NEXT: popq %rax
	popq	%rbx
# CHECK-NEXT: popq %rbx
	jmpq	*%rcx
# CHECK-NEXT: .bundle_lock
# CHECK-NEXT: andl $-32, %ecx
# CHECK-NEXT: addq %gs:0, %rcx
# CHECK-NEXT: jmpq *%rcx
# CHECK-NEXT: .bundle_unlock
	retq
# CHECK-NEXT: .bundle_lock
# CHECK-NEXT: popq %r11
# CHECK-NEXT: andl $-32, %r11d
# CHECK-NEXT: addq %gs:0, %r11
# CHECK-NEXT: jmpq *%r11
# CHECK-NEXT: .bundle_unlock
	.data
g:
	.quad	0
