//===- Region.h - A tenant's sandbox region -------------------------------===//
//
// Verified jams run inside a region of their own (docs/sandbox.md): 4 GiB
// of address space aligned to 4 GiB, with 128 KiB guard zones that are
// never mapped on either side. The sandbox's rules keep every load, store
// and branch of the code inside it; this class lays the region out,
// installs verified images into it and runs them there.
//
//   0           call table (read-only): the runtime's entries, slot 0 the
//               exit, slots 1 ... the services (Services.h)
//   4 KiB       import table (read-only): an image's imports, each the
//               address of its service's gate
//   64 KiB      gates (read+execute): the exit's `ldr x30, [x27]; blr
//               x30`, then one of 32 bytes per service: `mov x17, x30;
//               ldr x30, [x27, #8*s]; blr x30; add x30, x27, w17, uxtw; ret`
//   1 MiB       code: each image's text (read+execute once verified)
//   1 GiB+1 MiB each image's data part, 1 GiB past its text (read+write)
//   3 GiB       stack (1 MiB, read+write), then the payload (4 MiB)
//
// One jam runs in a process's regions at a time (the caller holds hold()
// across run()): the runtime's saved state is one per process, and two
// jams sharing a region could write each other's stacks. A region holds
// many images, each with its own import table, code and statics.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SANDBOX_REGION_H
#define TWOCHAINS_RUNTIME_SANDBOX_REGION_H

#include "verify/Verify.h"
#include "wire/Formats.h"

#include "twochains/status.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace twochains::rt {

struct SandboxLayout {
  static constexpr uint64_t RegionBytes = uint64_t(4) << 30;
  static constexpr uint64_t GuardBytes = 128 << 10;
  static constexpr uint64_t CallTable = 0, CallTableBytes = 4096;
  static constexpr uint64_t ImportTable = 4096, ImportTableBytes = 60 << 10;
  static constexpr uint64_t ExitGate = 64 << 10, GateBytes = 32;
  static constexpr uint64_t Code = 1 << 20;
  static constexpr uint64_t Stack = uint64_t(3) << 30, StackBytes = 1 << 20;
  static constexpr uint64_t Payload = Stack + StackBytes, PayloadBytes = 4 << 20;
#if defined(__x86_64__)
  /// Call table slots: the region's base (what `addq %gs:0, %rR` adds),
  /// the services, then the exit. A gate is two bundles: the call ending
  /// the first, the masked return in the second.
  static constexpr unsigned BaseSlot = 0, ExitSlot = 16;
  static constexpr uint64_t GateStride = 64;
#else
  /// Call table slots: the exit, then the services.
  static constexpr unsigned ExitSlot = 0;
  static constexpr uint64_t GateStride = GateBytes;
#endif
};

/// An image installed in a region: where it runs and what it owns.
struct SandboxedImage {
  const uint8_t *Entry = nullptr;
  uintptr_t Code = 0, CodeEnd = 0, Statics = 0, StaticsEnd = 0;
};

class SandboxRegion {
public:
  SandboxRegion() = default;
  SandboxRegion(const SandboxRegion &) = delete;
  SandboxRegion &operator=(const SandboxRegion &) = delete;
  ~SandboxRegion();

  /// Reserves the region and maps its call table, exit gate and stack.
  tc_status_t create(std::string &Error);
  uint8_t *base() const { return Base; }
  /// Where the code of the images installed so far lies: a PC there is
  /// the jam's own (the time limit's test, containment/JamGuard.h).
  uintptr_t codeBegin() const { return uintptr_t(Base) + SandboxLayout::Code; }
  uintptr_t codeEnd() const { return uintptr_t(Base) + NextCode; }

  /// Installs a sandboxed image at the next free place of the region's
  /// code: its imports bound to the services' gates in an import table of
  /// its own (an import no service serves is refused), its text verified
  /// as installed (GOTP cell and fixups applied) before it becomes
  /// executable. Out is set on success.
  tc_status_t install(const JamImageData &Image, SandboxedImage &Out, std::string &Error);

  /// Runs Image's entry (Ctx, payload, Size) on the region's stack with
  /// the payload copied into the region, and copies it back out after. A
  /// service that refuses its arguments abandons the jam: TC_ERR_JAM_FAULT,
  /// Error why. The caller holds hold().
  tc_status_t run(const SandboxedImage &Image, void *Ctx, uint8_t *Payload, size_t Size,
                  std::string &Error);

  /// The process's sandbox lock, to hold across run() from a frame above
  /// any recovery point: a fault that jumps back unwinds nothing.
  static std::unique_lock<std::mutex> hold();

private:
  uint8_t *Reservation = nullptr;
  size_t ReservationBytes = 0;
  uint8_t *Base = nullptr;
  /// The next free offsets of the code and of the import tables.
  uint64_t NextCode = SandboxLayout::Code, NextImports = SandboxLayout::ImportTable;
};

/// Whether this ISA has the sandbox.
bool sandboxAvailable();

/// What differs by ISA (SandboxAArch64.cpp, SandboxX86.cpp):

/// Runs Entry in the region at Base with the sandbox's registers set;
/// false where the ISA has no sandbox. Abandoned: a service left the jam.
bool enterSandbox(const uint8_t *Entry, void *Ctx, void *Payload, size_t Size, uint8_t *Base,
                  uint8_t *StackTop, const uint8_t *ExitGate, bool &Abandoned);
/// Fills the call table (CallTableBytes at Base) for Slots slots and the
/// gate page (4 KiB at Base + ExitGate, whole: a confined jump may land on
/// any of it).
void writeSandboxGates(uint8_t *Base, unsigned Slots);
/// The ISA's verifier over Bytes of code lying CodeOffset into a region.
bool verifySandboxCode(const uint8_t *Code, size_t Bytes, uint64_t CodeOffset,
                       verify::Violation &V);
/// What fills an executable page of the region past an image's text: a
/// trap, never code that reaches anything.
uint8_t sandboxCodeFill();

} // namespace twochains::rt

#endif
