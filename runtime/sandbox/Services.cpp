//===- Services.cpp - What the sandbox's call table serves ----------------===//
//
// Pointers from the jam are read as the sandbox reads them: the region's
// base plus their low 32 bits. A range is served only if it lies wholly
// inside one area of the running jam (its payload, stack, statics, code),
// writable where the service writes; otherwise the jam is abandoned
// (twochains_sandbox_abort) and the refusal says which argument was out.
//
//===----------------------------------------------------------------------===//
#include "sandbox/Services.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>

using namespace twochains::rt;

extern "C" {
[[noreturn]] __attribute__((visibility("hidden"))) void twochains_sandbox_abort();
__attribute__((visibility("hidden"))) uint64_t twochains_sandbox_dispatch(uint64_t A0, uint64_t A1,
                                                                          uint64_t A2, uint64_t A3,
                                                                          uint64_t A4, uint64_t A5,
                                                                          uint64_t Slot);
__attribute__((visibility("hidden"))) extern const void *const twochains_sandbox_slot_entries[];
}

namespace {

[[noreturn]] void refuse(const std::string &Why) {
  sandboxAreas().Refusal = Why;
  twochains_sandbox_abort();
}

} // namespace

uint8_t *twochains::rt::sandboxPointer(const char *Service, const char *What, uint64_t P,
                                       uint64_t N, bool Write) {
  SandboxAreas &A = sandboxAreas();
  uintptr_t At = A.Base + (P & 0xFFFFFFFFu);
  for (unsigned I = 0; I < A.Count; ++I) {
    const SandboxArea &Area = A.Areas[I];
    if (At >= Area.Begin && At <= Area.End && N <= Area.End - At && (!Write || Area.Writable))
      return reinterpret_cast<uint8_t *>(At);
  }
  refuse(std::string(Service) + "'s " + What + " (" + std::to_string(N) +
         " bytes at region offset " + std::to_string(P & 0xFFFFFFFFu) +
         ") is outside the memory the jam may " + (Write ? "write" : "read"));
}

const char *twochains::rt::sandboxString(const char *Service, const char *What, uint64_t P,
                                         size_t MaxLength) {
  const uint8_t *First = sandboxPointer(Service, What, P, 1, false);
  SandboxAreas &A = sandboxAreas();
  for (unsigned I = 0; I < A.Count; ++I)
    if (uintptr_t(First) >= A.Areas[I].Begin && uintptr_t(First) < A.Areas[I].End) {
      size_t Room = std::min<size_t>(A.Areas[I].End - uintptr_t(First), MaxLength + 1);
      if (!std::memchr(First, 0, Room))
        refuse(std::string(Service) + "'s " + What +
               " does not end inside the memory the jam "
               "may read within " +
               std::to_string(MaxLength) + " bytes");
      return reinterpret_cast<const char *>(First);
    }
  refuse(std::string(Service) + "'s " + What + " is outside the memory the jam may read");
}

namespace {

uint8_t *checked(const char *Service, const char *What, uint64_t P, uint64_t N, bool Write) {
  return sandboxPointer(Service, What, P, N, Write);
}

uint64_t serveMemcpy(uint64_t D, uint64_t S, uint64_t N) {
  std::memcpy(checked("memcpy", "destination", D, N, true),
              checked("memcpy", "source", S, N, false), N);
  return D;
}

uint64_t serveMemmove(uint64_t D, uint64_t S, uint64_t N) {
  std::memmove(checked("memmove", "destination", D, N, true),
               checked("memmove", "source", S, N, false), N);
  return D;
}

uint64_t serveMemset(uint64_t D, uint64_t C, uint64_t N) {
  std::memset(checked("memset", "destination", D, N, true), int(C), N);
  return D;
}

uint64_t serveStrlen(uint64_t S, uint64_t, uint64_t) {
  // The string ends inside the area its first byte lies in.
  const uint8_t *First = checked("strlen", "string", S, 1, false);
  SandboxAreas &A = sandboxAreas();
  for (unsigned I = 0; I < A.Count; ++I)
    if (uintptr_t(First) >= A.Areas[I].Begin && uintptr_t(First) < A.Areas[I].End) {
      size_t Room = A.Areas[I].End - uintptr_t(First);
      const void *Nul = std::memchr(First, 0, Room);
      if (!Nul)
        refuse("strlen's string does not end inside the memory the jam may read");
      return uint64_t(static_cast<const uint8_t *>(Nul) - First);
    }
  refuse("strlen's string is outside the memory the jam may read");
}

template <uint64_t (*Serve)(uint64_t, uint64_t, uint64_t)>
uint64_t threeArguments(uint64_t A0, uint64_t A1, uint64_t A2, uint64_t, uint64_t, uint64_t) {
  return Serve(A0, A1, A2);
}

struct Service {
  const char *Name;
  SandboxServe Serve;
};
/// Slot 1 onwards, in the order added; the exit is slot 0. As many as the
/// entry has thunks (SandboxAArch64.cpp).
constexpr unsigned MaxServices = 15;
Service Services[MaxServices] = {
    {"memcpy", threeArguments<serveMemcpy>},
    {"memmove", threeArguments<serveMemmove>},
    {"memset", threeArguments<serveMemset>},
    {"strlen", threeArguments<serveStrlen>},
};
/// Read by every dispatch, written only by addSandboxService.
std::atomic<unsigned> ServiceCount{4};
std::mutex Adding;

} // namespace

uint64_t twochains_sandbox_dispatch(uint64_t A0, uint64_t A1, uint64_t A2, uint64_t A3, uint64_t A4,
                                    uint64_t A5, uint64_t Slot) {
  if (Slot == 0 || Slot > ServiceCount.load(std::memory_order_acquire))
    refuse("a runtime call of slot " + std::to_string(Slot) + ", which serves nothing");
  return Services[Slot - 1].Serve(A0, A1, A2, A3, A4, A5);
}

bool twochains::rt::addSandboxService(const char *Name, SandboxServe Serve) {
  std::lock_guard<std::mutex> Guard(Adding);
  if (sandboxServiceSlot(Name))
    return true;
  unsigned N = ServiceCount.load(std::memory_order_relaxed);
  if (N == MaxServices)
    return false;
  Services[N] = {Name, Serve};
  ServiceCount.store(N + 1, std::memory_order_release);
  return true;
}

SandboxAreas &twochains::rt::sandboxAreas() {
  static SandboxAreas Areas;
  return Areas;
}

unsigned twochains::rt::sandboxServiceSlot(const std::string &Name) {
  for (unsigned I = 0, N = ServiceCount.load(std::memory_order_acquire); I < N; ++I)
    if (Name == Services[I].Name)
      return I + 1;
  return 0;
}

unsigned twochains::rt::sandboxSlots() { return MaxServices + 1; }
