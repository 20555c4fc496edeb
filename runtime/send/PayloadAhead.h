//===- PayloadAhead.h - Payloads larger than a slot, sent ahead -----------===//
//
// A payload that does not fit a slot of the receiver's travels by active
// message (PAYLOAD, wire/Wire.h) on the RMA endpoint where the receiver
// offered to take it there (shared memory, CMA, RDMA), else on the control
// endpoint, which UCX moves by rendezvous where it can, ahead of its frame; the frame then carries a
// PayloadAhead naming it (wire/Frame.h) and takes its place in the ring's
// order. The receiver takes at most the bytes its offer names from one
// sender at once: a sender counts what it sent ahead of frames not yet
// credited, and waits for credits (TC_ERR_NO_CREDIT) rather than exceed it.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_PAYLOADAHEAD_H
#define TWOCHAINS_RUNTIME_SEND_PAYLOADAHEAD_H

#include "path/PathContext.h"
#include "send/PeerSend.h"
#include "wire/Frame.h"

namespace twochains::rt {

/// Whether a payload of this size goes ahead of its frame to the peer: a
/// frame of it alone does not fit the peer's slots.
inline bool payloadGoesAhead(const tc_peer *Peer, size_t PayloadSize) {
  return smallestFrameSize(PayloadSize) > Peer->Tx->SlotSize;
}
/// The payload bytes a frame with this payload carries in its slot.
inline uint32_t slotPayloadSize(const tc_peer *Peer, size_t PayloadSize) {
  return payloadGoesAhead(Peer, PayloadSize) ? uint32_t(sizeof(PayloadAhead))
                                             : uint32_t(PayloadSize);
}
/// Whether the peer takes payloads of this size ahead at all.
inline bool payloadAheadAllowed(const tc_peer *Peer, size_t PayloadSize) {
  return PayloadSize <= Peer->Sending->PayloadAheadBytes;
}
/// Whether Size more bytes fit the peer's share now (credits the receiver
/// reported are taken first): else the send waits, as for a slot.
bool payloadAheadFits(tc_peer *Peer, size_t Size);
/// Sends the payload of frame Sequence ahead of it, without waiting: from
/// a copy (Copy: the caller's buffer is free on return), or from the
/// caller's buffer (Borrow: until payloadsBorrowed says it is done).
/// TC_ERR_IO: the peer cannot be sent to. Fills *Named with what the
/// frame carries.
tc_status_t sendPayloadAhead(tc_peer *Peer, uint64_t Sequence, const void *Payload, size_t Size,
                             PayloadHold Hold, PayloadAhead *Named);
/// Of Finished frames the receiver reported done, those whose borrowed
/// payloads UCX is also done reading: a caller may reuse their buffers.
uint64_t framesDoneWith(tc_peer *Peer, uint64_t Finished);
/// Whether UCX still reads some caller's buffer sent to the peer.
bool payloadsBorrowed(tc_peer *Peer);
/// As the peer is released: its payloads on the RMA endpoint are let end
/// (the receiver fetches them as it runs their frames), the RMA worker
/// turning, for at most the release's flush time, before the endpoint
/// closes. UCX ends a rendezvous cut short by a closing endpoint only on
/// the control worker's TCP; on the RMA worker its request would outlive
/// the worker.
void finishPayloadsAhead(tc_peer *Peer);

} // namespace twochains::rt

#endif
