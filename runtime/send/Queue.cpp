//===- Queue.cpp - Frames waiting for a peer, and what they wait for -------===//
//
// A frame waits in its peer's queue while code it needs is on the way (an
// image shipped ahead, a package deployed), while frames before it wait
// (frames to one peer run in the order sent), or when a jam sent it and
// the ring was full. The queue is bounded per peer and per origin. On the
// peer's turn the answers of shipments and deployments are taken, and
// frames whose code will not come are dropped, their calls ended; Send.cpp
// sends the frames whose code came (sendQueued, asking frontReadyToLeave).
//
//===----------------------------------------------------------------------===//
#include "send/Send.h"

#include "base/Log.h"
#include "base/StatusString.h"
#include "code/CodeTransfer.h"
#include "code/Deploy.h"
#include "core/Events.h"
#include "core/Polled.h"
#include "core/Stats.h"
#include "path/FramePath.h"
#include "send/PayloadAhead.h"
#include "send/Queue.h"
#include "wire/Formats.h"
#include "wire/Frame.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

using namespace twochains::rt;

ElementSend &twochains::rt::addElementSends(tc_peer *Peer, const tc_package *Pkg,
                                            uint32_t Element) {
  Peer->Sending->Sends.emplace_back(Pkg, std::vector<ElementSend>(Pkg->Elements.size()));
  return Peer->Sending->Sends.back().second[Element];
}

namespace twochains::rt {

/// Frames jams may have waiting for one peer, and their payload bytes.
/// Past either the jam sees TC_ERR_NO_CREDIT. Frames forwarded to a peer
/// (a route: every peer's jams may forward there) have a share of that
/// per origin, so that one peer's jams cannot take the route from others'.
static constexpr size_t MaxQueuedFrames = 4096;
static constexpr size_t MaxQueuedBytes = 4u << 20;
static constexpr size_t MaxQueuedFramesPerOrigin = MaxQueuedFrames / 4;
static constexpr size_t MaxQueuedBytesPerOrigin = MaxQueuedBytes / 4;

tc_status_t queueFrame(tc_peer *Peer, QueuedFrame F, tc_peer *Origin) {
  if (Peer->Cold)
    startPolling(Peer->Ctx, Peer); // its queue leaves on its turns
  if (Peer->Sending->Queued.size() >= MaxQueuedFrames ||
      Peer->Sending->Queued.bytes() + F.Payload.size() > MaxQueuedBytes)
    return TC_ERR_NO_CREDIT;
  F.Origin = Origin && Origin != Peer ? Origin->Number : 0;
  if (F.Origin) {
    auto [Frames, Bytes] = Peer->Sending->Queued.heldBy(F.Origin);
    if (Frames >= MaxQueuedFramesPerOrigin || Bytes + F.Payload.size() > MaxQueuedBytesPerOrigin) {
      // Flow control, not a fault: the jam hears TC_ERR_NO_CREDIT and may
      // try again; counted (shares_full), said only when debugging.
      countHeld(Peer->Ctx, &tc_stats_t::shares_full);
      logLimited(Origin->RefusedMessageLog, TC_LOG_DEBUG,
                 "refused a frame forwarded to " + Peer->Name + " by a jam of " + Origin->Name +
                     ": its frames waiting there (" + std::to_string(Frames) + ", " +
                     std::to_string(Bytes) + " bytes) are its share of the queue");
      return TC_ERR_NO_CREDIT;
    }
  }
  Peer->Sending->Queued.push(std::move(F));
  return TC_OK;
}

tc_status_t queueOnHandle(tc_peer *Handle, const tc_package *Pkg, uint32_t Element,
                          tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                          tc_peer *Origin) {
  if (Handle->ProxyGone)
    return TC_ERR_IO;
  if (Element >= Pkg->Elements.size() || !Pkg->Elements[Element].Present ||
      !Pkg->Elements[Element].IsJam)
    return TC_ERR_UNKNOWN_ELEMENT;
  // The receiver's limits come with its welcome: a job's ranks share
  // this side's (a frame past the receiver's own fails when it leaves).
  // A payload too large for a slot goes ahead, named by a record that
  // must fit one itself (not in slots of one line).
  if (smallestFrameSize(PayloadSize) > Handle->Tx->SlotSize &&
      (PayloadSize > Handle->Ctx->PayloadAheadBytes ||
       smallestFrameSize(sizeof(PayloadAhead)) > Handle->Tx->SlotSize))
    return TC_ERR_TOO_LARGE;
  // TC_SEND_INJECTED_FULL carries its image in the slot, beside a payload
  // that fits one: as this side's own image would (a rank of another
  // instruction set is checked again when the frame leaves).
  if (Mode == TC_SEND_INJECTED_FULL) {
    const PackageElement &E = Pkg->Elements[Element];
    if (smallestFrameSize(PayloadSize) > Handle->Tx->SlotSize ||
        frameSize(FrameInjected, uint32_t(E.Image.Bytes.size()), uint32_t(PayloadSize)) >
            Handle->Tx->SlotSize)
      return TC_ERR_TOO_LARGE;
  }
  auto *P = static_cast<const uint8_t *>(Payload);
  QueuedFrame F{Pkg, Element, std::vector<uint8_t>(P, P + PayloadSize)};
  F.Mode = Mode;
  return queueFrame(Handle, std::move(F), Origin);
}

} // namespace twochains::rt

bool twochains::rt::needsDeployment(tc_peer *Peer, const tc_package *Pkg) {
  return Peer->Code->DeployCheck && !peerHolds(Peer, Pkg);
}

