//===- PeerMappings.cpp - Peers' memory mapped here, that may shrink ------===//
#include "containment/PeerMappings.h"

#include <atomic>
#include <mutex>
#include <sys/mman.h>

namespace twochains::rt {

namespace {

/// Two mappings a peer (its ring, its credit line), for as many peers as a
/// process is likely to hold; lock-free for the handler to read.
constexpr int MaxPeerMappings = 16384;

struct Entry {
  std::atomic<uintptr_t> Begin{0}, End{0};
  std::atomic<bool> Broken{false};
};
Entry Entries[MaxPeerMappings];
std::mutex Registering;

} // namespace

int guardPeerMapping(uintptr_t Begin, uintptr_t End) {
  std::lock_guard<std::mutex> L(Registering);
  for (int I = 0; I < MaxPeerMappings; ++I)
    if (!Entries[I].End.load(std::memory_order_relaxed)) {
      Entries[I].Broken.store(false, std::memory_order_relaxed);
      Entries[I].Begin.store(Begin, std::memory_order_relaxed);
      Entries[I].End.store(End, std::memory_order_release);
      return I;
    }
  return -1;
}

void releasePeerMapping(int Handle) {
  if (Handle < 0 || Handle >= MaxPeerMappings)
    return;
  std::lock_guard<std::mutex> L(Registering);
  Entries[Handle].End.store(0, std::memory_order_release);
  Entries[Handle].Begin.store(0, std::memory_order_relaxed);
}

bool peerMappingBroken(int Handle) {
  return Handle >= 0 && Handle < MaxPeerMappings &&
         Entries[Handle].Broken.load(std::memory_order_acquire);
}

bool replaceBrokenPeerMapping(uintptr_t Address) {
  for (Entry &E : Entries) {
    uintptr_t End = E.End.load(std::memory_order_acquire);
    uintptr_t Begin = E.Begin.load(std::memory_order_relaxed);
    if (!End || Address < Begin || Address >= End)
      continue;
    // MAP_FIXED replaces the peer's pages atomically: another thread's
    // access sees either them or the zero pages, never a hole.
    void *Private = mmap(reinterpret_cast<void *>(Begin), End - Begin, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (Private == MAP_FAILED)
      return false;
    E.Broken.store(true, std::memory_order_release);
    return true;
  }
  return false;
}

} // namespace twochains::rt
