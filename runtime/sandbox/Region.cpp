//===- Region.cpp - A tenant's sandbox region -----------------------------===//
#include "sandbox/Region.h"
#include "sandbox/Services.h"

#include "image/ImageInstall.h"
#include "verify/Verify.h"

#include <algorithm>
#include <cstring>
#include <vector>
#include <mutex>
#include <sys/mman.h>

using namespace twochains::rt;

namespace {

/// `ldr x30, [x27, #ExitSlot*8]; blr x30`: a runtime call of the exit entry.
constexpr uint32_t ExitStubCode[] = {0xF940037Eu | (SandboxLayout::ExitSlot << 10), 0xD63F03C0u};

/// Service slot S's stub: `mov x17, x30; ldr x30, [x27, #8*S]; blr x30;
/// add x30, x27, w17, uxtw; ret` (the services' entries keep x17).
void writeServiceStub(uint8_t *At, unsigned S) {
  const uint32_t Code[] = {0xAA1E03F1u, 0xF940037Eu | (S << 10), 0xD63F03C0u,
                           twochains::verify::aarch64Confine(30, 17), 0xD65F03C0u};
  std::memcpy(At, Code, sizeof Code);
}

std::mutex &sandboxLock() {
  static std::mutex Lock;
  return Lock;
}

bool protect(uint8_t *At, uint64_t Bytes, int Prot) { return mprotect(At, Bytes, Prot) == 0; }

} // namespace

SandboxRegion::~SandboxRegion() {
  if (Reservation)
    munmap(Reservation, ReservationBytes);
}

