; memcpy/memmove/memset intrinsics the backend would turn into library calls
; (variable or large length) become calls through the import table; short
; constant ones are expanded inline: .inline intrinsics, which no backend may
; turn into a call, and a load/store pair for memmove.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_mem.amc"
target triple = "x86_64-pc-linux-gnu"

define void @mem_main(ptr %ctx, ptr %payload, i64 %n) {
  %buf = alloca [512 x i8]
  call void @llvm.memcpy.p0.p0.i64(ptr %buf, ptr %payload, i64 512, i1 false)
  call void @llvm.memmove.p0.p0.i64(ptr %payload, ptr %buf, i64 %n, i1 false)
  call void @llvm.memset.p0.i64(ptr %buf, i8 7, i64 %n, i1 false)
  call void @llvm.memcpy.p0.p0.i64(ptr %payload, ptr %buf, i64 64, i1 false)
  call void @llvm.memset.p0.i64(ptr %buf, i8 0, i64 16, i1 false)
  call void @llvm.memmove.p0.p0.i64(ptr %buf, ptr %payload, i64 24, i1 false)
  ret void
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memmove.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; CHECK: c"memcpy\00memmove\00memset\00"
; CHECK: call ptr %tc.imp.memcpy(ptr %buf, ptr %payload, i64 512)
; CHECK: call ptr %tc.imp.memmove(ptr %payload, ptr %buf, i64 %n)
; CHECK: call ptr %tc.imp.memset(ptr %buf, i32 7, i64 %n)
; CHECK: call void @llvm.memcpy.inline.p0.p0.i64(ptr %payload, ptr %buf, i64 64, i1 false)
; CHECK: call void @llvm.memset.inline.p0.i64(ptr %buf, i8 0, i64 16, i1 false)
; CHECK: [[V:%.*]] = load <24 x i8>, ptr %payload, align 1
; CHECK-NEXT: store <24 x i8> [[V]], ptr %buf, align 1
; CHECK-NOT: call void @llvm.memmove
