//===- Bundle.h - Small frames to a receiver that is behind, bundled ------===//
//
// Aggregation (docs/frames.md, "Bundles"; docs/jobs.md, "Aggregation"): a
// small Local frame sent while the receiver is behind — the frames it has
// not reported finished fill an eighth of its ring or more — opens a
// bundle in the next slot of its ring, and the frames after it of the
// same element and payload size join that bundle instead of taking a slot
// each (wire/Bundle.h). Each is in the receiver's ring, and runs, as soon
// as it is sent: nothing waits for this side's next call. The bundle is
// sealed when full, before any other frame to the receiver (frames to one
// peer run in the order sent), and at this context's next progress, wait,
// flush, call or quiesce (not at the turns a stream of tc_send_wait
// takes: the stream fills it); sealing needs no credit. A lone send, a
// call, or any send to a receiver that keeps up takes a slot of its own,
// as before.
// Shared-memory rings this side stores into (RingDirect) only.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_BUNDLE_H
#define TWOCHAINS_RUNTIME_SEND_BUNDLE_H

#include "core/Peer.h"
#include "path/PeerPath.h"
#include "send/PeerSend.h"
#include "wire/Bundle.h"

#include <twochains/twochains.h>

namespace twochains::rt {

/// Whether a send of this mode and size may go into a bundle to this peer
/// at all: a Local frame that is not a call's (Sequence: the caller wants
/// the frame's own sequence), into a ring this side stores into.
inline bool mayBundle(const tc_peer *Peer, tc_send_mode_t Mode, size_t PayloadSize,
                      const uint64_t *Sequence) {
  return Mode == TC_SEND_LOCAL && !Sequence && PayloadSize <= MaxBundledPayload &&
         Peer->Sending->Aggregate && Peer->Tx->RingDirect;
}

/// Whether the receiver is behind: the frames it has not reported
/// finished are an eighth of its ring or more.
bool receiverBehind(tc_peer *Peer);

/// Frames by message (TCP) are gathered as bundles are where the ring is
/// stored into: a frame that is not a call's, to a receiver that is behind
/// (or while frames gathered so far wait), joins the peer's batch, which
/// leaves as one message when full, before any frame that does not join
/// it, before the next frame once its first is GatherAgeUs old
/// (path/FramePath.h), and at the sender's next tc_progress, tc_wait,
/// tc_flush, tc_call or tc_job_quiesce (path/FramePath.cpp, the batch of
/// tc_peer_cork).
inline bool gathersFrames(tc_peer *Peer, const uint64_t *Sequence) {
  return !Sequence && Peer->Sending->Aggregate && Peer->Path != PathRma &&
         (Peer->Tx->BatchFrames || receiverBehind(Peer));
}

/// Whether a frame to the peer may join its open bundle: the same package,
/// element and payload size, and room left.
inline bool joinsBundle(const tc_peer *Peer, uint64_t Package, uint32_t Element, size_t Size) {
  const OpenBundle &B = Peer->Sending->Bundle;
  return B.Slot && B.Package == Package && B.Element == Element && B.Size == Size &&
         B.Count < B.Capacity;
}

/// Appends a frame that joinsBundle: in the receiver's ring, at once.
void appendFrame(tc_peer *Peer, const void *Payload, size_t Size);

/// Puts the frame into a bundle if one it joins is open, or the receiver
/// is behind (a new bundle): true, St its status (TC_OK, or
/// TC_ERR_NO_CREDIT when a new bundle has no slot yet: nothing was sent).
/// False: the frame goes the usual way (an open bundle sealed first).
bool bundleFrame(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, const void *Payload,
                 size_t PayloadSize, tc_status_t &St);

/// Seals the open bundle, if any: no frame joins it any more.
void sealOpenBundle(tc_peer *Peer);

/// Whether a bundle to the peer is open.
inline bool bundleOpen(const tc_peer *Peer) { return Peer->Sending->Bundle.Slot != nullptr; }

/// TC_AGGREGATE=0 turns aggregation off for every peer of the process.
bool aggregationByDefault();

/// A job's handle keeps tc_peer_aggregate's setting for its connection,
/// which takes it when made (job/Route.cpp).
inline void takeAggregation(tc_peer *Handle, tc_peer *Connection) {
  Connection->Sending->Aggregate = Connection->Sending->Aggregate && Handle->Sending->Aggregate;
}

} // namespace twochains::rt

#endif
