; 128-bit division calls a compiler-runtime helper: it is made explicit and
; imported. Division by a power of two is a shift and stays.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_div.amc"
target triple = "aarch64-unknown-linux-gnu"

define i128 @div_main(ptr %ctx, ptr %payload, i64 %n) {
  %a = load i128, ptr %payload
  %b = zext i64 %n to i128
  %q = sdiv i128 %a, %b
  %r = urem i128 %q, %b
  %s = udiv i128 %r, 1024
  %d = sitofp i128 %s to double
  %i = fptoui double %d to i128
  ret i128 %i
}

; CHECK: c"__divti3\00__fixunsdfti\00__floattidf\00__umodti3\00"
; CHECK: call i128 %tc.imp.__divti3(i128 %a, i128 %b)
; CHECK: call i128 %tc.imp.__umodti3(
; CHECK: udiv i128 {{.*}}, 1024
; CHECK: call double %tc.imp.__floattidf(
; CHECK: call i128 %tc.imp.__fixunsdfti(
