//===- HandshakeOfferFuzzer.cpp - parseOffer and checkPackedRkey ----------===//
//
// Input: an offer header's bytes (the first 200, fewer or more too), then
// its body (keys, worker address and doorbell key, then the packages
// section). An accepted offer's pointers must lie in the body, its sizes
// within the limits, and each memory key well-formed by the same check.
//
//===----------------------------------------------------------------------===//
#include "wire/Wire.h"
#include "wire/Frame.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace twochains::rt;

[[noreturn]] static void broken(const char *What) {
  std::fprintf(stderr, "fuzz-handshake-offer: accepted an offer whose %s\n", What);
  std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  // Header and body in buffers of their own, so ASan sees reads past either.
  size_t HeaderSize = Size < sizeof(Offer) ? Size : sizeof(Offer);
  std::vector<uint8_t> Header(Data, Data + HeaderSize);
  std::vector<uint8_t> Body(Data + HeaderSize, Data + Size);
  ParsedOffer P;
  std::string Why;
  (void)checkPackedRkey(Body.data(), Body.size());
  if (parseOffer(Header.data(), Header.size(), Body.data(), Body.size(), P, Why) != TC_OK) {
    if (Why.empty())
      broken("refusal says nothing");
    return 0;
  }
  const Offer &O = P.Header;
  if (!O.Slots || O.Slots > MaxSlots || O.SlotSize % 64 || O.SlotSize > MaxSlotSize ||
      uint64_t(O.Slots) * O.SlotSize > MaxRingBytes)
    broken("ring is out of bounds");
  if (O.PayloadAheadBytes > MaxPayloadAheadBytes)
    broken("payloads ahead are out of bounds");
  if (O.Job && (O.JobRank >= MaxJobRanks || (O.ProofFor != NoJobRank && O.ProofFor >= MaxJobRanks)))
    broken("job ranks are out of bounds");
  if (O.PackagesSize > Body.size() || P.Packages.size() > MaxOfferPackages)
    broken("packages lie outside its body");
  for (const auto &[Name, Identity] : P.Packages)
    if (Name.empty() || Name.size() > MaxPackageNameSize || Identity.size() != PackageIdentitySize)
      broken("package entry is out of bounds");
  if (O.Path == PathRma) {
    const uint8_t *End = Body.data() + Body.size() - O.PackagesSize;
    bool Shared = O.Flags & OfferSharedMemory;
    if (P.WorkerAddress + O.WorkerAddressSize + O.DoorbellKeySize != End ||
        (!Shared && (P.CreditKey != Body.data() || P.RingKey + O.RingKeySize > End)))
      broken("parts lie outside its body");
    if (!Shared && (!checkPackedRkey(P.CreditKey, O.CreditKeySize) ||
                    !checkPackedRkey(P.RingKey, O.RingKeySize)))
      broken("keys are malformed");
    // A shared segment holds the credit line at its start, then the
    // token, then the ring, all inside it.
    if (Shared && (P.CreditKey || P.RingKey || O.CreditAddress != P.Mailbox.Base ||
                   O.RingAddress < P.Mailbox.Base + MailboxTokenAt + SegmentTokenBytes ||
                   O.RingAddress + uint64_t(O.Slots) * slotStride(O.SlotSize) >
                       P.Mailbox.Base + P.Mailbox.Length ||
                   P.Mailbox.Base + P.Mailbox.Length < P.Mailbox.Base || P.Mailbox.Fd < 0))
      broken("shared segment does not hold what the offer names");
    // A doorbell whole or not at all; its place inside its segment.
    if (O.DoorbellKeySize
            ? (O.DoorbellKeySize != sizeof(SharedSegmentRecord) ||
               O.DoorbellAddress != P.Doorbell.Base || O.DoorbellIndex >= MaxDoorbellPlaces ||
               P.Doorbell.Length < doorbellSegmentBytes(O.DoorbellIndex + 1) ||
               P.Doorbell.Base + P.Doorbell.Length < P.Doorbell.Base || P.Doorbell.Fd < 0)
            : (O.DoorbellAddress || O.DoorbellIndex))
      broken("doorbell is malformed");
  } else if (Body.size() != O.PackagesSize || O.DoorbellKeySize) {
    broken("message path carries more than its packages");
  }
  return 0;
}
