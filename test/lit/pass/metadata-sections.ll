; The object carries element, entry, ISA, ABI version, import names and a
; content hash in non-allocated, link-excluded .tc.* sections.
; RUN: %jamopt -passes=twochains-jam-rewrite %s -o %t.bc
; RUN: llc -filetype=obj -relocation-model=pic %t.bc -o %t.o
; RUN: llvm-readelf -S %t.o | FileCheck %s --check-prefix=SECTIONS
; RUN: llvm-readelf -p .tc.jam -p .tc.imports %t.o | FileCheck %s

source_filename = "jam_meta.amc"
target triple = "x86_64-pc-linux-gnu"

declare i32 @puts(ptr)
@msg = private constant [3 x i8] c"hi\00"

define void @meta_main(ptr %ctx, ptr %payload, i64 %size) {
  call i32 @puts(ptr @msg)
  ret void
}

; SECTIONS: .tc.gotp PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} 000008 00 WA 0 0 8
; SECTIONS: .tc.jam PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} {{[0-9a-f]+}} 00 E 0 0 1
; SECTIONS: .tc.imports PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} 000005 00 E 0 0 1

; CHECK: String dump of section '.tc.jam':
; CHECK-NEXT: tc.abi=1
; CHECK-NEXT: mode=inject
; CHECK-NEXT: element=meta
; CHECK-NEXT: entry=meta_main
; CHECK-NEXT: isa=x86_64
; CHECK-NEXT: gotp=__tc_gotp
; CHECK-NEXT: imports=1
; CHECK-NEXT: hash={{[0-9a-f]{64}$}}
; CHECK: String dump of section '.tc.imports':
; CHECK-NEXT: puts
