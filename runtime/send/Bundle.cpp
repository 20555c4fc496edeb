//===- Bundle.cpp - Small frames to a receiver that is behind, bundled ----===//
#include "send/Bundle.h"

#include "code/Deploy.h"
#include "core/Stats.h"
#include "path/FramePath.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace twochains::rt {

bool aggregationByDefault() {
  static const bool On = [] {
    const char *Env = std::getenv("TC_AGGREGATE");
    return !Env || std::strcmp(Env, "0");
  }();
  return On;
}

/// Whether the receiver is behind: the frames it has not reported finished
/// are an eighth of its ring or more (two at least). The credit line is
/// read again only when the count seen so far says so (a line the
/// receiver writes, costly to read only when it changed).
bool receiverBehind(tc_peer *Peer) {
  SenderRing &Ring = *Peer->Tx->Send;
  uint64_t Behind = std::max<uint64_t>(2, Peer->Tx->Slots / 8);
  if (Ring.next() - Ring.finished() < Behind)
    return false;
  Ring.credit(Peer->Tx->CreditWord[CreditWordFinished]);
  return Ring.next() - Ring.finished() >= Behind;
}

static void countSent(tc_peer *Peer) {
  count(Peer->Ctx, &tc_stats_t::frames_sent);
  count(Peer, &tc_peer_stats_t::frames_sent);
}

void appendFrame(tc_peer *Peer, const void *Payload, size_t Size) {
  OpenBundle &B = Peer->Sending->Bundle;
  appendToBundle(B.Slot, B.Stride, B.Count, Payload, uint32_t(Size));
  ++B.Count;
  Peer->Tx->Send->addFrames(1);
  wakeIfSleeping(Peer);
  countSent(Peer);
}

void sealOpenBundle(tc_peer *Peer) {
  OpenBundle &B = Peer->Sending->Bundle;
  if (!B.Slot)
    return;
  if (Peer->Tx->RingDirect && !Peer->Failed) {
    sealBundle(B.Slot, Peer->Tx->SlotSize, B.Sequence);
    wakeIfSleeping(Peer);
  }
  if (B.Count > 1)
    count(Peer->Ctx, &tc_stats_t::frames_coalesced, B.Count);
  B = OpenBundle{};
}

bool bundleFrame(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, const void *Payload,
                 size_t PayloadSize, tc_status_t &St) {
  if (bundleOpen(Peer)) {
    if (!Peer->Failed && joinsBundle(Peer, Pkg->Tag, Element, PayloadSize)) {
      appendFrame(Peer, Payload, PayloadSize);
      St = TC_OK;
      return true;
    }
    sealOpenBundle(Peer);
  }
  PeerSendHalf &Tx = *Peer->Tx;
  uint32_t Capacity = bundleCapacity(Tx.SlotSize, PayloadSize);
  // What the usual way would refuse, or decide otherwise about, goes that
  // way; so does a frame to a receiver that keeps up.
  if (!Tx.Send || !Peer->Welcomed || Peer->Failed || Capacity < 2 ||
      Element >= Pkg->Elements.size() || !Pkg->Elements[Element].Present ||
      !Pkg->Elements[Element].IsJam || (Peer->Code->DeployCheck && !peerHolds(Peer, Pkg)) ||
      !receiverBehind(Peer))
    return false;
  uint64_t Seq;
  uint32_t Slot;
  if (Tx.Send->reserve(&Seq, &Slot) != TC_OK || !claimSlot(Peer, Seq)) {
    St = TC_ERR_NO_CREDIT;
    return true;
  }
  uint8_t *At = ringSlot(Tx.RingDirect, Tx.SlotSize, Slot);
  openBundle(At, Tx.SlotSize, Pkg->Tag, Element, uint32_t(PayloadSize), Seq, Payload);
  Peer->Sending->Bundle = {
      At, Seq,     Pkg->Tag, Element, uint32_t(PayloadSize), uint32_t(bundleStride(PayloadSize)),
      1,  Capacity};
  wakeIfSleeping(Peer);
  countSent(Peer);
  St = TC_OK;
  return true;
}

} // namespace twochains::rt
