; A reference used on one path only is loaded on that path: placement is the
; nearest common dominator of the uses, not the function entry.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_rare.amc"
target triple = "x86_64-pc-linux-gnu"

declare void @abort()
declare void @log_value(i64)

define void @rare_main(ptr %ctx, ptr %payload, i64 %n) {
entry:
  %bad = icmp ugt i64 %n, 4096
  br i1 %bad, label %fail, label %ok

fail:
  call void @abort()
  unreachable

ok:
  call void @log_value(i64 %n)
  call void @log_value(i64 %n)
  ret void
}

; CHECK-LABEL: entry:
; CHECK-NEXT: %bad = icmp
; CHECK-NEXT: %tc.imports = load ptr, ptr @__tc_gotp
; CHECK-NEXT: br i1 %bad
; CHECK-LABEL: fail:
; CHECK-NEXT: %tc.slot.0 = getelementptr inbounds ptr, ptr %tc.imports, i64 0
; CHECK-NEXT: %tc.imp.abort = load ptr, ptr %tc.slot.0
; CHECK-NEXT: call void %tc.imp.abort()
; CHECK-LABEL: ok:
; CHECK-NEXT: %tc.slot.1 = getelementptr inbounds ptr, ptr %tc.imports, i64 1
; CHECK-NEXT: %tc.imp.log_value = load ptr, ptr %tc.slot.1
; CHECK-NEXT: call void %tc.imp.log_value(i64 %n)
; CHECK-NEXT: call void %tc.imp.log_value(i64 %n)
