//===- Mappings.h - What this process maps, as the kernel tells it --------===//
//
// A peer's memory key makes UCX map the peer's shared-memory segment into
// this process, and the peer names the addresses inside it. What the key
// really mapped, and how much of it the segment really holds, come from
// the kernel, never from the peer (path/Mailbox.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_BASE_MAPPINGS_H
#define TWOCHAINS_RUNTIME_BASE_MAPPINGS_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace twochains::rt {

/// A file as the kernel names it: its file system's device and its inode
/// (Inode 0: none, an anonymous mapping).
struct FileId {
  uint64_t Device = 0, Inode = 0;
  bool operator<(const FileId &O) const {
    return Device != O.Device ? Device < O.Device : Inode < O.Inode;
  }
  bool operator==(const FileId &O) const { return Device == O.Device && Inode == O.Inode; }
};
/// The file Fd is open on ({0, 0} if fstat fails).
FileId fileIdOf(int Fd);

/// One writable shared mapping of this process (/proc/self/maps).
struct SharedMapping {
  uintptr_t Begin = 0, End = 0;
  uint64_t Inode = 0;
  uint64_t Device = 0; // of the file system of Inode, as stat's st_dev
  bool operator==(const SharedMapping &O) const {
    return Begin == O.Begin && End == O.End && Inode == O.Inode && Device == O.Device;
  }
  FileId file() const { return {Device, Inode}; }
};

/// This process's writable shared mappings, or none if the kernel does not
/// say (then no range is inside one). O(mappings): with thousands of peers,
/// thousands of lines of /proc/self/maps.
std::vector<SharedMapping> sharedMappings();
/// Held by whoever maps shared memory (UCX's keys and allocations), and by
/// whoever lists the mappings before and after to see what it mapped: in a
/// process of several contexts or threads, only its own mappings appear
/// between its two listings.
std::mutex &sharedMappingLock();
/// How many times sharedMappings has listed them in this process.
uint64_t sharedMappingLists();
/// This process's virtual memory, in bytes, as the kernel counts it
/// (/proc/self/statm: every mapping's pages), or 0 if it does not say.
uint64_t virtualSize();

/// A mapping as mmap made it: where, the length asked for, its protection
/// and flags, and the inode of what it maps.
struct MadeMapping {
  uintptr_t Begin = 0;
  size_t Length = 0;
  int Prot = 0, Flags = 0;
  uint64_t Inode = 0;
  uint64_t Device = 0;
};
/// Made as this process's new writable shared mappings, if they are all the
/// virtual memory that appeared between two counts of it (virtualSize):
/// then nothing else was mapped in between. False (Out empty) if a count
/// is missing, if they explain more or less than the counts grew by, or if
/// one is not a writable shared mapping placed where the kernel chose.
bool madeAreAllNew(const std::vector<MadeMapping> &Made, uint64_t SizeBefore, uint64_t SizeAfter,
                   std::vector<SharedMapping> &Out);
/// The mappings of After that Before does not have: what appeared between.
std::vector<SharedMapping> newMappings(const std::vector<SharedMapping> &Before,
                                       const std::vector<SharedMapping> &After);
/// Which of New (the mappings some keys' unpack made) each key's address
/// lies in: Locals[I] is where key I's address maps here, 0 if it maps
/// nothing here. Attached[I] gets the new mappings Locals[I] lies in. One
/// key whose address lies in none, with one new mapping no key's lies in,
/// is given that one (its range is then found outside it, and named so).
/// Returns how many new mappings are left no key's: if any, some key
/// mapped more than one segment.
size_t attachNewMappings(const std::vector<SharedMapping> &New,
                         const std::vector<uintptr_t> &Locals,
                         std::vector<std::vector<SharedMapping>> &Attached);
/// True if [Begin, Begin + Length) lies inside one mapping of Mappings.
bool insideOneOf(const std::vector<SharedMapping> &Mappings, uintptr_t Begin, size_t Length);
/// True if every page of [Begin, Begin + Length) loads without a fault. A
/// shared mapping may be longer than the file behind it (UCX maps the
/// length a peer's key claims), and a store past the file's end raises
/// SIGBUS; the kernel, copying from such a page, answers EFAULT instead.
bool backedByMemory(uintptr_t Begin, size_t Length);

} // namespace twochains::rt

#endif
