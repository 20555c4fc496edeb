; A constant expression over an outside symbol (here a GEP into an outside
; array) becomes an instruction on the loaded address.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_table.amc"
target triple = "aarch64-unknown-linux-gnu"

@table = external global [16 x i32]

define i32 @table_main(ptr %ctx, ptr %payload, i64 %size) {
  %v = load i32, ptr getelementptr inbounds ([16 x i32], ptr @table, i64 0, i64 5)
  ret i32 %v
}

; CHECK-LABEL: define hidden i32 @table_main(
; CHECK: [[ADDR:%tc.imp.table]] = load ptr, ptr %tc.slot.0
; CHECK: [[ELT:%.*]] = getelementptr inbounds [16 x i32], ptr [[ADDR]], i64 0, i64 5
; CHECK: load i32, ptr [[ELT]]