tc_status_t SandboxRegion::create(std::string &Error) {
  using L = SandboxLayout;
  // Twice the region, to find a 4 GiB boundary inside; the guard zones are
  // part of the reservation and stay inaccessible.
  size_t Bytes = 2 * L::RegionBytes + 2 * L::GuardBytes;
  void *R = mmap(nullptr, Bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (R == MAP_FAILED) {
    Error = "cannot reserve a sandbox region (8 GiB of address space)";
    return TC_ERR_NO_MEMORY;
  }
  uintptr_t First = uintptr_t(R),
            Aligned = (First + L::GuardBytes + L::RegionBytes - 1) & ~uintptr_t(L::RegionBytes - 1);
  uintptr_t Keep = Aligned - L::GuardBytes, KeepEnd = Aligned + L::RegionBytes + L::GuardBytes;
  if (Keep > First)
    munmap(R, Keep - First);
  if (First + Bytes > KeepEnd)
    munmap(reinterpret_cast<void *>(KeepEnd), First + Bytes - KeepEnd);
  Reservation = reinterpret_cast<uint8_t *>(Keep);
  ReservationBytes = KeepEnd - Keep;
  Base = reinterpret_cast<uint8_t *>(Aligned);

  // The call table and the exit stub: written, then read-only and
  // read+execute. The stub is verified like any code in the region.
  if (!protect(Base, L::CallTableBytes, PROT_READ | PROT_WRITE) ||
      !protect(Base + L::ExitStub, 4096, PROT_READ | PROT_WRITE) ||
      !protect(Base + L::Stack, L::StackBytes + L::PayloadBytes, PROT_READ | PROT_WRITE)) {
    Error = "cannot map the sandbox region's parts";
    return TC_ERR_NO_MEMORY;
  }
  for (unsigned S = 0; S < sandboxSlots(); ++S)
    reinterpret_cast<const void **>(Base)[S] = sandboxSlotEntry(S);
  std::memcpy(Base + L::ExitStub, ExitStubCode, sizeof ExitStubCode);
  for (unsigned S = 1; S < sandboxSlots(); ++S)
    writeServiceStub(Base + L::ExitStub + L::StubBytes * S, S);
  verify::Violation V;
  if (!verify::verifyAArch64(Base + L::ExitStub, 4096, verify::SandboxLayout(), V)) {
    Error = "the sandbox's own stubs do not verify: " + V.Detail;
    return TC_ERR_BAD_IMAGE;
  }
  if (!protect(Base, L::CallTableBytes, PROT_READ) ||
      !protect(Base + L::ExitStub, 4096, PROT_READ | PROT_EXEC)) {
    Error = "cannot protect the sandbox region's call table";
    return TC_ERR_NO_MEMORY;
  }
  return TC_OK;
}

tc_status_t SandboxRegion::install(const JamImageData &Image, const uint8_t *&Entry,
                                   std::string &Error) {
  using L = SandboxLayout;
  if (!Image.Sandbox) {
    Error = "image '" + Image.Element + "' was not linked for the sandbox (jamlink --sandbox)";
    return TC_ERR_BAD_IMAGE;
  }
  if (Image.Imports.size() * 8 > L::ImportTableBytes) {
    Error = "image '" + Image.Element + "' has more imports than the sandbox's import table holds";
    return TC_ERR_BAD_IMAGE;
  }
  std::vector<void *> Table;
  for (const std::string &Name : Image.Imports) {
    unsigned S = sandboxServiceSlot(Name);
    if (!S) {
      Error = "image '" + Image.Element + "' imports '" + Name +
              "', which the sandbox does not serve (docs/sandbox.md)";
      return TC_ERR_MISSING_IMPORT;
    }
    Table.push_back(Base + L::ExitStub + L::StubBytes * S);
  }
  if (Installed || installedSize(Image) > format::JamDataDistance) {
    Error = "the region holds an image already, or the image is too large";
    return TC_ERR_BAD_IMAGE;
  }
  uint8_t *Code = Base + L::Code, *Data = Code + format::JamDataDistance;
  uint64_t TextBytes = (Image.TextSize + 4095) & ~uint64_t(4095);
  uint64_t DataBytes = (Image.DataSize + Image.ZeroFillSize + 4095) & ~uint64_t(4095);
  if (!protect(Code, TextBytes, PROT_READ | PROT_WRITE) ||
      (DataBytes && !protect(Data + (Image.TextSize & ~uint64_t(4095)), DataBytes + 4096,
                             PROT_READ | PROT_WRITE))) {
    Error = "cannot map the image's place in the region";
    return TC_ERR_NO_MEMORY;
  }
  // The GOTP cell points at the import table right after the call table:
  // base + 4 KiB decodes as two udf, so the cell is harmless code.
  auto *Imports = reinterpret_cast<void **>(Base + L::ImportTable);
  if (!protect(Base + L::ImportTable, L::ImportTableBytes, PROT_READ | PROT_WRITE)) {
    Error = "cannot map the region's import table";
    return TC_ERR_NO_MEMORY;
  }
  std::copy(Table.begin(), Table.end(), Imports);
  protect(Base + L::ImportTable, L::ImportTableBytes, PROT_READ);
  installImage(Code, Code, Data, Image, Imports);
  verify::Violation V;
  if (!verify::verifyAArch64(Code, Image.TextSize, verify::SandboxLayout(), V)) {
    protect(Code, TextBytes, PROT_NONE);
    Error = "image '" + Image.Element + "' as installed breaks the sandbox's rule " +
            verify::ruleName(V.Broken) + " at text offset " + std::to_string(V.Offset) + ": " +
            V.Detail;
    return TC_ERR_BAD_IMAGE;
  }
  if (!protect(Code, TextBytes, PROT_READ | PROT_EXEC)) {
    Error = "cannot make the image's code executable";
    return TC_ERR_NO_MEMORY;
  }
  __builtin___clear_cache(reinterpret_cast<char *>(Code),
                          reinterpret_cast<char *>(Code + TextBytes));
  Installed = true;
  TextSize = Image.TextSize;
  StaticsSize = Image.DataSize + Image.ZeroFillSize;
  Entry = Code + Image.Entry;
  return TC_OK;
}

tc_status_t SandboxRegion::run(const uint8_t *Entry, void *Ctx, uint8_t *Payload, size_t Size,
                               std::string &Error) {
  using L = SandboxLayout;
  if (Size > L::PayloadBytes) {
    Error = "a payload of " + std::to_string(Size) + " bytes is larger than the region's " +
            std::to_string(L::PayloadBytes);
    return TC_ERR_TOO_LARGE;
  }
  std::lock_guard<std::mutex> Hold(sandboxLock());
  uint8_t *Inside = Base + L::Payload;
  std::memcpy(Inside, Payload, Size);
  // What the services may touch: the payload, the stack and the statics
  // (writable), the code (readable).
  SandboxAreas &A = sandboxAreas();
  uintptr_t Code = uintptr_t(Base + L::Code), Statics = Code + format::JamDataDistance + TextSize;
  A = SandboxAreas();
  A.Base = uintptr_t(Base);
  A.Areas[A.Count++] = {uintptr_t(Inside), uintptr_t(Inside) + Size, true};
  A.Areas[A.Count++] = {uintptr_t(Base + L::Stack), uintptr_t(Base + L::Stack + L::StackBytes),
                        true};
  A.Areas[A.Count++] = {Statics, Statics + StaticsSize, true};
  A.Areas[A.Count++] = {Code, Code + TextSize, false};
  bool Abandoned = false;
  if (!enterSandbox(Entry, Ctx, Inside, Size, Base, Base + L::Stack + L::StackBytes,
                    Base + L::ExitStub, Abandoned)) {
    Error = "this ISA has no sandbox: sandboxed jams run on aarch64";
    return TC_ERR_REFUSED;
  }
  if (Abandoned) {
    Error = "the jam was abandoned: " + A.Refusal;
    return TC_ERR_JAM_FAULT;
  }
  std::memcpy(Payload, Inside, Size);
  return TC_OK;
}
