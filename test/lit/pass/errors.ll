; Errors of the passes under opt.
; RUN: split-file %s %t
; RUN: not %jamopt -passes=twochains-jam-rewrite -disable-output %t/no-entry.ll 2>&1 | FileCheck %s --check-prefix=NOENTRY
; RUN: not %jamopt -passes=twochains-jam-rewrite -disable-output %t/no-name.ll 2>&1 | FileCheck %s --check-prefix=NONAME
; RUN: %jamopt -passes=twochains-jam-rewrite -S %t/static-init.ll 2>&1 | FileCheck %s --check-prefix=INIT
; RUN: not %jamopt -passes=twochains-jam-rewrite -disable-output %t/tls.ll 2>&1 | FileCheck %s --check-prefix=TLS
; RUN: not %jamopt '-passes=twochains-jam-rewrite<colour=blue>' -disable-output %t/no-entry.ll 2>&1 | FileCheck %s --check-prefix=PARAM
; RUN: not %jamopt -passes=twochains-jam-local -disable-output %t/no-entry.ll 2>&1 | FileCheck %s --check-prefix=NOPKG
; RUN: not %jamopt '-passes=twochains-jam-local<package=a.b>' -disable-output %t/no-entry.ll 2>&1 | FileCheck %s --check-prefix=BADPKG

; NOENTRY: error: no jam entry: define 'x_main' or mark a function with __attribute__((jam_entry))
; NONAME: error: cannot tell the element name of 'helper.c': name the source jam_<name>.amc or pass element=<name>
; An outside address in a static initialiser stays a relocation, which
; jamlink makes an import fixup applied on arrival (it was an error).
; INIT-NOT: error:
; INIT: @handlers = internal constant [1 x ptr] [ptr @abort]
; INIT: declare void @abort()
; TLS: error: thread-local variable 'per_thread' cannot be used in a jam
; PARAM: unknown twochains jam pass parameter 'colour=blue'
; NOPKG: error: local mode needs a package name (package=<name>)
; BADPKG: error: invalid package name 'a.b'

;--- no-entry.ll
source_filename = "jam_x.amc"
define void @not_the_entry() {
  ret void
}

;--- no-name.ll
source_filename = "helper.c"
define void @helper_main(ptr %c, ptr %p, i64 %n) {
  ret void
}

;--- static-init.ll
source_filename = "jam_y.amc"
declare void @abort()
@handlers = internal constant [1 x ptr] [ptr @abort]
define ptr @y_main(ptr %c, ptr %p, i64 %n) {
  ret ptr @handlers
}

;--- tls.ll
source_filename = "jam_z.amc"
@per_thread = thread_local global i32 0
define void @z_main(ptr %c, ptr %p, i64 %n) {
  store i32 1, ptr @per_thread
  ret void
}
