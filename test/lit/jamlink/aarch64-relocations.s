# Every aarch64 relocation kind jamlink accepts. Page-relative ADRP within
# the text becomes a byte-exact ADR of the same page of the image, so the
# :lo12: halves keep their values wherever the image lands. An ADRP into the
# data part (JamDataDistance = 1 GiB away, beyond ADR) stays an ADRP, and the
# image then asks for a 4 KiB-aligned base.
# RUN: rm -rf %t && mkdir -p %t
# RUN: llvm-mc -filetype=obj -triple=aarch64-linux-gnu %s -o %t/jam_relocs.o
# RUN: llvm-readelf -r %t/jam_relocs.o | FileCheck %s --check-prefix=INPUT
# RUN: %jamlink %t/jam_relocs.o -o %t/relocs.jam
# RUN: %jamlink --dump %t/relocs.jam | FileCheck %s

# INPUT-DAG: R_AARCH64_ADR_PREL_LO21 {{.*}} msg + 0
# INPUT-DAG: R_AARCH64_LD_PREL_LO19 {{.*}} .rodata + 0
# INPUT-DAG: R_AARCH64_ADR_PREL_PG_HI21 {{.*}} msg + 0
# INPUT-DAG: R_AARCH64_ADD_ABS_LO12_NC {{.*}} msg + 0
# INPUT-DAG: R_AARCH64_LDST64_ABS_LO12_NC {{.*}} .data + 0
# INPUT-DAG: R_AARCH64_ADR_GOT_PAGE {{.*}} counter + 0
# INPUT-DAG: R_AARCH64_LD64_GOT_LO12_NC {{.*}} counter + 0
# INPUT-DAG: R_AARCH64_GOT_LD_PREL19 {{.*}} environ + 0
# INPUT-DAG: R_AARCH64_CONDBR19 {{.*}} helper + 0
# INPUT-DAG: R_AARCH64_TSTBR14 {{.*}} helper + 0
# INPUT-DAG: R_AARCH64_CALL26 {{.*}} helper + 0
# INPUT-DAG: R_AARCH64_CALL26 {{.*}} puts + 0
# INPUT-DAG: R_AARCH64_JUMP26 {{.*}} exit + 0
# INPUT-DAG: R_AARCH64_ABS64 {{.*}} helper + 0
# INPUT-DAG: R_AARCH64_ABS64 {{.*}} environ + 10
# INPUT-DAG: R_AARCH64_PREL32 {{.*}} helper + 0
# INPUT-DAG: R_AARCH64_PREL64 {{.*}} helper + 0
# INPUT-DAG: R_AARCH64_PREL16 {{.*}} helper + 0

        .text
        .globl  relocs_main
        .p2align 2
relocs_main:
        adr     x0, msg
        ldr     x1, .Llit
        adrp    x2, msg
        add     x2, x2, :lo12:msg
        adrp    x3, table
        ldr     x3, [x3, :lo12:table]
        adrp    x4, :got:counter
        ldr     x4, [x4, :got_lo12:counter]
        ldr     x5, :got:environ
        b.eq    helper
        tbz     x0, #3, helper
        bl      helper
        bl      puts
        b       exit
        .globl  helper
helper:
        ret

        .section .rodata,"a",@progbits
        .p2align 3
.Llit:  .xword  42
        .globl  msg
msg:    .asciz  "hi"

        .data
        .p2align 3
table:  .xword  helper
        .xword  environ+16

        # PC-relative data stays near the code it refers to.
        .section .rodata.offsets,"a",@progbits
        .p2align 3
        .word   helper - .
        .p2align 3
        .xword  helper - .
        .hword  helper - .

# CHECK:      isa          aarch64
# CHECK:      align        4096
# CHECK:      imports:
# CHECK-NEXT:   [0] counter
# CHECK-NEXT:   [1] environ
# CHECK-NEXT:   [2] puts
# CHECK-NEXT:   [3] exit
# CHECK-NEXT: fixups:
# CHECK-NEXT:   0x[[TABLE:[0-9a-f]+]] image64   base + 0x[[HELPER:[0-9a-f]+]]
# CHECK-NEXT:   0x{{[0-9a-f]+}} import64  environ + 16
# CHECK-NEXT:   0x[[GOT0:[0-9a-f]+]] import64  counter
# CHECK-NEXT:   0x[[GOT1:[0-9a-f]+]] import64  environ
# CHECK:      00000008 <relocs_main>:
# CHECK-NEXT:   8: {{.*}} adr x0, 0x[[MSG:[0-9a-f]+]]
# CHECK-NEXT:   c: {{.*}} ldr x1, 0x[[LIT:[0-9a-f]+]]
# CHECK-NEXT:  10: {{.*}} adr x2, 0x0
# CHECK-NEXT:  14: {{.*}} add x2, x2, #0x[[MSG]]
# CHECK-NEXT:  18: {{.*}} adrp x3, 0x40000000
# CHECK-NEXT:  1c: {{.*}} ldr x3, [x3, #0x[[TABLE]]]
# CHECK-NEXT:  20: {{.*}} adr x4, 0x0
# CHECK-NEXT:  24: {{.*}} ldr x4, [x4, #0x[[GOT0]]]
# CHECK-NEXT:  28: {{.*}} ldr x5, 0x[[GOT1]]
# CHECK-NEXT:  2c: {{.*}} b.eq 0x[[HELPER]]
# CHECK-NEXT:  30: {{.*}} tbz w0, #0x3, 0x[[HELPER]]
# CHECK-NEXT:  34: {{.*}} bl 0x[[HELPER]]
# CHECK-NEXT:  38: {{.*}} bl 0x[[TRAMP_PUTS:[0-9a-f]+]]
# CHECK-NEXT:  3c: {{.*}} b 0x[[TRAMP_EXIT:[0-9a-f]+]]
# CHECK-NEXT:  [[HELPER]]: {{.*}} ret
# CHECK-NEXT:  [[TRAMP_PUTS]]: {{.*}} ldr x16, 0x0
# CHECK-NEXT:  {{.*}}: {{.*}} ldr x16, [x16, #0x10]
# CHECK-NEXT:  {{.*}}: {{.*}} br x16
# CHECK-NEXT:  [[TRAMP_EXIT]]: {{.*}} ldr x16, 0x0
# CHECK-NEXT:  {{.*}}: {{.*}} ldr x16, [x16, #0x18]
# CHECK-NEXT:  {{.*}}: {{.*}} br x16
