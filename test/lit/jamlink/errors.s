# Every error names file, section+offset, relocation type and symbol; the
# link goes on to report all of them, and no image is written.
# RUN: rm -rf %t && split-file %s %t
# RUN: llvm-mc -filetype=obj -triple=x86_64-linux-gnu %t/x86.s -o %t/jam_bad.o
# RUN: not %jamlink %t/jam_bad.o -o %t/bad.jam 2>&1 | FileCheck %s --check-prefix=X86
# RUN: not test -e %t/bad.jam
# RUN: llvm-mc -filetype=obj -triple=aarch64-linux-gnu %t/a64.s -o %t/jam_bad64.o
# RUN: not %jamlink %t/jam_bad64.o -o %t/bad64.jam 2>&1 | FileCheck %s --check-prefix=A64
# RUN: not test -e %t/bad64.jam

# X86:      jamlink: error: {{.*}}jam_bad.o: section .tbss is thread-local storage, which cannot travel
# X86-NEXT: jamlink: error: {{.*}}jam_bad.o:(.text+0x3): relocation R_X86_64_32S against symbol '.data' is an absolute address narrower than 64 bits and cannot be made position independent (compile with -fPIC)
# X86-NEXT: jamlink: error: {{.*}}jam_bad.o:(.text+0xb): relocation R_X86_64_TPOFF32 against symbol 'tls_counter' refers to thread-local storage, which cannot travel: the receiver thread has its own
# X86-NEXT: jamlink: error: {{.*}}jam_bad.o:(.text+0x11): relocation R_X86_64_PC32 against symbol 'outside_data' is a PC-relative reference to an outside symbol, which cannot be made position independent (compile with -fPIC)
# X86-NEXT: jamlink: error: {{.*}}jam_bad.o:(.text+0x17): relocation R_X86_64_GOTOFF64 against symbol '.data' is not supported in a jam
# X86-NOT:  error

# A64:      jamlink: error: {{.*}}jam_bad64.o: section .tbss is thread-local storage, which cannot travel
# A64-NEXT: jamlink: error: {{.*}}jam_bad64.o:(.text+0x0): relocation R_AARCH64_MOVW_UABS_G0_NC against symbol '.data' is an absolute address narrower than 64 bits and cannot be made position independent (compile with -fPIC)
# A64-NEXT: jamlink: error: {{.*}}jam_bad64.o:(.text+0x4): relocation R_AARCH64_ADR_PREL_PG_HI21 against symbol 'outside_data' is a page-relative reference to an outside symbol, which cannot be made position independent (compile with -fPIC)
# A64-NEXT: jamlink: error: {{.*}}jam_bad64.o:(.text+0x8): relocation R_AARCH64_TLSLE_ADD_TPREL_HI12 against symbol 'tls_counter' refers to thread-local storage, which cannot travel: the receiver thread has its own
# A64-NOT:  error

#--- x86.s
        .text
        .globl bad_main
bad_main:
        movl    table(,%rax,4), %eax
        movl    %fs:tls_counter@tpoff, %eax
        movl    outside_data(%rip), %eax
.Lgotoff:
        movabsq $table@GOTOFF, %rax
        retq
        .data
table:  .long 1
        .section .tbss,"awT",@nobits
tls_counter: .long 0

#--- a64.s
        .text
        .globl bad64_main
bad64_main:
        movz    x0, #:abs_g0_nc:table
        adrp    x1, outside_data
        add     x2, x2, :tprel_hi12:tls_counter
        ret
        .data
table:  .word 1
        .section .tbss,"awT",@nobits
tls_counter: .word 0
