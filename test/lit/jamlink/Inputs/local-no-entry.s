# A local-mode object whose .tc.jam names an entry it does not define.
        .text
        .globl something_else
something_else: ret
        .section .tc.jam,"e",@progbits
        .asciz "tc.abi=1"
        .asciz "mode=local"
        .asciz "package=demo"
        .asciz "element=ghost"
        .asciz "entry=tc.demo.ghost.main"
