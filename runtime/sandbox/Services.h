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

/// A service: the jam's x0..x5 in, x0 out.
using SandboxServe = uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
/// Adds the service of import Name for every region of the process (the
/// layers above add the jam API's this way, before any image needs them).
/// False if the call table is full; adding a name again changes nothing.
bool addSandboxService(const char *Name, SandboxServe Serve);

/// The call table slot serving import Name (1 ...), or 0 if none does.
unsigned sandboxServiceSlot(const std::string &Name);
/// The call table's slots: 0 (the exit) and one for each service there
/// may be; a slot no service was added for refuses its call.
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
  /// What the jam runs for (the runner's, opaque here): the jam API's
  /// services act on it, never on a pointer the jam passes.
  void *Caller = nullptr;
};
/// The running jam's areas (one jam runs in the sandbox at a time).
SandboxAreas &sandboxAreas();

/// For services: the runtime address of the jam's pointer P, checked to
/// span N bytes of one area of the running jam (writable if Write); a
/// pointer that does not abandons the jam, the refusal naming Service and
/// What. Never returns null.
uint8_t *sandboxPointer(const char *Service, const char *What, uint64_t P, uint64_t N, bool Write);
/// The same for a string ending inside the area it starts in, at most
/// MaxLength bytes before its NUL.
const char *sandboxString(const char *Service, const char *What, uint64_t P, size_t MaxLength);

} // namespace twochains::rt

#endif
