; Math intrinsics that some ISA lowers to libm calls, and frem, become calls
; through the import table under their libm names; sqrt, which every ISA
; has an instruction for, stays.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s

source_filename = "jam_math.amc"
target triple = "x86_64-pc-linux-gnu"

define double @math_main(ptr %ctx, ptr %payload, i64 %n) {
  %x = load double, ptr %payload
  %f = load float, ptr %payload
  %s = call double @llvm.sin.f64(double %x)
  %fl = call float @llvm.floor.f32(float %f)
  %fe = fpext float %fl to double
  %p = call double @llvm.pow.f64(double %s, double %fe)
  %r = frem double %p, 3.0
  %q = call double @llvm.sqrt.f64(double %r)
  ret double %q
}

declare double @llvm.sin.f64(double)
declare float @llvm.floor.f32(float)
declare double @llvm.pow.f64(double, double)
declare double @llvm.sqrt.f64(double)

; CHECK: c"floorf\00fmod\00pow\00sin\00"
; CHECK: call double %tc.imp.sin(double %x)
; CHECK: call float %tc.imp.floorf(float %f)
; CHECK: call double %tc.imp.pow(double
; CHECK: call double %tc.imp.fmod(double
; CHECK: call double @llvm.sqrt.f64(
