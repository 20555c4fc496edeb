//===- Bundle.h - Small frames streamed into one slot ---------------------===//
//
// A bundle (FrameBundle) is many small Local frames of one element, with
// payloads of one size, that one sender streams into one slot of its ring
// while the receiver is behind (docs/frames.md, "Bundles"): one slot, one
// credit and one of the receiver's turns for what would otherwise take a
// slot each. It takes its whole slot:
//
//   line 0      header: kind FrameBundle, Lines = the slot's, Package and
//               Element of its frames, PayloadSize = each frame's payload,
//               PayloadOffset = 64; in Code's place the count of frames
//               written so far; the echo word (the sequence) last
//   line 1...   the frames' payloads, each at an 8-byte boundary (stride)
//   last word   the trailer, markedTrailer(sequence), once sealed
//
// The sender opens it with its first frame, then appends: a payload, then
// the count (a release store) — each frame is visible to the receiver at
// once, whether or not more follow, so nothing waits for the sender's
// next call. It seals it (the trailer, a release store) when full, before
// any other frame to the receiver, and when its context progresses,
// flushes or quiesces. The receiver runs each frame published, as the
// Local frame it stands for, with that frame's checks, and finishes (and
// credits) the slot once it is sealed and every frame of it has run.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_WIRE_BUNDLE_H
#define TWOCHAINS_RUNTIME_WIRE_BUNDLE_H

#include "twochains/status.h"
#include "wire/Frame.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace twochains::rt {

/// The largest payload a bundled frame carries: larger ones gain little
/// from sharing a slot and go on their own; a receiver refuses a bundle
/// that names more.
constexpr size_t MaxBundledPayload = 256;
/// How far ahead of the frame being written a bundle's sender asks for
/// its lines (appendToBundle).
constexpr size_t BundlePrefetchBytes = 1024;
/// Where the count of frames written lies in the header line.
constexpr size_t BundleCountOffset = offsetof(FrameHeader, Code);

/// Bytes from one frame's payload to the next: 8-byte aligned, 8 at
/// least (an empty payload is a frame too).
constexpr size_t bundleStride(size_t Size) { return Size ? (Size + 7) & ~size_t(7) : 8; }
/// How many frames of this payload size a bundle in a slot of SlotSize
/// bytes holds.
constexpr uint32_t bundleCapacity(size_t SlotSize, size_t Size) {
  return SlotSize < FrameLine + FrameTrailerSize
             ? 0
             : uint32_t((SlotSize - FrameLine - FrameTrailerSize) / bundleStride(Size));
}

/// The first word of a bundle's slot.
constexpr uint64_t bundleWord(size_t SlotSize) {
  return headerWord(FrameBundle, SlotSize / FrameLine);
}

/// Sender: opens a bundle in Slot (SlotSize bytes, this side's view of the
/// receiver's ring) with its first frame; the echo word goes last, by a
/// release store.
void openBundle(uint8_t *Slot, size_t SlotSize, uint64_t Package, uint32_t Element, uint32_t Size,
                uint64_t Sequence, const void *First);
/// Sender: frame Index (counted from 0) of the open bundle; the count,
/// Index + 1, by a release store after it.
inline void appendToBundle(uint8_t *Slot, size_t Stride, uint32_t Index, const void *Payload,
                           uint32_t Size) {
  uint8_t *To = Slot + FrameLine + size_t(Index) * Stride;
  // The lines ahead, asked for now: the receiver read them on the ring's
  // last lap, and a store that must first take its line from the other
  // core holds up every store behind it (a BFS at P = 4: 0.51-0.53x MPI's
  // against 0.48-0.49x without, same runs).
  __builtin_prefetch(To + BundlePrefetchBytes, 1, 3);
  if (Size <= LocalInlinePayload)
    copyInline(To, static_cast<const uint8_t *>(Payload), Size);
  else
    std::memcpy(To, Payload, Size);
  __atomic_store_n(reinterpret_cast<uint64_t *>(Slot + BundleCountOffset), uint64_t(Index) + 1,
                   __ATOMIC_RELEASE);
}
/// Sender: no frame follows; the trailer, by a release store.
inline void sealBundle(uint8_t *Slot, size_t SlotSize, uint64_t Sequence) {
  __atomic_store_n(reinterpret_cast<uint64_t *>(Slot + SlotSize - FrameTrailerSize),
                   markedTrailer(Sequence), __ATOMIC_RELEASE);
}

/// What the receiver takes from a bundle's header once, when it first
/// sees the bundle, and keeps: nothing the sender writes later changes it.
struct BundleHeader {
  uint64_t Package;
  uint32_t Element;
  uint32_t Size; // each frame's payload
  uint32_t Stride;
  uint32_t Capacity; // frames the slot holds
};

/// Receiver: whether the slot holds (the start of) a bundle.
inline bool bundleBegun(const uint8_t *Slot, size_t SlotSize) {
  return __atomic_load_n(reinterpret_cast<const uint64_t *>(Slot), __ATOMIC_RELAXED) ==
         bundleWord(SlotSize);
}
/// Receiver: checks the header line of the bundle in Slot against the
/// sequence the ring expects there, reading each word once; Out is set
/// only on TC_OK. TC_ERR_INCOMPLETE while its echo word does not show the
/// sequence.
tc_status_t readBundleHeader(const uint8_t *Slot, size_t SlotSize, uint64_t Expected,
                             BundleHeader &Out);
/// Receiver: whether the bundle is sealed; read before bundleCount, whose
/// value is then final.
inline bool bundleSealed(const uint8_t *Slot, size_t SlotSize, uint64_t Expected) {
  return __atomic_load_n(reinterpret_cast<const uint64_t *>(Slot + SlotSize - FrameTrailerSize),
                         __ATOMIC_ACQUIRE) == markedTrailer(Expected);
}
/// Receiver: the frames written so far, as the sender says (at most the
/// capacity is believed).
inline uint32_t bundleCount(const uint8_t *Slot, const BundleHeader &H) {
  uint64_t N = __atomic_load_n(reinterpret_cast<const uint64_t *>(Slot + BundleCountOffset),
                               __ATOMIC_ACQUIRE);
  return N < H.Capacity ? uint32_t(N) : H.Capacity;
}

} // namespace twochains::rt

#endif
