//===- Bundle.h - Small frames to one receiver, gathered ------------------===//
//
// Aggregation (docs/frames.md, "Bundles"; docs/jobs.md): a small Local
// frame sent while the receiver is behind — the frames it has not yet
// reported finished are at least a quarter of its ring — joins the
// peer's open bundle instead of taking a slot of its own. A bundle leaves
// as one frame when it is full, before any other frame to the peer (the
// order of frames to one peer is the order sent), and at the next
// progress, flush, wait, call or quiesce of the context. A lone send, a
// call, or any send to a receiver that keeps up goes at once, as before.
// Shared-memory rings that this side stores into (RingDirect) only: the
// other paths leave each frame at once.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_BUNDLE_H
#define TWOCHAINS_RUNTIME_SEND_BUNDLE_H

#include "core/Peer.h"
#include "path/PeerPath.h"
#include "send/PeerSend.h"

#include <twochains/twochains.h>

namespace twochains::rt {

/// The largest payload a bundled frame carries: larger ones gain little
/// from sharing a slot, and go on their own.
constexpr size_t MaxBundledPayload = 256;

/// Whether a send of this mode and size may join a bundle to this peer at
/// all: a Local frame that is not a call's (Sequence: the caller wants the
/// frame's own sequence), into a ring this side stores into.
inline bool mayBundle(const tc_peer *Peer, tc_send_mode_t Mode, size_t PayloadSize,
                      const uint64_t *Sequence) {
  return Mode == TC_SEND_LOCAL && !Sequence && PayloadSize <= MaxBundledPayload &&
         Peer->Sending->Aggregate && Peer->Tx->RingDirect;
}

/// Adds the frame to the peer's bundle if the receiver is behind or a
/// bundle is open: true, St its status (TC_OK, or TC_ERR_NO_CREDIT when a
/// full bundle cannot leave yet: nothing was added). False: the frame goes
/// the usual way (an open bundle left first, or St says why not).
bool bundleFrame(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, const void *Payload,
                 size_t PayloadSize, tc_status_t &St);

/// Sends the open bundle as one frame: TC_OK (or nothing open),
/// TC_ERR_NO_CREDIT (it stays open), TC_ERR_IO (the peer is gone: its
/// frames are dropped, as those of its ring are).
tc_status_t flushBundle(tc_peer *Peer);

/// Whether a frame to the peer waits in an open bundle.
inline bool bundleOpen(const tc_peer *Peer) { return !Peer->Sending->Bundle.empty(); }

/// TC_AGGREGATE=0 turns aggregation off for every peer of the process.
bool aggregationByDefault();

/// A job's handle keeps tc_peer_aggregate's setting for its connection,
/// which takes it when made (job/Route.cpp).
inline void takeAggregation(tc_peer *Handle, tc_peer *Connection) {
  Connection->Sending->Aggregate = Connection->Sending->Aggregate && Handle->Sending->Aggregate;
}

} // namespace twochains::rt

#endif
