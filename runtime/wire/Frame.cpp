//===- Frame.cpp ----------------------------------------------------------===//
#include "wire/Frame.h"

#include <algorithm>
#include <cstring>

namespace twochains::rt {

static size_t roundToLines(size_t N) {
  return (N + FrameLine - 1) / FrameLine * FrameLine;
}

/// Answers are laid out as Local frames.
static bool localLayout(uint8_t Kind) { return Kind == FrameLocal || Kind == FrameAnswer; }

static size_t inlineCapacity(FrameKind Kind) {
  return localLayout(Kind) ? LocalInlinePayload : Kind == FrameCached ? CachedInlinePayload : 0;
}

static size_t inlineOffset(uint8_t Kind) {
  return localLayout(Kind) ? LocalInlineOffset : CachedInlineOffset;
}

size_t smallestFrameSize(size_t PayloadSize) {
  return PayloadSize <= std::min(inlineCapacity(FrameLocal), inlineCapacity(FrameCached))
             ? FrameLine
             : imagelessFrameSize(PayloadSize);
}

size_t frameSize(FrameKind Kind, uint32_t ImageSize, uint32_t PayloadSize) {
  if (Kind != FrameInjected && PayloadSize <= inlineCapacity(Kind))
    return FrameLine;
  // Header line, image lines, then payload and trailer in whole lines.
  if (Kind != FrameInjected)
    return imagelessFrameSize(PayloadSize);
  return roundToLines(ImageSize) + imagelessFrameSize(PayloadSize);
}

/// The final multiply-xorshift of frameChecksum's two sums. A checksum
/// never equals the ordered mark of its sequence: a frame put with its
/// checksum must never pass for one stored in order, which the receiver
/// takes on its trailer's word alone.
static uint32_t mixChecksum(uint64_t A, uint64_t B, uint64_t Sequence) {
  uint64_t H = (A ^ (B >> 31) ^ (B << 33)) * 0xff51afd7ed558ccdull;
  H ^= H >> 29;
  H *= 0xc4ceb9fe1a85ec53ull;
  uint32_t Sum = uint32_t(H ^ (H >> 32));
  return Sum == orderedMark(Sequence) ? Sum ^ 1 : Sum;
}

namespace {
/// frameChecksum's two running sums over 64-bit words (Fletcher's
/// construction): a word that differs changes the first, and its position
/// the second. Two adds a word keep it at memory speed. Taken over a frame
/// in pieces (whole 8-byte words, in order), some copied as they are
/// summed, some only summed.
struct ChecksumSums {
  uint64_t A, B;
  explicit ChecksumSums(uint64_t Sequence) : A(Sequence), B(~Sequence) {}
  void add(const uint8_t *From, size_t Size) {
    for (size_t I = 0; I + 8 <= Size; I += 8) {
      uint64_t W;
      std::memcpy(&W, From + I, 8);
      A += W;
      B += A;
    }
  }
  void copyAndAdd(uint8_t *To, const uint8_t *From, size_t Size) {
    for (size_t I = 0; I + 8 <= Size; I += 8) {
      uint64_t W;
      std::memcpy(&W, From + I, 8);
      std::memcpy(To + I, &W, 8);
      A += W;
      B += A;
    }
  }
  /// The final multiply-xorshift mixes both with the sequence into 32 bits.
  uint32_t finish(uint64_t Sequence) const { return mixChecksum(A, B, Sequence); }
};
} // namespace

uint32_t frameChecksum(const void *Bytes, size_t Size, uint64_t Sequence) {
  ChecksumSums Sums(Sequence);
  Sums.add(static_cast<const uint8_t *>(Bytes), Size);
  return Sums.finish(Sequence);
}

void encodeLine(void *Slot, const FrameSpec &Spec) {
  if (Spec.Ordered)
    return storeMarkedLine(Slot, FrameKind(Spec.Kind), Spec.Package,
                           Spec.Kind == FrameCached ? Spec.Code : Spec.Sequence, Spec.Element,
                           Spec.Payload, Spec.PayloadSize, Spec.Sequence);
  auto *F = static_cast<uint8_t *>(Slot);
  uint64_t W[FrameLine / 8] = {};
  W[0] = lineWord(Spec.Kind);
  W[1] = Spec.Package;
  W[2] = Spec.Kind == FrameCached ? Spec.Code : Spec.Sequence; // FrameHeader's layout
  W[3] = uint64_t(Spec.Element) | uint64_t(Spec.PayloadSize) << 32;
  copyInline(reinterpret_cast<uint8_t *>(&W[LocalInlineOffset / 8]),
             static_cast<const uint8_t *>(Spec.Payload), Spec.PayloadSize);
  std::memcpy(F, W, sizeof(FrameHeader));
  FrameTrailer T = {uint32_t(Spec.Sequence), frameChecksum(W, sizeof(FrameHeader), Spec.Sequence)};
  std::memcpy(F + sizeof(FrameHeader), &T, sizeof T);
}

tc_status_t encodeFrame(void *Slot, size_t SlotSize, const FrameSpec &Spec,
                        size_t *Size) {
  // The common case first: a small Local, answer or cached frame.
  if (Slot && Size && SlotSize >= FrameLine && isLineFrame(Spec)) {
    encodeLine(Slot, Spec);
    *Size = FrameLine;
    return TC_OK;
  }
  bool Injected = Spec.Kind == FrameInjected, Cached = Spec.Kind == FrameCached;
  if (!Slot || !Size || (!localLayout(Spec.Kind) && !Injected && !Cached) ||
      (Injected && (!Spec.Image || Spec.ImageSize == 0 || Spec.ImageSize % FrameLine)) ||
      (!Injected && Spec.ImageSize) || (localLayout(Spec.Kind) && Spec.Code) ||
      (Spec.Kind == FrameAnswer && Spec.Element) || (Spec.PayloadSize && !Spec.Payload) ||
      (Spec.Flags & ~FramePayloadAhead) ||
      (Spec.Flags && (Spec.Kind == FrameAnswer || Spec.PayloadSize != sizeof(PayloadAhead))))
    return TC_ERR_INVALID_PARAM;
  size_t N = frameSize(Spec.Kind, Spec.ImageSize, Spec.PayloadSize);
  if (N > SlotSize || N / FrameLine > UINT16_MAX)
    return TC_ERR_TOO_LARGE;

  uint8_t *F = static_cast<uint8_t *>(Slot);
  FrameHeader H = {};
  H.Magic = FrameMagic;
  H.Version = FrameVersion;
  H.Kind = Spec.Kind;
  H.Lines = uint16_t(N / FrameLine);
  H.Package = Spec.Package;
  H.Element = Spec.Element;
  H.Sequence = Spec.Sequence;
  H.PayloadSize = Spec.PayloadSize;
  H.Code = Spec.Code;
  if (N == FrameLine) {
    // The trailer and the ring give the sequence; the key takes its place.
    if (Cached)
      H.Sequence = Spec.Code;
    if (Spec.PayloadSize)
      std::memcpy(reinterpret_cast<uint8_t *>(&H) + inlineOffset(Spec.Kind), Spec.Payload,
                  Spec.PayloadSize);
    std::memcpy(F, &H, sizeof H);
  } else {
    H.ImageSize = Spec.ImageSize;
    H.PayloadOffset = uint32_t(FrameLine + roundToLines(Spec.ImageSize));
    H.Inline[0] = Spec.Flags;
    std::memcpy(F, &H, sizeof H);
    // Line 0 ends as a one-line frame does, with the sequence: an idle
    // receiver looks at that one word (frameMayHaveArrived).
    // Its other half is never the mark: a first line that is not the
    // whole frame must never pass for a one-line frame's trailer.
    uint64_t Echo = echoWord(Spec.Sequence);
    std::memcpy(F + sizeof H, &Echo, sizeof Echo);
    // A template already holds the image in place.
    if (Injected && Spec.Image != F + FrameImageOffset)
      std::memcpy(F + FrameImageOffset, Spec.Image, Spec.ImageSize);
    if (Spec.PayloadSize)
      std::memcpy(F + H.PayloadOffset, Spec.Payload, Spec.PayloadSize);
    size_t Pad = N - FrameTrailerSize - (H.PayloadOffset + Spec.PayloadSize);
    std::memset(F + H.PayloadOffset + Spec.PayloadSize, 0, Pad);
  }
  if (Spec.Ordered) {
    // Everything above is visible before the trailer that vouches for it.
    __atomic_store_n(reinterpret_cast<uint64_t *>(F + N - FrameTrailerSize),
                     markedTrailer(Spec.Sequence), __ATOMIC_RELEASE);
  } else {
    FrameTrailer T = {uint32_t(Spec.Sequence),
                      frameChecksum(F, N - FrameTrailerSize, Spec.Sequence)};
    std::memcpy(F + N - FrameTrailerSize, &T, sizeof T);
  }
  *Size = N;
  return TC_OK;
}

size_t storeMarkedFrame(void *Slot, FrameKind Kind, uint64_t Package, uint64_t Code,
                        uint32_t Element, const void *Payload, uint32_t Size,
                        uint64_t Sequence) {
  size_t N = imagelessFrameSize(Size);
  auto *F = static_cast<uint8_t *>(Slot);
  auto *L = static_cast<uint64_t *>(Slot);
  L[0] = headerWord(Kind, N / FrameLine);
  L[1] = Package;
  L[2] = Sequence;
  L[3] = uint64_t(Element) | uint64_t(Size) << 32;
  L[4] = Kind == FrameCached ? Code : 0;
  L[5] = uint64_t(FrameLine) << 32; // no image; the payload from line 1
  L[6] = 0;
  L[7] = echoWord(Sequence);
  std::memcpy(F + FrameLine, Payload, Size);
  std::memset(F + FrameLine + Size, 0, N - FrameTrailerSize - FrameLine - Size);
  __atomic_store_n(reinterpret_cast<uint64_t *>(F + N - FrameTrailerSize), markedTrailer(Sequence),
                   __ATOMIC_RELEASE);
  return N;
}

/// captureMarkedFrame and captureMarkedFrameInRing: one body, so the two
/// policies' paths cannot drift apart in what they accept.
template <bool InRing>
static bool markedFrame(const void *Slot, size_t SlotSize, uint64_t Expected, void *Private,
                        FrameView *Out) {
  constexpr uint64_t Kinds = (uint64_t(1) << 48) - 1; // magic, version, kind
  const uint64_t *L = static_cast<const uint64_t *>(Slot);
  uint64_t First = __atomic_load_n(&L[0], __ATOMIC_RELAXED);
  size_t N = size_t(First >> 48) * FrameLine;
  bool Cached = (First & Kinds) == headerWord(FrameCached, 0);
  if ((!Cached && (First & Kinds) != headerWord(FrameLocal, 0)) || N <= FrameLine || N > SlotSize ||
      __atomic_load_n(&L[N / 8 - 1], __ATOMIC_ACQUIRE) != markedTrailer(Expected))
    return false;
  uint64_t W[7] = {__atomic_load_n(&L[0], __ATOMIC_RELAXED), __atomic_load_n(&L[1], __ATOMIC_RELAXED),
                   __atomic_load_n(&L[2], __ATOMIC_RELAXED), __atomic_load_n(&L[3], __ATOMIC_RELAXED),
                   __atomic_load_n(&L[4], __ATOMIC_RELAXED), __atomic_load_n(&L[5], __ATOMIC_RELAXED),
                   __atomic_load_n(&L[6], __ATOMIC_RELAXED)};
  uint32_t PayloadSize = uint32_t(W[3] >> 32);
  uint32_t ImageSize = uint32_t(W[5]), PayloadOffset = uint32_t(W[5] >> 32);
  // validateFrame's checks of such a frame (its length is First's).
  if (W[0] != First || W[2] != Expected || ImageSize || PayloadOffset < FrameLine ||
      size_t(PayloadOffset) + PayloadSize > N - FrameTrailerSize || (!Cached && W[4]) ||
      (W[6] && (W[6] != FramePayloadAhead || PayloadSize != sizeof(PayloadAhead))))
    return false;
  const uint8_t *Payload = static_cast<const uint8_t *>(Slot) + PayloadOffset;
  if constexpr (InRing) {
    // Its lines come from the sender's core: asked for now, they travel
    // while the frame's checks and the recovery point run, as the copy's
    // loads would have fetched them (without this the job path ran 0.8x
    // the copying one at 4-8 KiB; docs/performance.md, "Code trust").
    for (size_t Off = 0; Off < PayloadSize; Off += FrameLine)
      __builtin_prefetch(Payload + Off);
  } else {
    auto *Copy = static_cast<uint8_t *>(Private);
    std::memcpy(Copy + PayloadOffset, Payload, PayloadSize);
    Payload = Copy + PayloadOffset;
  }
  std::memcpy(&Out->Header, W, sizeof Out->Header);
  Out->Image = nullptr;
  Out->Payload = Payload;
  Out->Size = N;
  return true;
}

bool captureMarkedFrame(const void *Slot, size_t SlotSize, uint64_t Expected, void *Private,
                        FrameView *Out) {
  return markedFrame<false>(Slot, SlotSize, Expected, Private, Out);
}

bool captureMarkedFrameInRing(const void *Slot, size_t SlotSize, uint64_t Expected,
                              FrameView *Out) {
  return markedFrame<true>(Slot, SlotSize, Expected, nullptr, Out);
}

bool splitFrameBatch(const uint8_t *Data, size_t Length, uint32_t Count, size_t MaxFrame,
                     uint32_t *Lengths) {
  size_t At = 0;
  for (uint32_t I = 0; I < Count; ++I) {
    uint16_t Lines;
    if (Length - At < FrameLine)
      return false;
    std::memcpy(&Lines, Data + At + offsetof(FrameHeader, Lines), sizeof Lines);
    size_t N = size_t(Lines) * FrameLine;
    if (!Lines || N > MaxFrame || N > Length - At)
      return false;
    Lengths[I] = uint32_t(N);
    At += N;
  }
  return At == Length;
}

bool frameTrailerShows(const void *Slot, size_t SlotSize, uint64_t Sequence) {
  const uint8_t *F = static_cast<const uint8_t *>(Slot);
  FrameHeader H;
  std::memcpy(&H, F, sizeof H);
  size_t N = size_t(H.Lines) * FrameLine;
  if (H.Lines == 0 || N > SlotSize)
    return false;
  FrameTrailer T;
  std::memcpy(&T, F + N - FrameTrailerSize, sizeof T);
  return T.Sequence == uint32_t(Sequence);
}

/// Checks the fields of a complete frame of N bytes at F (a copy nothing
/// else writes, or a slot whose checksum was just verified).
static tc_status_t validateFrame(const uint8_t *F, size_t N, uint64_t Expected,
                                 FrameView *Out) {
  FrameHeader H;
  // A one-line Local or cached frame, the common case, in a few compares:
  // what the general checks below conclude for it.
  uint64_t First;
  std::memcpy(&First, F, sizeof First);
  if (N == FrameLine && (First == lineWord(FrameLocal) || First == lineWord(FrameCached))) {
    std::memcpy(&H, F, LocalInlineOffset);
    bool Cached = First == lineWord(FrameCached);
    H.Code = Cached ? H.Sequence : 0;
    if (Cached)
      H.Sequence = Expected; // its trailer's, which the caller checked
    H.ImageSize = H.PayloadOffset = 0;
    std::memset(H.Inline, 0, sizeof H.Inline);
    if (H.Sequence != Expected)
      return TC_ERR_SEQUENCE;
    if (H.PayloadSize > LocalInlinePayload)
      return TC_ERR_BAD_LENGTH;
    if (Out) {
      Out->Header = H;
      Out->Image = nullptr;
      Out->Payload = F + LocalInlineOffset;
      Out->Size = N;
    }
    return TC_OK;
  }
  std::memcpy(&H, F, sizeof H);
  if (size_t(H.Lines) * FrameLine != N)
    return TC_ERR_INCOMPLETE;
  if (H.Magic != FrameMagic)
    return TC_ERR_BAD_MAGIC;
  if (H.Version != FrameVersion)
    return TC_ERR_BAD_VERSION;
  // A one-line cached frame's sequence is its trailer's (the caller found
  // it to be the expected one), and the code key sits in its place.
  if (N == FrameLine && H.Kind == FrameCached) {
    H.Code = H.Sequence;
    H.Sequence = Expected;
  }
  if (H.Sequence != Expected)
    return TC_ERR_SEQUENCE;
  if (H.Kind != FrameLocal && H.Kind != FrameInjected && H.Kind != FrameCached &&
      H.Kind != FrameAnswer)
    return TC_ERR_BAD_KIND;
  const uint8_t *Payload;
  if (N == FrameLine) {
    // The payload sits inline, over the fields this kind does not need.
    if (H.Kind == FrameInjected)
      return TC_ERR_BAD_LENGTH;
    size_t Offset = inlineOffset(H.Kind);
    if (H.PayloadSize > sizeof H - Offset)
      return TC_ERR_BAD_LENGTH;
    Payload = F + Offset;
    auto *Covered = reinterpret_cast<uint8_t *>(&H) + Offset;
    uint64_t Code = H.Code;
    std::memset(Covered, 0, sizeof H - Offset); // not fields: read none of them
    if (H.Kind == FrameCached)
      H.Code = Code;
  } else {
    size_t PayloadEnd = size_t(H.PayloadOffset) + H.PayloadSize;
    if (H.PayloadOffset < FrameLine || PayloadEnd > N - FrameTrailerSize)
      return TC_ERR_BAD_LENGTH;
    Payload = F + H.PayloadOffset;
    // Inline is a flags byte and zeros: payloads sent ahead, nothing else.
    uint64_t Flags;
    std::memcpy(&Flags, H.Inline, sizeof Flags);
    if (Flags & ~uint64_t(FramePayloadAhead))
      return TC_ERR_BAD_KIND;
    if (Flags && (H.Kind == FrameAnswer || H.PayloadSize != sizeof(PayloadAhead)))
      return TC_ERR_BAD_LENGTH;
  }
  if (H.Kind == FrameInjected) {
    if (H.ImageSize == 0 || H.ImageSize % FrameLine ||
        FrameImageOffset + size_t(H.ImageSize) > H.PayloadOffset)
      return TC_ERR_BAD_LENGTH;
  } else if (N > FrameLine && H.ImageSize) {
    return TC_ERR_BAD_LENGTH; // only injected frames carry an image
  }
  if (localLayout(H.Kind) && H.Code)
    return TC_ERR_BAD_LENGTH;
  if (H.Kind == FrameAnswer && H.Element)
    return TC_ERR_UNKNOWN_ELEMENT; // answers name a call, never an element
  if (Out) {
    Out->Header = H;
    Out->Image = H.Kind == FrameInjected ? F + FrameImageOffset : nullptr;
    Out->Payload = Payload;
    Out->Size = N;
  }
  return TC_OK;
}

/// The frame's length in bytes if the slot's trailer shows the expected
/// sequence, else 0: an older frame, or one still landing.
static size_t landedLength(const uint8_t *F, size_t SlotSize, uint64_t Expected,
                           FrameTrailer &T) {
  // The length alone first: most polls find an older frame and stop here.
  uint16_t Lines;
  std::memcpy(&Lines, F + offsetof(FrameHeader, Lines), sizeof Lines);
  size_t N = size_t(Lines) * FrameLine;
  // A length of no lines, or more than the slot, is a header still landing
  // too (its bytes need not land together), or a broken one that never
  // completes: the executor gives such a frame up like any other that
  // stays incomplete.
  if (Lines == 0 || N > SlotSize)
    return 0;
  // One aligned 8-byte load: the mark and the sequence come from one store.
  uint64_t Word = __atomic_load_n(reinterpret_cast<const uint64_t *>(F + N - FrameTrailerSize),
                                  __ATOMIC_RELAXED);
  std::memcpy(&T, &Word, sizeof T);
  return T.Sequence == uint32_t(Expected) ? N : 0;
}

/// True if the trailer alone proves the frame whole; then reads of the
/// frame are ordered after it.
static bool trailerSuffices(const FrameTrailer &T, uint64_t Expected, Completion How) {
  if (How == Completion::Checksum ||
      (How == Completion::Marked && T.Checksum != orderedMark(Expected)))
    return false;
  __atomic_thread_fence(__ATOMIC_ACQUIRE); // read the frame after its trailer
  return true;
}

tc_status_t checkFrame(const void *Slot, size_t SlotSize, uint64_t Expected,
                       FrameView *Out, Completion How) {
  if (!Slot || SlotSize < FrameLine || SlotSize % FrameLine)
    return TC_ERR_INVALID_PARAM;
  const uint8_t *F = static_cast<const uint8_t *>(Slot);
  FrameTrailer T;
  size_t N = landedLength(F, SlotSize, Expected, T);
  if (!N)
    return TC_ERR_INCOMPLETE;
  if (!trailerSuffices(T, Expected, How) &&
      T.Checksum != frameChecksum(F, N - FrameTrailerSize, Expected))
    return TC_ERR_INCOMPLETE; // the caller gives a lasting mismatch up (receive/Receive.cpp)
  // Complete. The length read above may predate the bytes the checksum
  // just saw (they land while we read): validateFrame takes the header
  // again, from the frame the checksum vouches for.
  return validateFrame(F, N, Expected, Out);
}

/// Copies Size bytes (whole 8-byte words) and sums them as frameChecksum
/// does, in one pass: each byte is read once, from the slot.
static uint32_t copyAndChecksum(uint8_t *To, const uint8_t *From, size_t Size,
                                uint64_t Sequence) {
  ChecksumSums Sums(Sequence);
  Sums.copyAndAdd(To, From, Size);
  return Sums.finish(Sequence);
}

tc_status_t captureFrame(const void *Slot, size_t SlotSize, uint64_t Expected, void *Private,
                         FrameView *Out, Completion How) {
  if (!Slot || !Private || SlotSize < FrameLine || SlotSize % FrameLine)
    return TC_ERR_INVALID_PARAM;
  const uint8_t *F = static_cast<const uint8_t *>(Slot);
  auto *Copy = static_cast<uint8_t *>(Private);
  FrameTrailer T;
  size_t N = landedLength(F, SlotSize, Expected, T);
  if (!N)
    return TC_ERR_INCOMPLETE;
  if (trailerSuffices(T, Expected, How)) {
    if (N == FrameLine)
      std::memcpy(Copy, F, sizeof(FrameHeader)); // a fixed size: a few moves
    else
      std::memcpy(Copy, F, N - FrameTrailerSize);
  } else if (copyAndChecksum(Copy, F, N - FrameTrailerSize, Expected) != T.Checksum) {
    return TC_ERR_INCOMPLETE; // still landing, or rewritten: look again later
  }
  std::memcpy(Copy + N - FrameTrailerSize, &T, sizeof T);
  // Everything from here on reads the copy, which the peer cannot write:
  // what is checked is what runs.
  return validateFrame(Copy, N, Expected, Out);
}


/// Where the part of a frame of N bytes that captureFrameInRing copies
/// ends, its first line already copied to Copy: the first line, or an
/// injected frame's image too (whole words, never past the trailer). The
/// header read here is the copy's; a bad one is refused by validateFrame
/// later, this only keeps the copy inside the frame.
static size_t privateEnd(const uint8_t *Copy, size_t N) {
  if (N == FrameLine)
    return sizeof(FrameHeader);
  FrameHeader H;
  std::memcpy(&H, Copy, sizeof H);
  if (H.Kind != FrameInjected)
    return FrameLine;
  size_t End = H.PayloadOffset & ~size_t(7);
  return std::min(std::max(End, FrameLine), N - FrameTrailerSize);
}

tc_status_t captureFrameInRing(const void *Slot, size_t SlotSize, uint64_t Expected, void *Private,
                               FrameView *Out, Completion How) {
  if (!Slot || !Private || SlotSize < FrameLine || SlotSize % FrameLine)
    return TC_ERR_INVALID_PARAM;
  const uint8_t *F = static_cast<const uint8_t *>(Slot);
  auto *Copy = static_cast<uint8_t *>(Private);
  FrameTrailer T;
  size_t N = landedLength(F, SlotSize, Expected, T);
  if (!N)
    return TC_ERR_INCOMPLETE;
  size_t Line = std::min(FrameLine, N - FrameTrailerSize);
  if (trailerSuffices(T, Expected, How)) {
    std::memcpy(Copy, F, Line);
    size_t End = privateEnd(Copy, N);
    if (End > Line)
      std::memcpy(Copy + Line, F + Line, End - Line);
  } else {
    // One pass, each word read once: the checksum covers the very bytes
    // the header was copied from.
    ChecksumSums Sums(Expected);
    Sums.copyAndAdd(Copy, F, Line);
    size_t End = privateEnd(Copy, N);
    Sums.copyAndAdd(Copy + Line, F + Line, End - Line);
    Sums.add(F + End, N - FrameTrailerSize - End);
    if (Sums.finish(Expected) != T.Checksum)
      return TC_ERR_INCOMPLETE; // still landing, or rewritten: look again later
  }
  // Checked on the copy (the header cannot change after its check); the
  // payload is the slot's.
  tc_status_t St = validateFrame(Copy, N, Expected, Out);
  if (St == TC_OK)
    Out->Payload = F + (Out->Payload - Copy);
  return St;
}

} // namespace twochains::rt
