#!/usr/bin/env bash
# Builds one jam both ways and runs it in the loader harness.
#   run-jam.sh [--gcc] <isa> <jam_x.amc> <workdir> <payload-hex> [harness args...]
# --gcc builds the injected image from `gcc -O2 -fPIC -fno-plt` instead of
# the plugin (the Local-Function copy still comes from the plugin).
# Tools come from the environment lit sets: TC_CLANG, TC_PLUGIN, TC_INCLUDE,
# TC_JAMLINK, TC_HARNESS_DIR (with <isa>/ subfolders for cross builds).
set -euo pipefail
inject_cc=plugin
if [ "$1" = --gcc ]; then inject_cc=gcc; shift; fi
isa=$1 src=$2 work=$3 payload=$4
shift 4
rm -rf "$work" && mkdir -p "$work"
name=$(basename "$src" .amc)
cc=("$TC_CLANG" --target="$isa-linux-gnu" -x c -O2 -fplugin="$TC_PLUGIN" -I"$TC_INCLUDE")

if [ "$inject_cc" = gcc ]; then
  gcc -x c -O2 -fPIC -fno-plt -I"$TC_INCLUDE" -c "$src" -o "$work/$name.o"
else
  "${cc[@]}" -c "$src" -o "$work/$name.o"
fi
"$TC_JAMLINK" "$work/$name.o" -o "$work/$name.jam"
"${cc[@]}" -fPIC -fplugin-arg-twochains-mode=local -fplugin-arg-twochains-package=harness \
    -c "$src" -o "$work/$name.local.o"
"$TC_JAMLINK" --shared "$work/$name.local.o" -o "$work/libharness_local.so"

if [ "$isa" = "$(uname -m)" ]; then
  run=("$TC_HARNESS_DIR/jam-harness")
  ried=$TC_HARNESS_DIR/libried_harness.so
  libdir=/lib/$isa-linux-gnu
else
  run=(qemu-"$isa" -L /usr/"$isa"-linux-gnu "$TC_HARNESS_DIR/$isa/jam-harness")
  ried=$TC_HARNESS_DIR/$isa/libried_harness.so
  libdir=/lib
fi
"${run[@]}" --image "$work/$name.jam" --local "$work/libharness_local.so" \
  --lib "$ried" --lib "$libdir/libm.so.6" --lib "$libdir/libgcc_s.so.1" \
  --state tc_example_array:4096 --state tc_example_total:8 \
  --state tc_harness_log:512 --state tc_harness_log_length:8 \
  --payload-hex "$payload" "$@"
