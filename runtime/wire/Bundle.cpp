//===- Bundle.cpp - Small frames streamed into one slot -------------------===//
#include "wire/Bundle.h"

namespace twochains::rt {

void openBundle(uint8_t *Slot, size_t SlotSize, uint64_t Package, uint32_t Element, uint32_t Size,
                uint64_t Sequence, const void *First) {
  auto *L = reinterpret_cast<uint64_t *>(Slot);
  // A trailer of an older frame where this one's will go must not pass
  // for its seal: it shows another sequence, and is cleared anyway.
  __atomic_store_n(reinterpret_cast<uint64_t *>(Slot + SlotSize - FrameTrailerSize), 0,
                   __ATOMIC_RELAXED);
  L[0] = bundleWord(SlotSize);
  L[1] = Package;
  L[2] = Sequence;
  L[3] = uint64_t(Element) | uint64_t(Size) << 32;
  L[4] = 0;                         // the count
  L[5] = uint64_t(FrameLine) << 32; // no image; the payloads from line 1
  L[6] = 0;
  appendToBundle(Slot, bundleStride(Size), 0, First, Size);
  __atomic_store_n(&L[7], echoWord(Sequence), __ATOMIC_RELEASE);
}

tc_status_t readBundleHeader(const uint8_t *Slot, size_t SlotSize, uint64_t Expected,
                             BundleHeader &Out) {
  const auto *L = reinterpret_cast<const uint64_t *>(Slot);
  if (__atomic_load_n(&L[7], __ATOMIC_ACQUIRE) != echoWord(Expected))
    return TC_ERR_INCOMPLETE;
  uint64_t W[7];
  for (unsigned I = 0; I < 7; ++I)
    W[I] = __atomic_load_n(&L[I], __ATOMIC_RELAXED);
  uint32_t Element = uint32_t(W[3]), Size = uint32_t(W[3] >> 32);
  if (W[0] != bundleWord(SlotSize) || SlotSize % FrameLine || SlotSize / FrameLine > UINT16_MAX)
    return TC_ERR_BAD_KIND;
  if (W[2] != Expected)
    return TC_ERR_SEQUENCE;
  // No image, payloads from line 1, no flags; one frame at least fits.
  if (W[5] != uint64_t(FrameLine) << 32 || W[6] || Size > MaxBundledPayload ||
      bundleCapacity(SlotSize, Size) < 1)
    return TC_ERR_BAD_LENGTH;
  Out = {W[1], Element, Size, uint32_t(bundleStride(Size)), bundleCapacity(SlotSize, Size)};
  return TC_OK;
}

} // namespace twochains::rt
