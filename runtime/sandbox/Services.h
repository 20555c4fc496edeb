//===- Services.h - What the sandbox's call table serves ------------------===//
//
// A sandboxed jam reaches the runtime only through the call table at its
// region's base (docs/sandbox.md). Each import an image names is bound to
// a service by name; the service's gate in the region makes the runtime
// call, and the runtime's entry switches to the runtime's stack and calls
// the service, which checks every pointer it is given against the memory
// the jam may read or write. A check that fails abandons the jam.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SANDBOX_SERVICES_H
#define TWOCHAINS_RUNTIME_SANDBOX_SERVICES_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace twochains::rt {

/// The call table slot serving import Name (1 ...), or 0 if none does.
unsigned sandboxServiceSlot(const std::string &Name);
/// Slots in use: 0 (the exit) and the services.
unsigned sandboxSlots();
/// The runtime entry of slot S, for the call table.
const void *sandboxSlotEntry(unsigned S);

/// The memory of the running jam's region a service may touch: [Begin,
/// End) ranges, writable or only readable. Set while a jam runs.
struct SandboxArea {
  uintptr_t Begin = 0, End = 0;
  bool Writable = false;
};
constexpr unsigned SandboxMaxAreas = 6;
struct SandboxAreas {
  uintptr_t Base = 0;
  SandboxArea Areas[SandboxMaxAreas];
  unsigned Count = 0;
  /// Why the last service abandoned the jam.
  std::string Refusal;
};
/// The running jam's areas (one jam runs in the sandbox at a time).
SandboxAreas &sandboxAreas();

} // namespace twochains::rt

#endif
