//===- Queue.h - Frames waiting for a peer, and what they wait for --------===//
//
// Queue.cpp's part below Send.cpp: what waits, and the code it waits for
// (an image shipped ahead, a package deployed). Frames leave through
// Send.cpp (sendQueued), which asks the queue which one may go.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_QUEUE_H
#define TWOCHAINS_RUNTIME_SEND_QUEUE_H

#include "path/PathContext.h"
#include "send/PeerSend.h"

namespace twochains::rt {

/// The peer's send state of a package's elements, made at the package's
/// first send to it. Out of line: once per package and peer.
__attribute__((noinline)) ElementSend &addElementSends(tc_peer *Peer, const tc_package *Pkg,
                                                       uint32_t Element);
inline ElementSend &elementSend(tc_peer *Peer, const tc_package *Pkg, uint32_t Element) {
  for (auto &[P, Elements] : Peer->Sending->Sends)
    if (P == Pkg)
      return Elements[Element];
  return addElementSends(Peer, Pkg, Element);
}

/// Whether frames of the package wait for it to be deployed to the peer.
bool needsDeployment(tc_peer *Peer, const tc_package *Pkg);
/// Whether a frame of the element with this payload waits for the
/// element's image to be shipped ahead: injected, and too large for a slot
/// beside it, and not shipped yet.
bool needsShipment(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, tc_send_mode_t Mode,
                   size_t PayloadSize);
/// The answers of the peer's shipment and deployment under way, if come:
/// their frames may leave, or are dropped.
void takeCodeAnswers(tc_peer *Peer);
/// The queue's first frame if it may leave now; else null, with the code
/// it needs asked for (frames behind it wait, in order). Frames whose code
/// failed at once are dropped on the way, their calls ended.
QueuedFrame *frontReadyToLeave(tc_peer *Peer);

} // namespace twochains::rt

#endif
