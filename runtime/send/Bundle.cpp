//===- Bundle.cpp - Small frames to one receiver, gathered ----------------===//
#include "send/Bundle.h"

#include "code/Deploy.h"
#include "core/Stats.h"
#include "path/FramePath.h"
#include "wire/Frame.h"

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
/// are a quarter of its ring or more. The credit line is read again only
/// when the count seen so far says so (a line the receiver writes, costly
/// to read only when it changed).
static bool receiverBehind(tc_peer *Peer) {
  SenderRing &Ring = *Peer->Tx->Send;
  uint64_t Behind = std::max<uint64_t>(2, Peer->Tx->Slots / 4);
  if (Ring.next() - Ring.finished() < Behind)
    return false;
  Ring.credit(Peer->Tx->CreditWord[CreditWordFinished]);
  return Ring.next() - Ring.finished() >= Behind;
}

bool bundleFrame(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, const void *Payload,
                 size_t PayloadSize, tc_status_t &St) {
  BundleBuilder &Bundle = Peer->Sending->Bundle;
  bool Open = !Bundle.empty();
  if (!Open && (!Peer->Tx->Send || !receiverBehind(Peer)))
    return false;
  // What the usual way would refuse, or decide otherwise about, goes that
  // way: after the open bundle, whose frames were sent before it.
  if (!Peer->Welcomed || Peer->Failed || Element >= Pkg->Elements.size() ||
      !Pkg->Elements[Element].Present || !Pkg->Elements[Element].IsJam ||
      !Bundle.fitsEmpty(PayloadSize) || (Peer->Code->DeployCheck && !peerHolds(Peer, Pkg))) {
    if (Open && (St = flushBundle(Peer)) != TC_OK)
      return true;
    return false;
  }
  if (!Bundle.append(Pkg->Tag, Element, Payload, uint16_t(PayloadSize))) {
    if ((St = flushBundle(Peer)) != TC_OK)
      return true;
    Bundle.append(Pkg->Tag, Element, Payload, uint16_t(PayloadSize)); // fits an empty one
  }
  // Full: it leaves now rather than at the next send or turn.
  if (Bundle.size() + sizeof(BundleRun) + bundleRecordStride(PayloadSize) >
      Peer->Sending->BundleBytes.size())
    flushBundle(Peer); // no credit: it leaves at the next turn
  St = TC_OK;
  return true;
}

tc_status_t flushBundle(tc_peer *Peer) {
  PeerSend &S = *Peer->Sending;
  PeerSendHalf &Tx = *Peer->Tx;
  if (S.Bundle.empty())
    return TC_OK;
  if (!Peer->Welcomed || Peer->Failed || !Tx.RingDirect || !Tx.Send) {
    S.Bundle.clear();
    return TC_ERR_IO;
  }
  if (Tx.Send->available() == 0)
    Tx.Send->credit(Tx.CreditWord[CreditWordFinished]);
  uint64_t Seq;
  uint32_t Slot;
  uint32_t Frames = S.Bundle.frames();
  if (Tx.Send->reserve(&Seq, &Slot, Frames) != TC_OK || !claimSlot(Peer, Seq))
    return TC_ERR_NO_CREDIT;
  storeMarkedFrame(ringSlot(Tx.RingDirect, Tx.SlotSize, Slot), FrameBundle, 0, 0, 0,
                   S.Bundle.data(), uint32_t(S.Bundle.size()), Seq);
  wakeIfSleeping(Peer);
  CoreContext *Ctx = Peer->Ctx;
  count(Ctx, &tc_stats_t::frames_sent, Frames);
  count(Peer, &tc_peer_stats_t::frames_sent, Frames);
  if (Frames > 1)
    count(Ctx, &tc_stats_t::frames_coalesced, Frames);
  S.Bundle.clear();
  return TC_OK;
}

} // namespace twochains::rt
