#!/usr/bin/env bash
# Builds one jam both ways and runs it in the loader harness.
#   run-jam.sh [--gcc] [--sandbox] [--part <file.c>]... <isa> <jam_x.amc> <workdir> <payload-hex> [harness args...]
# --gcc builds the injected image from `gcc -O2 -fPIC -fno-plt` instead of
# the plugin (the Local-Function copy still comes from the plugin).
# --part adds one of the jam's other C files (a jam of several files): it
# is compiled to bitcode and linked into the jam, in both modes, as
# twochains-pkg-gen does for a jam folder; with --gcc, the injected image
# is linked by jamlink from one gcc object per file instead.
# --sandbox builds the injected image for the sandbox (twochains-jamcc
# --sandbox's flags, jamlink --sandbox; aarch64) and the harness runs it in
# sandbox regions (TC_SANDBOX_DIR: the sandbox's assembler hook).
# Tools come from the environment lit sets: TC_CLANG, TC_PLUGIN, TC_INCLUDE,
# TC_JAMLINK, TC_HARNESS_DIR (with <isa>/ subfolders for cross builds).
set -euo pipefail
inject_cc=plugin
sandbox=
parts=()
while [ $# -gt 0 ]; do
  case $1 in
    --gcc) inject_cc=gcc; shift ;;
    --sandbox) sandbox=1; shift ;;
    --part) parts+=("$2"); shift 2 ;;
    *) break ;;
  esac
done
isa=$1 src=$2 work=$3 payload=$4
shift 4
rm -rf "$work" && mkdir -p "$work"
name=$(basename "$src" .amc)
cc=("$TC_CLANG" --target="$isa-linux-gnu" -x c -O2 -fplugin="$TC_PLUGIN" -I"$TC_INCLUDE")

links=()
for part in "${parts[@]}"; do
  bc=$work/$(basename "$part" .c).bc
  "${cc[@]}" -fplugin-arg-twochains-part -emit-llvm -c "$part" -o "$bc"
  links+=("-fplugin-arg-twochains-link=$bc")
done

objects=("$work/$name.o")
if [ "$inject_cc" = gcc ]; then
  gcc_cc=(gcc -x c -O2 -fPIC -fno-plt -I"$TC_INCLUDE")
  "${gcc_cc[@]}" -c "$src" -o "$work/$name.o"
  for part in "${parts[@]}"; do
    objects+=("$work/$(basename "$part" .c).gcc.o")
    "${gcc_cc[@]}" -c "$part" -o "${objects[-1]}"
  done
elif [ -n "$sandbox" ]; then
  "${cc[@]}" -fplugin-arg-twochains-sandbox -fno-integrated-as -B"$TC_SANDBOX_DIR" "${links[@]}" \
    -c "$src" -o "$work/$name.o"
else
  "${cc[@]}" "${links[@]}" -c "$src" -o "$work/$name.o"
fi
"$TC_JAMLINK" ${sandbox:+--sandbox} "${objects[@]}" -o "$work/$name.jam"
"${cc[@]}" -fPIC -fplugin-arg-twochains-mode=local -fplugin-arg-twochains-package=harness \
    "${links[@]}" -c "$src" -o "$work/$name.local.o"
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
  --payload-hex "$payload" ${sandbox:+--sandbox} "$@"
