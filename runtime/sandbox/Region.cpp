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

std::mutex &sandboxLock() {
  static std::mutex Lock;
  return Lock;
}

uint64_t pageUp(uint64_t Bytes) { return (Bytes + 4095) & ~uint64_t(4095); }

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

  // The call table and the exit gate: written, then read-only and
  // read+execute. The gate is verified like any code in the region.
  if (!protect(Base, L::CallTableBytes, PROT_READ | PROT_WRITE) ||
      !protect(Base + L::ExitGate, 4096, PROT_READ | PROT_WRITE) ||
      !protect(Base + L::Stack, L::StackBytes + L::PayloadBytes, PROT_READ | PROT_WRITE)) {
    Error = "cannot map the sandbox region's parts";
    return TC_ERR_NO_MEMORY;
  }
  writeSandboxGates(Base, sandboxSlots());
  verify::Violation V;
  if (!verifySandboxCode(Base + L::ExitGate, 4096, L::ExitGate, V)) {
    Error = "the sandbox's own gates do not verify: " + V.Detail;
    return TC_ERR_BAD_IMAGE;
  }
  if (!protect(Base, L::CallTableBytes, PROT_READ) ||
      !protect(Base + L::ExitGate, 4096, PROT_READ | PROT_EXEC)) {
    Error = "cannot protect the sandbox region's call table";
    return TC_ERR_NO_MEMORY;
  }
  return TC_OK;
}

tc_status_t SandboxRegion::install(const JamImageData &Image, SandboxedImage &Out,
                                   std::string &Error) {
  using L = SandboxLayout;
  if (!Image.Sandbox) {
    Error = "image '" + Image.Element + "' was not linked for the sandbox (jamlink --sandbox)";
    return TC_ERR_BAD_IMAGE;
  }
  // Text and data windows of one span each: the next image's text starts
  // past this one's statics, so neither its text nor its data overlap.
  uint64_t Span = pageUp(installedSize(Image)) + 4096;
  uint64_t TableBytes = (Image.Imports.size() * 8 + 63) & ~uint64_t(63);
  if (Span > format::JamDataDistance - NextCode ||
      TableBytes > L::ImportTable + L::ImportTableBytes - NextImports) {
    Error = "the sandbox region has no room left for image '" + Image.Element + "'";
    return TC_ERR_NO_MEMORY;
  }
  std::vector<void *> Table;
  for (const std::string &Name : Image.Imports) {
    unsigned S = sandboxServiceSlot(Name);
    if (!S) {
      Error = "image '" + Image.Element + "' imports '" + Name +
              "', which the sandbox does not serve (docs/sandbox.md)";
      return TC_ERR_MISSING_IMPORT;
    }
    Table.push_back(Base + L::ExitGate + L::GateStride * S);
  }
  uint8_t *Code = Base + NextCode, *Data = Code + format::JamDataDistance;
  uint64_t TextBytes = pageUp(Image.TextSize);
  uint64_t StaticsBytes = Image.DataSize + Image.ZeroFillSize;
  uint8_t *StaticsPage = Data + (Image.TextSize & ~uint64_t(4095));
  if (!protect(Code, TextBytes, PROT_READ | PROT_WRITE) ||
      (StaticsBytes &&
       !protect(StaticsPage, pageUp(Data + Image.TextSize + StaticsBytes - StaticsPage),
                PROT_READ | PROT_WRITE))) {
    Error = "cannot map the image's place in the region";
    return TC_ERR_NO_MEMORY;
  }
  // The GOTP cell points at the image's import table, in the region's
  // first 64 KiB (aarch64's cell, in the text, decodes as two udf; x86-64
  // keeps it in the data part).
  uint8_t *TablePage = Base + (NextImports & ~uint64_t(4095));
  uint64_t TablePages = pageUp(Base + NextImports + TableBytes - TablePage);
  auto *Imports = reinterpret_cast<void **>(Base + NextImports);
  if (TableBytes) {
    if (!protect(TablePage, TablePages, PROT_READ | PROT_WRITE)) {
      Error = "cannot map the region's import table";
      return TC_ERR_NO_MEMORY;
    }
    std::copy(Table.begin(), Table.end(), Imports);
    protect(TablePage, TablePages, PROT_READ);
  }
  // The text's page past the image holds traps: a confined jump may land
  // on any bundle of an executable page.
  std::memset(Code + Image.TextSize, sandboxCodeFill(), TextBytes - Image.TextSize);
  installImage(Code, Code, Data, Image, Imports);
  verify::Violation V;
  if (!verifySandboxCode(Code, TextBytes, NextCode, V)) {
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
  NextCode += Span;
  NextImports += TableBytes;
  Out.Entry = Code + Image.Entry;
  Out.Code = uintptr_t(Code);
  Out.CodeEnd = Out.Code + Image.TextSize;
  Out.Statics = uintptr_t(Data + Image.TextSize);
  Out.StaticsEnd = Out.Statics + StaticsBytes;
  return TC_OK;
}

std::unique_lock<std::mutex> SandboxRegion::hold() {
  return std::unique_lock<std::mutex>(sandboxLock());
}

tc_status_t SandboxRegion::run(const SandboxedImage &Image, void *Ctx, uint8_t *Payload,
                               size_t Size, std::string &Error) {
  using L = SandboxLayout;
  if (Size > L::PayloadBytes) {
    Error = "a payload of " + std::to_string(Size) + " bytes is larger than the region's " +
            std::to_string(L::PayloadBytes);
    return TC_ERR_TOO_LARGE;
  }
  uint8_t *Inside = Base + L::Payload;
  std::memcpy(Inside, Payload, Size);
  // What the services may touch: the payload, the stack and the image's
  // statics (writable), its code (readable).
  SandboxAreas &A = sandboxAreas();
  void *Caller = A.Caller;
  A = SandboxAreas();
  A.Caller = Caller;
  A.Base = uintptr_t(Base);
  A.Areas[A.Count++] = {uintptr_t(Inside), uintptr_t(Inside) + Size, true};
  A.Areas[A.Count++] = {uintptr_t(Base + L::Stack), uintptr_t(Base + L::Stack + L::StackBytes),
                        true};
  A.Areas[A.Count++] = {Image.Statics, Image.StaticsEnd, true};
  A.Areas[A.Count++] = {Image.Code, Image.CodeEnd, false};
  bool Abandoned = false;
  if (!enterSandbox(Image.Entry, Ctx, Inside, Size, Base, Base + L::Stack + L::StackBytes,
                    Base + L::ExitGate, Abandoned)) {
    Error = "this ISA has no sandbox";
    return TC_ERR_REFUSED;
  }
  if (Abandoned) {
    Error = "the jam was abandoned: " + A.Refusal;
    return TC_ERR_JAM_FAULT;
  }
  std::memcpy(Payload, Inside, Size);
  return TC_OK;
}
