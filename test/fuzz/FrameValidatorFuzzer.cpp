//===- FrameValidatorFuzzer.cpp - checkFrame, captureFrame on any slot ----===//
//
// (and the job policy's captures, which leave the payload in the slot)
//
// Input: 8 bytes (little-endian) of the sequence the ring expects, then the
// slot's bytes. The slot is a 64-byte aligned heap buffer of exactly the
// input's length rounded up to whole lines (at most MaxSlot), so ASan sees
// any read past it. Each slot is checked ordered and unordered, against
// the input's sequence and against the one its header names (which gets
// the fuzzer past the sequence check to the checks behind it).
//
// A frame checkFrame accepts must lie inside the slot: header, image and
// payload; every byte of them is read here. The same bytes are then split
// as a batch of frames (splitFrameBatch), which must account for them all.
//
//===----------------------------------------------------------------------===//
#include "wire/Bundle.h"
#include "wire/Frame.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <vector>

using namespace twochains::rt;

static constexpr size_t MaxSlot = 64 * 1024;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-frame-validator: accepted a frame whose %s\n", What);
  std::abort();
}

static volatile uint8_t Sink;

static void touch(const uint8_t *P, size_t N) {
  uint8_t X = 0;
  for (size_t I = 0; I < N; ++I)
    X ^= P[I];
  Sink = X;
}

