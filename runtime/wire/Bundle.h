//===- Bundle.h - Many small frames in one slot ---------------------------===//
//
// A bundle frame (FrameBundle) carries small Local frames that one sender
// gathered for one receiver and lets leave together: one slot, one store
// of whole lines, one credit and one turn of the receiver's ring for what
// would otherwise take a slot each (docs/frames.md, "Bundles"). Its
// payload is a sequence of runs; a run is the frames of one element of
// one package with payloads of one size, back to back (a vector frame):
//
//   run header   { uint64 package; uint32 element; uint16 size; uint16 count }
//   count records of `size` bytes, each at an 8-byte boundary
//
// The receiver runs them in order, each as the Local frame it stands for,
// with that frame's checks; a run whose header does not fit what is left
// ends the bundle there (what came before it ran).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_WIRE_BUNDLE_H
#define TWOCHAINS_RUNTIME_WIRE_BUNDLE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace twochains::rt {

struct BundleRun {
  uint64_t Package;
  uint32_t Element;
  uint16_t RecordSize;
  uint16_t Count;
};
static_assert(sizeof(BundleRun) == 16, "wire layout (docs/frames.md)");

/// Where the next record starts: records keep the 8-byte alignment a
/// frame's payload has, and take 8 bytes at least, so that a bundle holds
/// no more frames than a slot has words (an empty payload is a frame too).
constexpr size_t bundleRecordStride(size_t Size) { return Size ? (Size + 7) & ~size_t(7) : 8; }

/// One frame of a bundle, as the receiver runs it.
struct BundleRecord {
  uint64_t Package;
  uint32_t Element;
  uint32_t Size;
  const uint8_t *Payload;
};

/// Reads a bundle's payload, record by record. Each run header is read
/// once, into this reader, and checked before any record of it is
/// handed out: the bytes may lie in a ring the sender can still write
/// (TC_CODE_TRUST_JOB), and nothing read twice may differ.
class BundleReader {
public:
  BundleReader(const uint8_t *Runs, size_t Size) : At(Runs), End(Runs + Size) {}

  enum class Next { Record, End, Malformed };
  /// The next record (Out set only then), the end of the bundle, or a run
  /// header that does not fit the bytes left (the rest is not read).
  Next next(BundleRecord &Out);
  /// Records handed out so far.
  uint32_t records() const { return Records; }
  /// After a record: hands out the rest of its run at once (returns how
  /// many; the k-th of them lies stride() * k bytes after the record).
  uint32_t takeRestOfRun() {
    uint32_t Rest = Left;
    At += size_t(Rest) * stride();
    Left = 0;
    Records += Rest;
    return Rest;
  }
  /// Bytes from one record of the current run to the next.
  size_t stride() const { return bundleRecordStride(Run.RecordSize); }

private:
  const uint8_t *At, *End;
  BundleRun Run = {};
  uint16_t Left = 0; // records of Run still to hand out
  uint32_t Records = 0;
};

/// Gathers records into a bundle payload of at most Capacity bytes: a
/// record of the same package, element and size as the last joins its
/// run, anything else starts a run.
class BundleBuilder {
public:
  /// Capacity: the payload a bundle frame of one slot holds.
  void reset(uint8_t *Buffer, size_t Capacity) {
    Bytes = Buffer;
    this->Capacity = Capacity;
    clear();
  }
  void clear() {
    Used = 0;
    RunAt = SIZE_MAX;
    Frames = 0;
  }
  /// Appends a record; false (nothing appended) if it does not fit.
  bool append(uint64_t Package, uint32_t Element, const void *Payload, uint16_t Size);
  /// append's common case, inline: a record that joins the open run and
  /// fits. False (nothing appended) for any other (append decides).
  bool joinRun(uint64_t Package, uint32_t Element, const void *Payload, size_t Size) {
    size_t Stride = bundleRecordStride(Size);
    if (RunAt == SIZE_MAX || Package != Run.Package || Element != Run.Element ||
        Size != Run.RecordSize || Run.Count == UINT16_MAX || Stride > Capacity - Used)
      return false;
    std::memcpy(Bytes + Used, Payload, Size);
    if (Stride > Size)
      std::memset(Bytes + Used + Size, 0, Stride - Size);
    Used += Stride;
    ++Run.Count;
    std::memcpy(Bytes + RunAt + offsetof(BundleRun, Count), &Run.Count, sizeof Run.Count);
    ++Frames;
    return true;
  }
  /// Whether a record of Size bytes could ever join an empty bundle.
  bool fitsEmpty(size_t Size) const {
    return sizeof(BundleRun) + bundleRecordStride(Size) <= Capacity;
  }
  const uint8_t *data() const { return Bytes; }
  size_t size() const { return Used; }
  uint32_t frames() const { return Frames; }
  bool empty() const { return Frames == 0; }

private:
  uint8_t *Bytes = nullptr;
  size_t Capacity = 0, Used = 0;
  size_t RunAt = SIZE_MAX; // the open run's header, if any
  BundleRun Run = {};      // and what it says
  uint32_t Frames = 0;
};

} // namespace twochains::rt

#endif
