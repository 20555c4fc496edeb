; Every definition but the entry becomes internal, so calls among them are
; PC-relative; the entry is hidden, so a recursive call binds in the image.
; Definitions nothing reaches any more are dropped.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_rec.amc"
target triple = "x86_64-pc-linux-gnu"

@shared_state = global i32 0
@unused_state = global i32 0

define i32 @helper(i32 %x) {
  ret i32 %x
}

define void @unreached() {
  ret void
}

define void @rec_main(ptr %ctx, ptr %payload, i64 %n) {
  %c = icmp eq i64 %n, 0
  br i1 %c, label %done, label %more
more:
  %m = sub i64 %n, 1
  call void @rec_main(ptr %ctx, ptr %payload, i64 %m)
  %v = call i32 @helper(i32 1)
  store i32 %v, ptr @shared_state
  br label %done
done:
  ret void
}

; CHECK: @shared_state = internal global i32 0
; CHECK-NOT: @unused_state
; CHECK: imports=0
; CHECK-NOT: .tc.imports
; CHECK: define internal i32 @helper(
; CHECK-NOT: @unreached
; CHECK: define hidden void @rec_main(
; CHECK: call void @rec_main(
