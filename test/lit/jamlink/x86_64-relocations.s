# Every x86_64 relocation kind jamlink accepts, in an object from an
# assembler (no plugin metadata): how each is resolved in the image.
# RUN: rm -rf %t && mkdir -p %t
# RUN: llvm-mc -filetype=obj -triple=x86_64-linux-gnu %s -o %t/jam_relocs.o
# RUN: llvm-mc -filetype=obj -triple=x86_64-linux-gnu \
# RUN:   %S/Inputs/gotpcrel.s -o %t/gotpcrel.o
# RUN: llvm-readelf -r %t/jam_relocs.o | FileCheck %s --check-prefix=INPUT
# RUN: %jamlink %t/jam_relocs.o -o %t/relocs.jam
# RUN: %jamlink --dump %t/relocs.jam | FileCheck %s

# INPUT-DAG: R_X86_64_PC32 {{.*}} .rodata - 4
# INPUT-DAG: R_X86_64_PLT32 {{.*}} helper - 4
# INPUT-DAG: R_X86_64_PLT32 {{.*}} puts - 4
# INPUT-DAG: R_X86_64_PC32 {{.*}} abort - 4
# INPUT-DAG: R_X86_64_REX_GOTPCRELX {{.*}} counter - 4
# INPUT-DAG: R_X86_64_GOTPCRELX {{.*}} free - 4
# INPUT-DAG: R_X86_64_GOTPCRELX {{.*}} exit - 4
# INPUT-DAG: R_X86_64_64 {{.*}} helper + 0
# INPUT-DAG: R_X86_64_64 {{.*}} environ + 8
# INPUT-DAG: R_X86_64_PC64 {{.*}} helper + 0

        .text
        .globl relocs_main
relocs_main:
        leaq    .Lmsg(%rip), %rdi              # PC32 to rodata
        callq   helper                         # PLT32 to a local function
        callq   puts                           # PLT32 to an import: trampoline
        .byte   0xe8                           # call rel32 with a PC32
        .reloc  ., R_X86_64_PC32, abort-4      #   relocation: trampoline too
        .long   0
        movq    counter@GOTPCREL(%rip), %rax   # REX_GOTPCRELX load: GOT slot
        callq   *free@GOTPCREL(%rip)           # GOTPCRELX call: relaxed to trampoline
        leaq    table(%rip), %rdx              # PC32 to data
        jmpq    *exit@GOTPCREL(%rip)           # GOTPCRELX jump: relaxed to trampoline
        .globl  helper
helper:
        retq

        .section .rodata,"a",@progbits
.Lmsg:  .asciz "hi"

        .data
        .p2align 3
table:  .quad   helper                         # 64 against local: image fixup
        .quad   environ+8                      # 64 against import: import fixup
        .quad   helper - .                     # PC64

# CHECK:      imports:
# CHECK-NEXT:   [0] puts
# CHECK-NEXT:   [1] abort
# CHECK-NEXT:   [2] counter
# CHECK-NEXT:   [3] free
# CHECK-NEXT:   [4] exit
# CHECK-NEXT:   [5] environ
# The table is in the data part: stored after the text (its fixups name
# where it is stored), linked JamDataDistance (0x40000000) further on.
# CHECK-NEXT: fixups:
# CHECK-NEXT:   0x[[TABLE:[0-9a-f]+]] image64   base + 0x[[HELPER:[0-9a-f]+]]
# CHECK-NEXT:   0x{{[0-9a-f]+}} import64  environ + 8
# CHECK-NEXT:   0x[[GOT_COUNTER:[0-9a-f]+]] import64  counter
# CHECK:      00000008 <relocs_main>:
# CHECK-NEXT:   8: 48 8d 3d {{.*}} leaq {{.*}}(%rip), %rdi  # 0x[[RODATA:[0-9a-f]+]]
# CHECK-NEXT:   f: e8 {{.*}} callq 0x[[HELPER]]
# CHECK-NEXT:  14: e8 {{.*}} callq 0x[[TRAMP_PUTS:[0-9a-f]+]]
# CHECK-NEXT:  19: e8 {{.*}} callq 0x[[TRAMP_ABORT:[0-9a-f]+]]
# CHECK-NEXT:  1e: 48 8b 05 {{.*}} movq {{.*}}(%rip), %rax  # 0x[[GOT_COUNTER]]
# CHECK-NEXT:  25: 67 e8 {{.*}} addr32 {{.*}}callq 0x[[TRAMP_FREE:[0-9a-f]+]]
# CHECK-NEXT:  2b: 48 8d 15 {{.*}} leaq {{.*}}(%rip), %rdx  # 0x400000[[TABLE]]
# CHECK-NEXT:  32: e9 {{.*}} jmp 0x[[TRAMP_EXIT:[0-9a-f]+]]
# CHECK-NEXT:  37: cc int3
# CHECK-NEXT:  [[HELPER]]: c3 retq
# CHECK-NEXT:  [[TRAMP_PUTS]]: 4c 8b 1d {{.*}} movq {{.*}}(%rip), %r11  # 0x0 <GOTP>
# CHECK-NEXT:  {{.*}}: 41 ff a3 00 00 00 00 jmpq *(%r11)
# CHECK-NEXT:  [[TRAMP_ABORT]]: 4c 8b 1d {{.*}} # 0x0 <GOTP>
# CHECK-NEXT:  {{.*}}: 41 ff a3 08 00 00 00 jmpq *0x8(%r11)
# CHECK-NEXT:  [[TRAMP_FREE]]: 4c 8b 1d {{.*}} # 0x0 <GOTP>
# CHECK-NEXT:  {{.*}}: 41 ff a3 18 00 00 00 jmpq *0x18(%r11)
# CHECK-NEXT:  [[TRAMP_EXIT]]: 4c 8b 1d {{.*}} # 0x0 <GOTP>
# CHECK-NEXT:  {{.*}}: 41 ff a3 20 00 00 00 jmpq *0x20(%r11)

# A plain GOTPCREL load (no relaxation allowed) also gets a GOT slot.
# RUN: %jamlink %t/gotpcrel.o --element=relocs -o %t/gotpcrel.jam
# RUN: %jamlink --dump %t/gotpcrel.jam | FileCheck %s --check-prefix=GOTPCREL
# GOTPCREL: fixups:
# GOTPCREL-NEXT: 0x[[SLOT:[0-9a-f]+]] import64  stdout
# GOTPCREL: movq {{.*}}(%rip), %rax  # 0x[[SLOT]]
