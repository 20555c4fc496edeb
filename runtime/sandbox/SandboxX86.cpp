//===- SandboxX86.cpp - x86_64 has no sandbox yet -------------------------===//
//
// Sandboxed jams are aarch64 code (docs/sandbox.md); an x86_64 receiver
// refuses to run them.
//
//===----------------------------------------------------------------------===//
#include "sandbox/Region.h"
#include "sandbox/Services.h"

namespace twochains::rt {

bool enterSandbox(const uint8_t *, void *, void *, size_t, uint8_t *, uint8_t *, const uint8_t *,
                  bool &) {
  return false;
}

bool sandboxAvailable() { return false; }

const void *sandboxSlotEntry(unsigned) { return nullptr; }

} // namespace twochains::rt

extern "C" {
// The services' way out of a jam; never reached where no jam runs.
[[noreturn]] __attribute__((visibility("hidden"))) void twochains_sandbox_abort() {
  __builtin_trap();
}
}
