; Table and entry loads are invariant: for a call inside a loop they are
; placed before the loop, so each iteration pays only the indirect call.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_loop.amc"
target triple = "x86_64-pc-linux-gnu"

declare void @touch(i64)

define void @loop_main(ptr %ctx, ptr %payload, i64 %n) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %exit, label %outer

outer:
  %i = phi i64 [ 0, %entry ], [ %i.next, %outer.latch ]
  br label %inner

inner:
  %j = phi i64 [ 0, %outer ], [ %j.next, %inner ]
  call void @touch(i64 %j)
  %j.next = add i64 %j, 1
  %j.done = icmp eq i64 %j.next, %n
  br i1 %j.done, label %outer.latch, label %inner

outer.latch:
  %i.next = add i64 %i, 1
  %i.done = icmp eq i64 %i.next, %n
  br i1 %i.done, label %exit, label %outer

exit:
  ret void
}

; CHECK-LABEL: define hidden void @loop_main(
; CHECK-LABEL: entry:
; CHECK: %tc.imports = load ptr, ptr @__tc_gotp
; CHECK: %tc.imp.touch = load ptr
; CHECK: br i1
; CHECK-LABEL: outer:
; CHECK-NOT: load ptr
; CHECK-LABEL: inner:
; CHECK-NOT: load ptr
; CHECK: call void %tc.imp.touch(i64 %j)
