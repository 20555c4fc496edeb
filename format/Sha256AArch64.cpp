//===- Sha256AArch64.cpp - SHA-256 blocks on aarch64 ----------------------===//
//
// The ARMv8 SHA2 instructions are not used yet: the portable code hashes.
//
//===----------------------------------------------------------------------===//
#include "Sha256.h"

namespace twochains::format {

Sha256BlockFn sha256HardwareBlock() { return nullptr; }

} // namespace twochains::format
