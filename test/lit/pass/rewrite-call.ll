; A direct call of an outside function becomes a PC-relative load of GOTP,
; an indexed load from the import table and an indirect call.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_hello.amc"
target triple = "x86_64-pc-linux-gnu"

@.str = private unnamed_addr constant [6 x i8] c"hello\00"

declare i32 @puts(ptr)

define void @hello_main(ptr %ctx, ptr %payload, i64 %size) {
  %r = call i32 @puts(ptr @.str)
  ret void
}

; CHECK: @__tc_gotp = internal externally_initialized global ptr null, section ".tc.gotp", align 8
; CHECK-NOT: declare i32 @puts
; CHECK-LABEL: define hidden void @hello_main(
; CHECK-NEXT: [[TAB:%.*]] = load ptr, ptr @__tc_gotp, align 8, !invariant.load
; CHECK-NEXT: [[SLOT:%.*]] = getelementptr inbounds ptr, ptr [[TAB]], i64 0
; CHECK-NEXT: [[PUTS:%.*]] = load ptr, ptr [[SLOT]], align 8, !invariant.load
; CHECK-NEXT: call i32 [[PUTS]](ptr @.str)
