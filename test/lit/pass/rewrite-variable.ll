; Loads and stores of an outside variable go through the address held in the
; import table; the variable is no longer declared.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_counter.amc"
target triple = "x86_64-pc-linux-gnu"

@counter = external global i64

define void @counter_main(ptr %ctx, ptr %payload, i64 %size) {
  %v = load i64, ptr @counter
  %n = add i64 %v, %size
  store i64 %n, ptr @counter
  ret void
}

; CHECK-NOT: @counter = external
; CHECK-LABEL: define hidden void @counter_main(
; CHECK: [[TAB:%.*]] = load ptr, ptr @__tc_gotp
; CHECK: [[SLOT:%.*]] = getelementptr inbounds ptr, ptr [[TAB]], i64 0
; CHECK: [[ADDR:%.*]] = load ptr, ptr [[SLOT]]
; CHECK: load i64, ptr [[ADDR]]
; CHECK: store i64 {{.*}}, ptr [[ADDR]]
