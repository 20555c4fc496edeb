; Inject mode keeps the sender-side helpers out of the shipped code; local
; mode exports them under package-unique names beside the entry.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | FileCheck %s --check-prefix=INJECT
; RUN: %jamopt '-passes=twochains-jam-local<package=demo>' -S %s | FileCheck %s --check-prefix=LOCAL

source_filename = "jam_echo.amc"
target triple = "x86_64-pc-linux-gnu"

declare ptr @memcpy(ptr, ptr, i64)

define i64 @echo_payload_size(ptr %args) {
  ret i64 64
}

define i64 @echo_payload_init(ptr %args, ptr %payload) {
  %s = call i64 @echo_payload_size(ptr %args)
  call ptr @memcpy(ptr %payload, ptr %args, i64 %s)
  ret i64 %s
}

define void @echo_main(ptr %ctx, ptr %payload, i64 %n) {
  ret void
}

; INJECT-NOT: payload_size
; INJECT-NOT: payload_init
; INJECT-NOT: memcpy
; INJECT: define hidden void @echo_main(

; LOCAL: c"tc.abi=1\00mode=local\00package=demo\00element=echo\00isa=x86_64\00entry=tc.demo.echo.main\00payload-size=tc.demo.echo.payload_size\00payload-init=tc.demo.echo.payload_init\00hash=
; LOCAL-NOT: __tc_gotp
; LOCAL: declare extern_weak ptr @memcpy(
; LOCAL: define i64 @tc.demo.echo.payload_size(
; LOCAL: define i64 @tc.demo.echo.payload_init(
; LOCAL: call i64 @tc.demo.echo.payload_size(
; LOCAL: call ptr @memcpy(
; LOCAL: define void @tc.demo.echo.main(
