//===- SharedSegment.h - Memory shared with a process of this host --------===//
//
// Two ranks of one host share their rings as files of anonymous memory
// (memfd), not as UCX segments: UCX's POSIX allocator writes a segment's
// whole length once to see that /dev/shm has room, and a peer reaches
// one only through a UCX endpoint of its own that unpacks the key; at 64
// ranks on two cores these were a third of a job's first all-to-all
// (docs/scaling.md).
//
// The creating process seals the file against shrinking and growing and
// writes a random token at a place the kind fixes; another process maps
// it as /proc/<pid>/fd/<fd> (which the kernel allows only to processes
// that may trace it: the same user). What the offering peer names is
// checked before a byte of it is used: the link's name (read without
// opening, so no device or pipe it might name is opened), that it is a
// memory file sealed against shrinking (so it cannot be cut under this
// process's stores: no SIGBUS), its exact length, and the token (so a
// peer cannot aim this process's stores at a third process's segment it
// has not been given).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_BASE_SHAREDSEGMENT_H
#define TWOCHAINS_RUNTIME_BASE_SHAREDSEGMENT_H

#include "base/Mappings.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace twochains::rt {

constexpr size_t SegmentTokenBytes = 16;
constexpr size_t SegmentHostBytes = 16;

/// What a segment holds, which names its file ("twochains-<kind>"): a peer
/// cannot pass one kind off as the other.
enum class SegmentKind { Mailbox, Doorbell };

/// A segment this process created.
struct SharedSegment {
  uint8_t *Base = nullptr;
  size_t Length = 0;
  int Fd = -1;
  FileId File; // the memory file, known after its descriptor is closed
  uint8_t Token[SegmentTokenBytes] = {};
};

/// Creates a sealed segment of Length zeroed bytes with a fresh token at
/// TokenAt (inside; the rest is the caller's). Out is set only on success;
/// Why says what failed.
bool createSharedSegment(SegmentKind Kind, size_t Length, size_t TokenAt, SharedSegment &Out,
                         std::string &Why);
/// Unmaps and closes it; it stays in memory while others map it.
void releaseSharedSegment(SharedSegment &Segment);

/// Maps the segment process Pid holds as Fd, if it is a sealed memory file
/// of Kind, exactly Length bytes long, with Token at TokenAt. Base (and
/// File, the file mapped, if asked for) is set only on success (unmap it
/// with munmap(Base, Length)); else Why says which check failed.
bool attachSharedSegment(SegmentKind Kind, uint32_t Pid, int32_t Fd, uint64_t Length,
                         size_t TokenAt, const uint8_t Token[SegmentTokenBytes], uint8_t *&Base,
                         std::string &Why, FileId *File = nullptr);

/// This host's identity as an offer carries it (the kernel's boot id):
/// a segment of another host is not looked for here.
const uint8_t *hostIdentity();

} // namespace twochains::rt

#endif
