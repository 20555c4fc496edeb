; The hash follows the content: the same module hashes the same wherever it
; comes from, and a one-constant change changes it.
; RUN: %jamopt -passes=twochains-jam-rewrite -S %s | grep -o 'hash=[0-9a-f]*' > %t.a
; RUN: sed 's/source_filename = "jam_h.amc"/source_filename = "elsewhere\/jam_h.amc"/' %s \
; RUN:   | %jamopt -passes=twochains-jam-rewrite -S | grep -o 'hash=[0-9a-f]*' > %t.b
; RUN: sed 's/i32 41/i32 42/' %s | %jamopt -passes=twochains-jam-rewrite -S \
; RUN:   | grep -o 'hash=[0-9a-f]*' > %t.c
; RUN: cmp %t.a %t.b
; RUN: not cmp -s %t.a %t.c

source_filename = "jam_h.amc"
target triple = "x86_64-pc-linux-gnu"

define void @h_main(ptr %ctx, ptr %payload, i64 %size) {
  store i32 41, ptr %payload
  ret void
}
