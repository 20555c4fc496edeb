#!/usr/bin/env bash
# From an installed Two-Chains only: build the standard package (x86_64 and
# aarch64) and the out-of-tree example project with CMake, validate their
# manifests, and run the example.
#   packages.sh <build-dir> <source-dir> <scratch-dir>
set -euo pipefail
BUILD=$1 SRC=$2 WORK=$3
rm -rf "$WORK" && mkdir -p "$WORK"
cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
P=$WORK/prefix

# The standard package, from its sources, against the installed prefix.
cp -r "$SRC/stdlib-jams" "$WORK/stdlib-src"
cmake -S "$WORK/stdlib-src" -B "$WORK/stdlib" -G Ninja -DCMAKE_PREFIX_PATH="$P" \
      -DCMAKE_INSTALL_PREFIX="$WORK/installed" "-DTWOCHAINS_STDLIB_ISAS=x86_64;aarch64" >/dev/null
cmake --build "$WORK/stdlib"
cmake --install "$WORK/stdlib" >/dev/null
M=$WORK/installed/lib/twochains/packages/stdlib/manifest.tcm
"$P/bin/twochains-pkg-gen" --check-manifest "$M"
for isa in x86_64 aarch64; do
  for jam in indirect_put server_side_sum put scatter append kv_put kv_del; do
    [ -f "$WORK/installed/lib/twochains/packages/stdlib/$isa/jams/$jam.jam" ] \
      || { echo "missing $isa image of $jam"; exit 1; }
  done
done
cmp "$SRC/stdlib-jams/src/twochains.ids" "$WORK/stdlib-src/src/twochains.ids" \
  || { echo "the standard package's element IDs changed: commit twochains.ids"; exit 1; }

# The example project.
cp -r "$SRC/examples/package-demo" "$WORK/demo-src"
cmake -S "$WORK/demo-src" -B "$WORK/demo" -G Ninja -DCMAKE_PREFIX_PATH="$P" >/dev/null
cmake --build "$WORK/demo"
"$WORK/demo/package-demo"
"$P/bin/twochains-pkg-gen" --check-manifest "$WORK/demo/twochains/demo/lib/twochains/packages/demo/manifest.tcm"
echo "packages from the installed prefix: OK"
