# Two local-mode objects that both define `dup`: LLD refuses them.
        .text
        .globl tc.demo.a.main, dup
tc.demo.a.main: ret
dup:    ret
        .section .tc.jam,"e",@progbits
        .asciz "tc.abi=1"
        .asciz "mode=local"
        .asciz "package=demo"
        .asciz "element=a"
        .asciz "entry=tc.demo.a.main"
