; The import table lists each outside symbol once, sorted by name, whatever
; the order and number of references; .tc.jam counts them.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_order.amc"
target triple = "x86_64-pc-linux-gnu"

@zeta = external global i32
declare void @beta()
declare void @alpha()

define void @order_main(ptr %ctx, ptr %payload, i64 %size) {
  call void @beta()
  store i32 1, ptr @zeta
  call void @alpha()
  call void @beta()
  ret void
}

; CHECK: imports=3
; CHECK: @tc.jam.imports = private constant [16 x i8] c"alpha\00beta\00zeta\00", section ".tc.imports", align 1, !exclude
; CHECK: %tc.slot.1 = getelementptr inbounds ptr, ptr %tc.imports, i64 1
; CHECK-NEXT: %tc.imp.beta = load ptr, ptr %tc.slot.1
; CHECK: %tc.slot.2 = getelementptr inbounds ptr, ptr %tc.imports, i64 2
; CHECK-NEXT: %tc.imp.zeta = load ptr, ptr %tc.slot.2
; CHECK: %tc.slot.0 = getelementptr inbounds ptr, ptr %tc.imports, i64 0
; CHECK-NEXT: %tc.imp.alpha = load ptr, ptr %tc.slot.0
