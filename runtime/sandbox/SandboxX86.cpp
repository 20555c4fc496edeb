//===- SandboxX86.cpp - x86_64 has no sandbox yet -------------------------===//
//
// Sandboxed jams are aarch64 code (docs/sandbox.md); an x86_64 receiver
// refuses to run them.
//
//===----------------------------------------------------------------------===//
#include "sandbox/Region.h"

namespace twochains::rt {

bool enterSandbox(const uint8_t *, void *, void *, size_t, uint8_t *, uint8_t *, const uint8_t *) {
  return false;
}

const void *sandboxExitEntry() { return nullptr; }

} // namespace twochains::rt
