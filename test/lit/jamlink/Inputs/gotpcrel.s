# A GOTPCREL load, as compilers that do not relax emit it.
        .text
        .globl relocs_main
relocs_main:
.Lload: movq    0(%rip), %rax
        .reloc  .Lload+3, R_X86_64_GOTPCREL, stdout-4
        retq
