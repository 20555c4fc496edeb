; A call made indirect keeps the function attributes of the declaration it
; replaced: noreturn lets the caller end in unreachable, returns_twice keeps
; setjmp's caller from being optimised as if it returned once.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_attrs.amc"
target triple = "x86_64-pc-linux-gnu"

declare void @abort() noreturn nounwind
declare i32 @_setjmp(ptr) returns_twice

define void @attrs_main(ptr %ctx, ptr %payload, i64 %n) {
  %r = call i32 @_setjmp(ptr %payload)
  %c = icmp eq i32 %r, 0
  br i1 %c, label %die, label %ok
die:
  call void @abort()
  unreachable
ok:
  ret void
}

; CHECK: call i32 %tc.imp._setjmp(ptr %payload) #[[SJ:[0-9]+]]
; CHECK: call void %tc.imp.abort() #[[AB:[0-9]+]]
; CHECK-DAG: attributes #[[SJ]] = { returns_twice }
; CHECK-DAG: attributes #[[AB]] = { noreturn nounwind }
