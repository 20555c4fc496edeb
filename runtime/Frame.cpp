//===- Frame.cpp ----------------------------------------------------------===//
#include "Frame.h"

#include <cstring>

namespace twochains::rt {

static size_t roundToLines(size_t N) {
  return (N + FrameLine - 1) / FrameLine * FrameLine;
}

size_t frameSize(uint32_t ImageSize, uint32_t PayloadSize) {
  if (ImageSize == 0 && PayloadSize <= FrameInlinePayload)
    return FrameLine;
  // Header line, image lines, then payload and trailer in whole lines.
  size_t Image = roundToLines(ImageSize);
  return FrameLine + Image + roundToLines(size_t(PayloadSize) + FrameTrailerSize);
}

uint32_t frameChecksum(const void *Bytes, size_t Size, uint64_t Sequence) {
  // A multiply-xorshift over 64-bit words: every bit of every word reaches
  // the result, and it runs at memory speed on both ISAs.
  const uint8_t *P = static_cast<const uint8_t *>(Bytes);
  uint64_t H = 0x9e3779b97f4a7c15ull ^ Sequence;
  for (size_t I = 0; I + 8 <= Size; I += 8) {
    uint64_t W;
    std::memcpy(&W, P + I, 8);
    H = (H ^ W) * 0xff51afd7ed558ccdull;
    H ^= H >> 32;
  }
  H ^= H >> 29;
  H *= 0xc4ceb9fe1a85ec53ull;
  return uint32_t(H ^ (H >> 32));
}

tc_status_t encodeFrame(void *Slot, size_t SlotSize, const FrameSpec &Spec,
                        size_t *Size) {
  bool Injected = Spec.Kind == FrameInjected, Cached = Spec.Kind == FrameCached;
  if (!Slot || !Size || (Spec.Kind != FrameLocal && !Injected && !Cached) ||
      (Injected && !Spec.Image) ||
      ((Injected || Cached) && (Spec.ImageSize == 0 || Spec.ImageSize % FrameLine)) ||
      (Spec.Kind == FrameLocal && (Spec.ImageSize || Spec.Code)) ||
      (Spec.PayloadSize && !Spec.Payload))
    return TC_ERR_INVALID_PARAM;
  // Only an injected frame carries its image's bytes.
  uint32_t Carried = Injected ? Spec.ImageSize : 0;
  size_t N = frameSize(Carried, Spec.PayloadSize);
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
  H.ImageSize = Spec.ImageSize;
  H.Code = Spec.Code;
  H.Sequence = Spec.Sequence;
  H.PayloadSize = Spec.PayloadSize;
  if (N == FrameLine) {
    H.PayloadOffset = offsetof(FrameHeader, Inline);
    if (Spec.PayloadSize)
      std::memcpy(H.Inline, Spec.Payload, Spec.PayloadSize);
    std::memcpy(F, &H, sizeof H);
  } else {
    H.PayloadOffset = uint32_t(FrameLine + roundToLines(Carried));
    std::memcpy(F, &H, sizeof H);
    std::memset(F + sizeof H, 0, FrameLine - sizeof H);
    // A template already holds the image in place.
    if (Carried && Spec.Image != F + FrameImageOffset)
      std::memcpy(F + FrameImageOffset, Spec.Image, Carried);
    if (Spec.PayloadSize)
      std::memcpy(F + H.PayloadOffset, Spec.Payload, Spec.PayloadSize);
    size_t Pad = N - FrameTrailerSize - (H.PayloadOffset + Spec.PayloadSize);
    std::memset(F + H.PayloadOffset + Spec.PayloadSize, 0, Pad);
  }
  FrameTrailer T = {uint32_t(Spec.Sequence),
                    frameChecksum(F, N - FrameTrailerSize, Spec.Sequence)};
  std::memcpy(F + N - FrameTrailerSize, &T, sizeof T);
  *Size = N;
  return TC_OK;
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

tc_status_t checkFrame(const void *Slot, size_t SlotSize, uint64_t Expected,
                       FrameView *Out, bool Ordered) {
  if (!Slot || SlotSize < FrameLine || SlotSize % FrameLine)
    return TC_ERR_INVALID_PARAM;
  const uint8_t *F = static_cast<const uint8_t *>(Slot);
  FrameHeader H;
  std::memcpy(&H, F, sizeof H);
  size_t N = size_t(H.Lines) * FrameLine;
  // Until the trailer shows the expected sequence, the slot holds an older
  // frame or a frame still landing: wait.
  if (H.Lines == 0 || N > SlotSize)
    return H.Magic == FrameMagic && H.Sequence == Expected ? TC_ERR_BAD_LENGTH
                                                           : TC_ERR_INCOMPLETE;
  FrameTrailer T;
  std::memcpy(&T, F + N - FrameTrailerSize, sizeof T);
  if (T.Sequence != uint32_t(Expected))
    return TC_ERR_INCOMPLETE;
  if (Ordered)
    __atomic_thread_fence(__ATOMIC_ACQUIRE); // read the frame after its trailer
  else if (T.Checksum != frameChecksum(F, N - FrameTrailerSize, Expected))
    return TC_ERR_INCOMPLETE; // the caller gives a lasting mismatch up (Executor.cpp)
  // Complete. The header copied above may predate the bytes the checksum
  // just saw (they land while we read): take it again, from the frame the
  // checksum vouches for, before trusting any field.
  std::memcpy(&H, F, sizeof H);
  if (size_t(H.Lines) * FrameLine != N)
    return TC_ERR_INCOMPLETE;
  if (H.Magic != FrameMagic)
    return TC_ERR_BAD_MAGIC;
  if (H.Version != FrameVersion)
    return TC_ERR_BAD_VERSION;
  if (H.Sequence != Expected)
    return TC_ERR_SEQUENCE;
  if (H.Kind != FrameLocal && H.Kind != FrameInjected && H.Kind != FrameCached)
    return TC_ERR_BAD_KIND;
  size_t PayloadEnd = size_t(H.PayloadOffset) + H.PayloadSize;
  if (H.PayloadOffset < offsetof(FrameHeader, Inline) ||
      PayloadEnd > N - FrameTrailerSize ||
      (N == FrameLine && H.PayloadSize > FrameInlinePayload) ||
      (N > FrameLine && H.PayloadOffset < FrameLine))
    return TC_ERR_BAD_LENGTH;
  if (H.Kind == FrameInjected) {
    if (H.ImageSize == 0 || H.ImageSize % FrameLine ||
        FrameImageOffset + size_t(H.ImageSize) > H.PayloadOffset)
      return TC_ERR_BAD_LENGTH;
  } else if (H.Kind == FrameCached) {
    if (H.ImageSize == 0 || H.ImageSize % FrameLine)
      return TC_ERR_BAD_LENGTH;
  } else if (H.ImageSize || H.Code) {
    return TC_ERR_BAD_LENGTH;
  }
  if (Out) {
    Out->Header = H;
    Out->Image = H.Kind == FrameInjected ? F + FrameImageOffset : nullptr;
    Out->Payload = F + H.PayloadOffset;
    Out->Size = N;
  }
  return TC_OK;
}

} // namespace twochains::rt