/// Drops the queued frames Waiting says wait for code that will not come
/// (St): their calls end, and the next tc_flush returns St.
template <class Predicate>
static void dropWaiting(tc_peer *Peer, tc_status_t St, Predicate Waiting) {
  auto *Ctx = Peer->Ctx;
  uint64_t Dropped = 0;
  for (auto It = Peer->Sending->Queued.begin(); It != Peer->Sending->Queued.end();) {
    if (!Waiting(*It)) {
      ++It;
      continue;
    }
    if (It->CallKey)
      Ctx->Path->FrameAbandoned.notify(Peer, It->CallKey, St);
    It = Peer->Sending->Queued.erase(It);
    ++Dropped;
  }
  count(Ctx, &tc_stats_t::faults_reported, Dropped);
  count(Peer, &tc_peer_stats_t::faults_reported, Dropped);
  Peer->Sending->DroppedUnflushed = St;
}

/// The package's deployment failed (St): its queued frames are dropped;
/// the application hears of it by an event (posted by the deployment)
/// and its next tc_flush.
static void deploymentFailed(tc_peer *Peer, const tc_package *Pkg, tc_status_t St) {
  dropWaiting(Peer, St, [&](const QueuedFrame &F) { return F.Package == Pkg; });
}

/// The deployment in flight moved on; at its end, frames of a refused
/// package are dropped.
static void takeDeploymentAnswer(tc_peer *Peer) {
  const tc_package *Pkg = Peer->Code->Deploying.package();
  tc_status_t St = advanceDeployment(Peer);
  if (St != TC_OK && St != TC_ERR_INCOMPLETE && St != TC_ERR_INVALID_PARAM)
    deploymentFailed(Peer, Pkg, St);
}

/// Starts deploying the package unless a deployment to the peer is in
/// flight (the next starts when the queue reaches its frames).
static void startDeploymentOf(tc_peer *Peer, const tc_package *Pkg) {
  if (Peer->Code->Deploying.active())
    return;
  if (tc_status_t Refused = deployRefusal(Peer, Pkg); Refused != TC_OK)
    return deploymentFailed(Peer, Pkg, Refused);
  if (tc_status_t St = startDeployment(Peer, Pkg); St != TC_OK)
    deploymentFailed(Peer, Pkg, St);
}

bool twochains::rt::needsShipment(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                                  tc_send_mode_t Mode, size_t PayloadSize) {
  if (Mode != TC_SEND_INJECTED)
    return false;
  const PackageElement *E = elementFor(Pkg, Element, Peer->Code->RemoteIsa);
  return E && !elementSend(Peer, Pkg, Element).Shipped &&
         frameSize(FrameInjected, uint32_t(E->Image.Bytes.size()),
                   slotPayloadSize(Peer, PayloadSize)) > Peer->Tx->SlotSize;
}

/// The element's shipment failed for good (St): its queued frames that
/// needed the code are dropped, counted as refused there, their calls
/// ended; the application hears of it by an event and its next tc_flush.
/// Later frames needing it fail at once with St, unless the receiver had
/// no place for it (TC_ERR_NO_CREDIT), which a later send may try again.
static void shipmentFailed(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, tc_status_t St) {
  if (St != TC_ERR_NO_CREDIT)
    elementSend(Peer, Pkg, Element).Refused = St;
  dropWaiting(Peer, St, [&](const QueuedFrame &F) {
    return F.Package == Pkg && F.Element == Element &&
           needsShipment(Peer, Pkg, Element, F.Mode, F.Payload.size());
  });
  postEvent(Peer->Ctx, TC_EVENT_FAULT_REPORTED, Peer->Number, St, Element);
}

/// The answer to the peer's shipment, if it has come: the element is
/// shipped, or its frames are dropped.
static void takeShipmentAnswer(tc_peer *Peer) {
  const tc_package *Pkg = Peer->Code->Shipping.package();
  uint32_t Element = Peer->Code->Shipping.element();
  tc_status_t St = shipmentAnswer(Peer);
  if (St == TC_ERR_INCOMPLETE || St == TC_ERR_INVALID_PARAM)
    return;
  if (St == TC_OK)
    elementSend(Peer, Pkg, Element).Shipped = true;
  else
    shipmentFailed(Peer, Pkg, Element, St);
}

/// Starts shipping the element's image unless a shipment to the peer is
/// unanswered (the next starts when the queue reaches its frames).
static void startShipmentOf(tc_peer *Peer, const tc_package *Pkg, uint32_t Element) {
  if (Peer->Code->Shipping.active())
    return;
  if (tc_status_t St = startShipment(Peer, Pkg, Element); St != TC_OK)
    shipmentFailed(Peer, Pkg, Element, St);
}

void twochains::rt::takeCodeAnswers(tc_peer *Peer) {
  if (Peer->Code->Deploying.active())
    takeDeploymentAnswer(Peer);
  if (Peer->Code->Shipping.active())
    takeShipmentAnswer(Peer);
}

QueuedFrame *twochains::rt::frontReadyToLeave(tc_peer *Peer) {
  while (!Peer->Sending->Queued.empty()) {
    QueuedFrame &F = Peer->Sending->Queued.front();
    if (F.Package && needsDeployment(Peer, F.Package)) {
      // Its package first; frames behind it wait, in order.
      startDeploymentOf(Peer, F.Package);
      if (Peer->Code->Deploying.active())
        return nullptr;
      continue; // refused at once: its frames were dropped
    }
    if (F.Package && needsShipment(Peer, F.Package, F.Element, F.Mode, F.Payload.size())) {
      // Its code first; frames behind it wait, in order.
      startShipmentOf(Peer, F.Package, F.Element);
      if (Peer->Code->Shipping.active())
        return nullptr;
      continue; // the shipment failed at once: its frames were dropped
    }
    return &F;
  }
  return nullptr;
}
