//===- Region.h - A tenant's sandbox region -------------------------------===//
//
// Verified jams run inside a region of their own (docs/sandbox.md): 4 GiB
// of address space aligned to 4 GiB, with 128 KiB guard zones that are
// never mapped on either side. The sandbox's rules keep every load, store
// and branch of the code inside it; this class lays the region out,
// installs verified images into it and runs them there.
//
//   0           call table (read-only): the runtime's entries
//   64 KiB      the exit stub (read+execute): `ldr x30, [x27]; blr x30`
//   1 MiB       code (read+execute once verified)
//   1 GiB+1 MiB the code's data part (read+write)
//   3 GiB       stack (1 MiB, read+write), then the payload (4 MiB)
//
// One call at a time runs in a process's regions (run() holds a lock):
// the runtime's saved state is one per process, and two jams sharing a
// region could write each other's stacks.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SANDBOX_REGION_H
#define TWOCHAINS_RUNTIME_SANDBOX_REGION_H

#include "wire/Formats.h"

#include "twochains/status.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace twochains::rt {

struct SandboxLayout {
  static constexpr uint64_t RegionBytes = uint64_t(4) << 30;
  static constexpr uint64_t GuardBytes = 128 << 10;
  static constexpr uint64_t CallTable = 0, CallTableBytes = 4096;
  static constexpr uint64_t ExitStub = 64 << 10;
  static constexpr uint64_t Code = 1 << 20;
  static constexpr uint64_t Stack = uint64_t(3) << 30, StackBytes = 1 << 20;
  static constexpr uint64_t Payload = Stack + StackBytes, PayloadBytes = 4 << 20;
  /// Call table slots.
  static constexpr unsigned ExitSlot = 0;
};

class SandboxRegion {
public:
  SandboxRegion() = default;
  SandboxRegion(const SandboxRegion &) = delete;
  SandboxRegion &operator=(const SandboxRegion &) = delete;
  ~SandboxRegion();

  /// Reserves the region and maps its call table, exit stub and stack.
  tc_status_t create(std::string &Error);
  uint8_t *base() const { return Base; }

  /// Installs a sandboxed image at the region's code place: its text is
  /// verified as installed (GOTP cell and fixups applied) before it becomes
  /// executable. Images with imports are refused: the sandbox's call table
  /// serves none yet (docs/sandbox.md). Entry is set on success.
  tc_status_t install(const JamImageData &Image, const uint8_t *&Entry, std::string &Error);

  /// Runs Entry(Ctx, payload, Size) on the region's stack with the payload
  /// copied into the region, and copies it back out after.
  tc_status_t run(const uint8_t *Entry, void *Ctx, uint8_t *Payload, size_t Size,
                  std::string &Error);

private:
  uint8_t *Reservation = nullptr;
  size_t ReservationBytes = 0;
  uint8_t *Base = nullptr;
  bool Installed = false;
};

/// Runs Entry in the region at Base with the sandbox's registers set
/// (aarch64: SandboxAArch64.cpp); false where the ISA has no sandbox.
bool enterSandbox(const uint8_t *Entry, void *Ctx, void *Payload, size_t Size, uint8_t *Base,
                  uint8_t *StackTop, const uint8_t *ExitStub);
/// The runtime entry the exit stub calls, for the call table.
const void *sandboxExitEntry();

} // namespace twochains::rt

#endif
