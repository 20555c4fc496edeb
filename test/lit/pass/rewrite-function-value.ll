; An outside function used as a value (passed as an argument, stored) is
; taken from the import table like a call target.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_sort.amc"
target triple = "x86_64-pc-linux-gnu"

@hook = internal global ptr null

declare void @qsort(ptr, i64, i64, ptr)
declare i32 @compare_ints(ptr, ptr)

define void @sort_main(ptr %ctx, ptr %payload, i64 %size) {
  call void @qsort(ptr %payload, i64 %size, i64 4, ptr @compare_ints)
  store ptr @compare_ints, ptr @hook
  ret void
}

; Import table order is by name.
; CHECK: @tc.jam.imports = private constant [19 x i8] c"compare_ints\00qsort\00", section ".tc.imports"
; CHECK-LABEL: define hidden void @sort_main(
; CHECK-DAG: [[CMP:%tc.imp.compare_ints]] = load ptr, ptr %tc.slot.0
; CHECK-DAG: [[QSORT:%tc.imp.qsort]] = load ptr, ptr %tc.slot.1
; CHECK: call void [[QSORT]](ptr %payload, i64 %size, i64 4, ptr [[CMP]])
; CHECK: store ptr [[CMP]], ptr @hook
; CHECK-NOT: @compare_ints
