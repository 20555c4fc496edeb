//===- Mappings.h - What this process maps, as the kernel tells it --------===//
//
// A peer's memory key makes UCX map the peer's shared-memory segment into
// this process, and the peer names the addresses inside it. What the key
// really mapped, and how much of it the segment really holds, come from
// the kernel, never from the peer (wireup/Mailbox.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_BASE_MAPPINGS_H
#define TWOCHAINS_RUNTIME_BASE_MAPPINGS_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace twochains::rt {

/// One writable shared mapping of this process (/proc/self/maps).
struct SharedMapping {
  uintptr_t Begin = 0, End = 0;
  uint64_t Inode = 0;
  bool operator==(const SharedMapping &O) const {
    return Begin == O.Begin && End == O.End && Inode == O.Inode;
  }
};

/// This process's writable shared mappings, or none if the kernel does not
/// say (then no range is inside one).
std::vector<SharedMapping> sharedMappings();
/// Held by whoever maps shared memory (UCX's keys and allocations), and by
/// whoever lists the mappings before and after to see what it mapped: in a
/// process of several contexts or threads, only its own mappings appear
/// between its two listings.
std::mutex &sharedMappingLock();
/// The mappings of After that Before does not have: what appeared between.
std::vector<SharedMapping> newMappings(const std::vector<SharedMapping> &Before,
                                       const std::vector<SharedMapping> &After);
/// True if [Begin, Begin + Length) lies inside one mapping of Mappings.
bool insideOneOf(const std::vector<SharedMapping> &Mappings, uintptr_t Begin, size_t Length);
/// True if every page of [Begin, Begin + Length) loads without a fault. A
/// shared mapping may be longer than the file behind it (UCX maps the
/// length a peer's key claims), and a store past the file's end raises
/// SIGBUS; the kernel, copying from such a page, answers EFAULT instead.
bool backedByMemory(uintptr_t Begin, size_t Length);

} // namespace twochains::rt

#endif
