# Two local-mode objects that both define `dup`: LLD refuses them.
        .text
        .globl tc.demo.b.main, dup
tc.demo.b.main: ret
dup:    ret
        .section .tc.jam,"e",@progbits
        .asciz "tc.abi=1"
        .asciz "mode=local"
        .asciz "package=demo"
        .asciz "element=b"
        .asciz "entry=tc.demo.b.main"