/// Both ways the runtime checks a frame: in place (the sender's copies),
/// and captured into private memory (the receiver): a capture must agree
/// with the in-place check and point only into the private copy.
static void check(const uint8_t *Slot, size_t SlotSize, uint64_t Expected, Completion How) {
  (void)frameTrailerShows(Slot, SlotSize, Expected);
  FrameView V;
  tc_status_t InPlace = checkFrame(Slot, SlotSize, Expected, &V, How);
  auto *Private = static_cast<uint8_t *>(std::aligned_alloc(FrameLine, SlotSize));
  FrameView C;
  tc_status_t Captured = captureFrame(Slot, SlotSize, Expected, Private, &C, How);
  if (Captured != InPlace)
    broken("capture and in-place check disagree");
  if (Captured == TC_OK) {
    if (C.Payload < Private || C.Payload + C.Header.PayloadSize > Private + C.Size ||
        std::memcmp(&C.Header, &V.Header, sizeof C.Header) != 0)
      broken("capture points outside its copy, or differs from the slot");
    touch(C.Payload, C.Header.PayloadSize);
  }
  // The job policy's capture (payload left in the slot, header and image
  // copied): the same answer, the same header, the payload at the same
  // place in the slot, the image in its copy.
  auto *Header = static_cast<uint8_t *>(std::aligned_alloc(FrameLine, SlotSize));
  FrameView R;
  if (captureFrameInRing(Slot, SlotSize, Expected, Header, &R, How) != Captured)
    broken("in-ring capture and captureFrame disagree");
  if (Captured == TC_OK) {
    if (std::memcmp(&R.Header, &C.Header, sizeof R.Header) != 0 || R.Size != C.Size ||
        R.Payload != Slot + (C.Payload - Private) ||
        (C.Image ? R.Image != Header + (C.Image - Private) ||
                       std::memcmp(R.Image, C.Image, C.Header.ImageSize) != 0
                 : R.Image != nullptr))
      broken("in-ring capture differs from captureFrame's");
    touch(R.Payload, R.Header.PayloadSize);
  }
  std::free(Header);
  // The receiver's inline path for one-line frames stored in order must
  // accept only what captureFrame accepts, and read it the same.
  if (How != Completion::Checksum && SlotSize >= FrameLine) {
    auto *Line = static_cast<uint8_t *>(std::aligned_alloc(FrameLine, SlotSize));
    FrameView L;
    if (captureMarkedLine(Slot, Expected, Line, &L)) {
      if (Captured != TC_OK || std::memcmp(&L.Header, &C.Header, sizeof L.Header) != 0 ||
          L.Size != C.Size || L.Image || L.Payload != Line + (C.Payload - Private) ||
          std::memcmp(L.Payload, C.Payload, L.Header.PayloadSize) != 0)
        broken("inline capture of a line disagrees with captureFrame");
    }
    if (captureMarkedLineInRing(Slot, Expected, &L)) {
      if (Captured != TC_OK || std::memcmp(&L.Header, &C.Header, sizeof L.Header) != 0 ||
          L.Size != C.Size || L.Image || L.Payload != Slot + (C.Payload - Private))
        broken("in-ring inline capture of a line disagrees with captureFrame");
    }
    // And its path for longer frames stored in order.
    if (captureMarkedFrame(Slot, SlotSize, Expected, Line, &L)) {
      if (Captured != TC_OK || std::memcmp(&L.Header, &C.Header, sizeof L.Header) != 0 ||
          L.Size != C.Size || L.Image || L.Payload != Line + (C.Payload - Private) ||
          std::memcmp(L.Payload, C.Payload, L.Header.PayloadSize) != 0)
        broken("inline capture of a frame disagrees with captureFrame");
    }
    if (captureMarkedFrameInRing(Slot, SlotSize, Expected, &L)) {
      if (Captured != TC_OK || std::memcmp(&L.Header, &C.Header, sizeof L.Header) != 0 ||
          L.Size != C.Size || L.Image || L.Payload != Slot + (C.Payload - Private))
        broken("in-ring inline capture of a frame disagrees with captureFrame");
    }
    std::free(Line);
  }
  std::free(Private);
  if (InPlace != TC_OK)
    return;
  const uint8_t *End = Slot + SlotSize;
  if (V.Size == 0 || V.Size > SlotSize || V.Size % FrameLine ||
      size_t(V.Header.Lines) * FrameLine != V.Size)
    broken("length is not its lines, within the slot");
  if (V.Header.Sequence != Expected)
    broken("sequence is not the expected one");
  if (!V.Payload || V.Payload < Slot || V.Payload > End ||
      V.Header.PayloadSize > size_t(Slot + V.Size - FrameTrailerSize - V.Payload))
    broken("payload lies outside the frame");
  touch(V.Payload, V.Header.PayloadSize);
  if (V.Header.Kind == FrameInjected) {
    if (!V.Image || V.Image < Slot || V.Header.ImageSize == 0 ||
        V.Header.ImageSize > size_t(Slot + V.Size - V.Image))
      broken("image lies outside the frame");
    touch(V.Image, V.Header.ImageSize);
  } else if (V.Image) {
    broken("kind carries no image, yet has one");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size < 8)
    return 0;
  uint64_t Expected;
  std::memcpy(&Expected, Data, 8);
  Data += 8;
  Size -= 8;
  size_t Used = Size < MaxSlot ? Size : MaxSlot;
  size_t SlotSize = Used ? (Used + FrameLine - 1) / FrameLine * FrameLine : FrameLine;
  auto *Slot = static_cast<uint8_t *>(std::aligned_alloc(FrameLine, SlotSize));
  std::memset(Slot, 0, SlotSize);
  if (Used)
    std::memcpy(Slot, Data, Used);

  FrameHeader H;
  std::memcpy(&H, Slot, sizeof H);
  for (Completion How : {Completion::Checksum, Completion::Marked, Completion::Ordered}) {
    check(Slot, SlotSize, Expected, How);
    if (H.Sequence != Expected)
      check(Slot, SlotSize, H.Sequence, How);
  }
  // The same slot as a bundle's (wire/Bundle.h), as the receiver reads
  // one: an accepted header's frames, as many as the count says (bounded
  // by the capacity), lie inside the slot before its trailer.
  for (uint64_t Sequence : {Expected, H.Sequence}) {
    BundleHeader B;
    if (readBundleHeader(Slot, SlotSize, Sequence, B) != TC_OK)
      continue;
    if (B.Stride < 8 || B.Stride % 8 || B.Size > B.Stride || B.Size > MaxBundledPayload ||
        FrameLine + size_t(B.Capacity) * B.Stride > SlotSize - FrameTrailerSize)
      broken("bundle's frames reach past its slot");
    (void)bundleSealed(Slot, SlotSize, Sequence);
    uint32_t Count = bundleCount(Slot, B);
    if (Count > B.Capacity)
      broken("bundle's count is believed past its capacity");
    for (uint32_t I = 0; I < Count; ++I)
      touch(Slot + FrameLine + size_t(I) * B.Stride, B.Size);
  }
  std::free(Slot);

  // The same bytes as a corked sender's batch (FramePath.cpp): the frame
  // count from the sequence's low bits; an accepted split must cover the
  // message exactly with frames of whole lines, none longer than a slot.
  // The buffer is exactly the message, so ASan sees any read past it.
  uint32_t Count = uint32_t(Expected % 1025);
  auto *Message = static_cast<uint8_t *>(std::malloc(Size ? Size : 1));
  if (Size)
    std::memcpy(Message, Data, Size);
  std::vector<uint32_t> Lengths(Count ? Count : 1);
  size_t MaxFrame = size_t((Expected >> 16) % 64 + 1) * FrameLine;
  if (splitFrameBatch(Message, Size, Count, MaxFrame, Lengths.data())) {
    size_t Total = 0;
    for (uint32_t I = 0; I < Count; ++I) {
      if (Lengths[I] < FrameLine || Lengths[I] % FrameLine || Lengths[I] > MaxFrame)
        broken("batch holds a frame of no lines or more than a slot");
      Total += Lengths[I];
    }
    if (Total != Size)
      broken("batch's frames do not fill its message exactly");
  }
  std::free(Message);
  return 0;
}
