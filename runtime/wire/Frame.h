//===- Frame.h - The frame: one message as it lies in a mailbox slot ------===//
//
// Every frame is a whole number of 64-byte lines (docs/frames.md):
//
//   line 0       header (56 bytes) + trailer, or + an echo of the trailer's
//                sequence
//   ...          image (injected frames: GOTP, code, data, zeroed bss)
//   ...          payload
//   last 8 bytes trailer: { uint32 sequence; uint32 checksum }
//
// A one-line frame carries its payload inline in the header, over the
// fields it has no use for: up to 24 bytes, Local or cached (a cached one
// has its code key where the sequence goes, which its trailer and the
// ring's count give), so a 2-integer message — the paper's Indirect Put of
// two (index, value) pairs — is one line. The receiver knows a frame has
// fully arrived when the trailer holds the sequence it expects for the
// slot and the checksum over everything before the trailer matches; until
// then, whatever order the transport writes bytes in, the frame is
// incomplete and nothing runs.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_FRAME_H
#define TWOCHAINS_RUNTIME_FRAME_H

#include "twochains/status.h"
#include <cstddef>
#include <cstdint>

namespace twochains::rt {

constexpr uint32_t FrameMagic = 0x31464354; // "TCF1"
constexpr uint8_t FrameVersion = 3;
constexpr size_t FrameLine = 64;
constexpr size_t FrameTrailerSize = 8;
/// Injected frames carry their image from the second line on.
constexpr size_t FrameImageOffset = FrameLine;

/// Local: the receiver runs its own copy. Injected: the image travels.
/// Cached: the frame names an image the receiver's code cache holds.
/// Answer: no code runs; the payload is a jam's answer (tc_jam_return) to
/// the call whose frame had the sequence in the Package field (Calls.cpp),
/// laid out as a Local frame otherwise.
/// Bundle: many small Local frames of one element that the sender streams
/// into one whole slot (wire/Bundle.h, its own layout); checkFrame and the
/// captures refuse it, the receiver's bundle path alone runs it.
enum FrameKind : uint8_t {
  FrameLocal = 1,
  FrameInjected = 2,
  FrameCached = 3,
  FrameAnswer = 4,
  FrameBundle = 5
};

struct FrameHeader {
  uint32_t Magic;
  uint8_t Version;
  uint8_t Kind;
  uint16_t Lines;          // frame length in lines, trailer included
  uint64_t Package;        // first 8 bytes of the package identity
  uint64_t Sequence;       // one-line cached frames: the code key instead
  uint32_t Element;
  uint32_t PayloadSize;
  // From here on, a one-line frame's payload may take the place of fields.
  uint64_t Code;           // injected, cached: first 8 bytes of the image's
                           // SHA-256 (GOTP zeroed), the code cache's key
  uint32_t ImageSize;      // injected: bytes of image (whole lines)
  uint32_t PayloadOffset;  // frames of more than one line
  uint8_t Inline[8];
};
static_assert(sizeof(FrameHeader) == FrameLine - FrameTrailerSize,
              "the header and a trailer fill one line");
static_assert(offsetof(FrameHeader, Package) == 8 && offsetof(FrameHeader, Sequence) == 16 &&
                  offsetof(FrameHeader, Element) == 24 &&
                  offsetof(FrameHeader, PayloadSize) == 28 && offsetof(FrameHeader, Code) == 32 &&
                  offsetof(FrameHeader, ImageSize) == 40 &&
                  offsetof(FrameHeader, PayloadOffset) == 44 && offsetof(FrameHeader, Inline) == 48,
              "wire layout (docs/frames.md)");

/// Where a one-line frame's payload starts, and how much it can hold.
constexpr size_t LocalInlineOffset = offsetof(FrameHeader, Code);
constexpr size_t CachedInlineOffset = offsetof(FrameHeader, Code);
/// A one-line cached frame's code key.
constexpr size_t CachedInlineCodeOffset = offsetof(FrameHeader, Sequence);
constexpr size_t LocalInlinePayload = sizeof(FrameHeader) - LocalInlineOffset;   // 24
constexpr size_t CachedInlinePayload = sizeof(FrameHeader) - CachedInlineOffset; // 24

/// FrameHeader::Inline[0] of a frame of more than a line, where it is
/// otherwise zero: the frame's payload was sent ahead of it (wire/Wire.h,
/// PAYLOAD: too large for a slot), and the payload in the slot is a
/// PayloadAhead naming it. Any other bit, or byte of Inline, is malformed.
constexpr uint8_t FramePayloadAhead = 1;
/// What a frame whose payload went ahead carries instead: larger than a
/// line's inline payload, so such a frame is never one line.
struct PayloadAhead {
  uint32_t Magic;    // PayloadAheadMagic
  uint32_t Size;     // bytes of the payload sent ahead
  uint64_t Sequence; // the frame's own
  uint64_t Reserved[2];
};
constexpr uint32_t PayloadAheadMagic = 0x41504354; // "TCPA"
static_assert(sizeof(PayloadAhead) == 32 && sizeof(PayloadAhead) > LocalInlinePayload,
              "wire layout; never inline");

struct FrameTrailer {
  uint32_t Sequence;       // low 32 bits of the header's
  uint32_t Checksum;       // or orderedMark(sequence)
};
static_assert(sizeof(FrameTrailer) == FrameTrailerSize, "wire layout");

/// The checksum word of a frame whose sender stored it straight into the
/// ring, trailer last, by a release store (Send.cpp, "direct stores"): the
/// trailer's landing proves the rest landed, so no checksum is computed on
/// either side. A function of the sequence, so that a stale payload word
/// where the trailer will go passes for it only if all 64 bits match.
constexpr uint32_t orderedMark(uint64_t Sequence) {
  return uint32_t(((Sequence & 0xffffffffu) ^ 0x7c5a0f3bu) * 0x9e3779b1u) ^ 0x4f524452u;
}

/// Where slot k of a ring starts: k * slotStride(SlotSize). Slots are a
/// line further apart than their size: slot sizes are multiples of 4 KiB,
/// and first lines 4 KiB apart would all fall into the same few L1 sets
/// on both sides (a streaming receiver evicted the line it was about to
/// read).
constexpr size_t slotStride(uint32_t SlotSize) { return size_t(SlotSize) + FrameLine; }
/// Slot Slot of a ring at Ring (this process's memory, or a peer's address).
template <typename Address> constexpr Address ringSlot(Address Ring, uint32_t SlotSize, uint64_t Slot) {
  return Ring + Slot * slotStride(SlotSize);
}

/// Bytes a frame of this kind needs for an image and a payload of these
/// sizes (only injected frames carry their image).
size_t frameSize(FrameKind Kind, uint32_t ImageSize, uint32_t PayloadSize);
/// frameSize of a frame of more than a line with no image: the header
/// line, then the payload and the trailer in whole lines.
constexpr size_t imagelessFrameSize(size_t PayloadSize) {
  return FrameLine + (PayloadSize + FrameTrailerSize + FrameLine - 1) / FrameLine * FrameLine;
}
/// The smallest frame that carries this payload without an image: one
/// line where every kind that inlines a payload takes it (a ring of 64-byte
/// slots carries those), else imagelessFrameSize.
size_t smallestFrameSize(size_t PayloadSize);

/// A frame's first word: magic, version, kind and length in lines,
/// compared at once.
constexpr uint64_t headerWord(FrameKind Kind, size_t Lines) {
  return uint64_t(FrameMagic) | uint64_t(FrameVersion) << 32 | uint64_t(Kind) << 40 |
         uint64_t(Lines) << 48;
}
/// The first word of a one-line frame of this kind.
constexpr uint64_t lineWord(FrameKind Kind) { return headerWord(Kind, 1); }

/// The trailer of a frame stored by a direct sender, as one word.
constexpr uint64_t markedTrailer(uint64_t Sequence) {
  return uint64_t(uint32_t(Sequence)) | uint64_t(orderedMark(Sequence)) << 32;
}
/// The last word of a longer frame's first line: its sequence, and never
/// the mark (a first line must not pass for a one-line frame).
constexpr uint64_t echoWord(uint64_t Sequence) {
  return uint64_t(uint32_t(Sequence)) | uint64_t(~orderedMark(Sequence)) << 32;
}

/// The 32-bit checksum over Size bytes (a whole number of 8-byte words)
/// seeded with the sequence: it tells a whole frame from one still landing
/// over older bytes, not an attacker's forgery (frames are validated after).
uint32_t frameChecksum(const void *Bytes, size_t Size, uint64_t Sequence);

struct FrameSpec {
  FrameKind Kind = FrameLocal;
  uint64_t Package = 0;
  uint32_t Element = 0;
  const void *Image = nullptr;   // injected only
  uint32_t ImageSize = 0;        // injected: a multiple of 64
  uint64_t Code = 0;             // injected and cached
  const void *Payload = nullptr;
  uint32_t PayloadSize = 0;
  uint64_t Sequence = 0;
  /// The frame is written into the receiver's ring itself: the trailer
  /// carries orderedMark and is stored last, with release ordering.
  bool Ordered = false;
  /// FramePayloadAhead: Payload is a PayloadAhead (never a one-line frame).
  uint8_t Flags = 0;
};

/// True if Spec's frame is one line that encodeFrame builds in registers
/// (no image, at most 24 payload bytes, a kind that has such a layout).
inline bool isLineFrame(const FrameSpec &Spec) {
  return !Spec.ImageSize && !Spec.Flags && Spec.PayloadSize <= LocalInlinePayload &&
         (Spec.Payload || !Spec.PayloadSize) &&
         ((Spec.Kind == FrameLocal && !Spec.Code) ||
          (Spec.Kind == FrameAnswer && !Spec.Code && !Spec.Element) || Spec.Kind == FrameCached);
}

/// Stores the one-line frame of Spec (isLineFrame) at Slot: the line built
/// in registers, the trailer last (a release store of the ordered mark if
/// Spec.Ordered, else the checksum).
void encodeLine(void *Slot, const FrameSpec &Spec);

/// Copies N <= 24 bytes with a few loads and stores, overlapping ones
/// rather than a loop or a call: every small send does this.
inline void copyInline(uint8_t *To, const uint8_t *From, size_t N) {
  if (N >= 8) {
    uint64_t First, Middle, Last;
    __builtin_memcpy(&First, From, 8);
    __builtin_memcpy(&Middle, From + (N > 16 ? 8 : N - 8), 8);
    __builtin_memcpy(&Last, From + N - 8, 8);
    __builtin_memcpy(To, &First, 8);
    __builtin_memcpy(To + (N > 16 ? 8 : N - 8), &Middle, 8);
    __builtin_memcpy(To + N - 8, &Last, 8);
  } else if (N >= 4) {
    uint32_t First, Last;
    __builtin_memcpy(&First, From, 4);
    __builtin_memcpy(&Last, From + N - 4, 4);
    __builtin_memcpy(To, &First, 4);
    __builtin_memcpy(To + N - 4, &Last, 4);
  } else if (N) {
    To[0] = From[0];
    To[N / 2] = From[N / 2];
    To[N - 1] = From[N - 1];
  }
}

/// A one-line frame stored by a direct sender, whole and inline (encodeLine
/// with Spec.Ordered, without a FrameSpec): Word2 is the sequence (Local)
/// or the code key (cached), Size <= LocalInlinePayload. The line is built
/// in registers and stored trailer last, by a release store.
inline void storeMarkedLine(void *Slot, FrameKind Kind, uint64_t Package, uint64_t Word2,
                            uint32_t Element, const void *Payload, uint32_t Size,
                            uint64_t Sequence) {
  uint64_t W[FrameLine / 8] = {lineWord(Kind), Package, Word2,
                               uint64_t(Element) | uint64_t(Size) << 32};
  copyInline(reinterpret_cast<uint8_t *>(&W[LocalInlineOffset / 8]),
             static_cast<const uint8_t *>(Payload), Size);
  auto *L = static_cast<uint64_t *>(Slot);
  for (unsigned I = 0; I < 7; ++I)
    L[I] = W[I];
  __atomic_store_n(&L[7], markedTrailer(Sequence), __ATOMIC_RELEASE);
}

/// Writes the frame for Spec into Slot (SlotSize bytes). On success sets
/// *Size to the frame's size. TC_ERR_TOO_LARGE if it does not fit.
tc_status_t encodeFrame(void *Slot, size_t SlotSize, const FrameSpec &Spec,
                        size_t *Size);

/// False while the last word of the slot's first line (a one-line frame's
/// trailer; a longer frame's echo of it) does not show Sequence: no frame
/// with that sequence has begun to arrive, or only part of its first line.
/// One load: what an idle receiver does per ring.
inline bool frameMayHaveArrived(const void *Slot, uint64_t Sequence) {
  return __atomic_load_n(static_cast<const uint32_t *>(Slot) + (FrameLine - FrameTrailerSize) / 4,
                         __ATOMIC_RELAXED) == uint32_t(Sequence);
}

/// Whether the slot holds (the start of) frame Sequence. A slot never
/// written shows sequence 0 too: frame 0 is told by its header's magic.
inline bool frameBegun(const void *Slot, uint64_t Sequence) {
  return frameMayHaveArrived(Slot, Sequence) &&
         (Sequence || __atomic_load_n(static_cast<const uint32_t *>(Slot), __ATOMIC_RELAXED));
}

/// True if the slot's trailer (where its header says it is) shows Sequence:
/// the sender has written that frame, whether or not all of it is sound.
bool frameTrailerShows(const void *Slot, size_t SlotSize, uint64_t Sequence);

/// A frame that has arrived and passed every check.
struct FrameView {
  /// The header as the checksum vouched for it: a copy, so nothing read
  /// later can differ from what was checked.
  FrameHeader Header;       // fields a one-line payload covers are zero
  const uint8_t *Image;     // injected frames only
  const uint8_t *Payload;
  size_t Size;
};

/// What proves that a frame whose trailer shows the expected sequence has
/// landed whole.
enum class Completion : uint8_t {
  /// Its checksum only: a frame rewritten in place (a resend with code)
  /// lands over a complete older one with the same trailer.
  Checksum,
  /// Its checksum, or the ordered mark of a sender's direct stores.
  Marked,
  /// The trailer alone: the transport places bytes in order
  /// (TC_CONTEXT_ORDERED_PLACEMENT).
  Ordered,
};

/// Checks the frame in Slot against the sequence the ring expects there.
/// TC_ERR_INCOMPLETE means "not all bytes are there yet": poll again. Any
/// other error means the frame must be dropped, never run. Out is set only
/// on TC_OK.
tc_status_t checkFrame(const void *Slot, size_t SlotSize, uint64_t Expected,
                       FrameView *Out, Completion How = Completion::Marked);

/// The receiver's way: like checkFrame, but the frame is first copied out of
/// the slot into Private (SlotSize bytes), the checksum computed over the
/// copy as it is made, and every check made on the copy; Out points into
/// Private. A peer that rewrites its slot meanwhile changes nothing that
/// was checked or that the jam reads (docs/security.md).
tc_status_t captureFrame(const void *Slot, size_t SlotSize, uint64_t Expected, void *Private,
                         FrameView *Out, Completion How = Completion::Marked);

/// A message of the message path that carries Count frames back to back
/// (a corked sender's batch, FramePath.cpp): sets Lengths[i] to frame i's
/// length, from its header's line count, and returns true if every frame
/// is at least a line and at most MaxFrame bytes and together they fill
/// the message exactly. Nothing else of the frames is looked at here: they
/// are checked in their slots like any other.
bool splitFrameBatch(const uint8_t *Data, size_t Length, uint32_t Count, size_t MaxFrame,
                     uint32_t *Lengths);

namespace detail {
/// captureMarkedLine and captureMarkedLineInRing: one body, so the two
/// policies' paths cannot drift apart in what they accept.
template <bool InRing>
inline bool markedLine(const void *Slot, uint64_t Expected, void *Private, FrameView *Out) {
  const uint64_t *L = static_cast<const uint64_t *>(Slot);
  if (__atomic_load_n(&L[7], __ATOMIC_ACQUIRE) != markedTrailer(Expected))
    return false;
  uint64_t First = __atomic_load_n(&L[0], __ATOMIC_RELAXED);
  bool Cached = First == lineWord(FrameCached);
  if (!Cached && First != lineWord(FrameLocal))
    return false;
  // In the ring the payload's words are the jam's to load, not ours.
  uint64_t Words[7] = {First,
                       __atomic_load_n(&L[1], __ATOMIC_RELAXED),
                       __atomic_load_n(&L[2], __ATOMIC_RELAXED),
                       __atomic_load_n(&L[3], __ATOMIC_RELAXED),
                       InRing ? 0 : __atomic_load_n(&L[4], __ATOMIC_RELAXED),
                       InRing ? 0 : __atomic_load_n(&L[5], __ATOMIC_RELAXED),
                       InRing ? 0 : __atomic_load_n(&L[6], __ATOMIC_RELAXED)};
  uint32_t Element = uint32_t(Words[3]), PayloadSize = uint32_t(Words[3] >> 32);
  if (PayloadSize > LocalInlinePayload || (!Cached && Words[2] != Expected))
    return false;
  if constexpr (!InRing) {
    auto *Copy = static_cast<uint64_t *>(Private);
    Copy[LocalInlineOffset / 8] = Words[4];
    Copy[LocalInlineOffset / 8 + 1] = Words[5];
    Copy[LocalInlineOffset / 8 + 2] = Words[6];
  }
  FrameHeader &H = Out->Header;
  H.Magic = FrameMagic;
  H.Version = FrameVersion;
  H.Kind = Cached ? FrameCached : FrameLocal;
  H.Lines = 1;
  H.Package = Words[1];
  H.Sequence = Expected;
  H.Element = Element;
  H.PayloadSize = PayloadSize;
  H.Code = Cached ? Words[2] : 0;
  H.ImageSize = H.PayloadOffset = 0;
  __builtin_memset(H.Inline, 0, sizeof H.Inline);
  Out->Image = nullptr;
  Out->Payload = static_cast<const uint8_t *>(InRing ? Slot : Private) + LocalInlineOffset;
  Out->Size = FrameLine;
  return true;
}
} // namespace detail

/// captureFrame's common case, inline: a one-line Local or cached frame
/// that a direct sender stored, trailer last. The trailer is loaded first
/// (acquire), then every other word once; what is checked and run are
/// those loads, and the payload's words go where captureFrame puts them in
/// Private. What captureFrame would accept, this accepts the same; false
/// for every other frame, sound or not, and for none yet (the caller then
/// asks captureFrame, which decides). Not for Completion::Checksum.
inline bool captureMarkedLine(const void *Slot, uint64_t Expected, void *Private, FrameView *Out) {
  return detail::markedLine<false>(Slot, Expected, Private, Out);
}

/// captureMarkedLine for frames of more than a line: a Local or cached
/// frame with no image that a direct sender stored, trailer last. The
/// header's first word names the length; the trailer there is loaded
/// (acquire), then the header once, and only the payload is copied to
/// where captureFrame puts it in Private. Accepts what captureFrame
/// accepts, the same; false for anything else (captureFrame decides).
bool captureMarkedFrame(const void *Slot, size_t SlotSize, uint64_t Expected, void *Private,
                        FrameView *Out);

// A receiver whose peers may run code of their own (TC_CODE_TRUST_JOB)
// gains nothing from a private copy of the payload: a peer that can put a
// jam there can as well read or change the memory that jam runs in. Its
// jams read their payload where it landed, in the ring; the header (and an
// injected frame's image, which is compared and installed, never run from
// the ring) is still taken into Private, so that what was validated —
// lengths, kind, element, package — cannot change after the check. The
// slot stays the frame's until it is finished: credits report finished
// frames only (ReceiverRing::finish, after the jam returned), and a sender
// writes a slot again only when credited (or when asked for a frame's
// code, before it ran).

/// captureMarkedLine, the payload left in the slot: Out->Payload points
/// into Slot; Out->Header is the words loaded and checked. Accepts exactly
/// what captureMarkedLine accepts.
inline bool captureMarkedLineInRing(const void *Slot, uint64_t Expected, FrameView *Out) {
  return detail::markedLine<true>(Slot, Expected, nullptr, Out);
}

/// captureMarkedFrame, the payload left in the slot (nothing is copied:
/// the header is loaded once into Out->Header). Accepts exactly what
/// captureMarkedFrame accepts.
bool captureMarkedFrameInRing(const void *Slot, size_t SlotSize, uint64_t Expected, FrameView *Out);

/// captureFrame with the payload left in the slot: the header line (and an
/// injected frame's image) is copied into Private and checked there, the
/// rest of the frame only read, where it lies, for its checksum; one pass,
/// each word read once, so the checksum vouches for the copied header as
/// for the payload (bytes may land in any order, How as for captureFrame).
/// Out->Header and Out->Image come from Private, Out->Payload points into
/// Slot. Accepts and refuses exactly what captureFrame does.
tc_status_t captureFrameInRing(const void *Slot, size_t SlotSize, uint64_t Expected, void *Private,
                               FrameView *Out, Completion How = Completion::Marked);

/// storeMarkedLine for frames of more than a line (Local or cached, the
/// payload after the header line): what encodeFrame stores for them with
/// Spec.Ordered, byte for byte. The caller checked that it fits the slot
/// (imagelessFrameSize). Returns its length.
size_t storeMarkedFrame(void *Slot, FrameKind Kind, uint64_t Package, uint64_t Code,
                        uint32_t Element, const void *Payload, uint32_t Size,
                        uint64_t Sequence);

} // namespace twochains::rt

#endif
