//===- PayloadAhead.h - Receiving payloads sent ahead of their frames -----===//
//
// The receiver's half of send/PayloadAhead.h. A PAYLOAD message is bounded
// before any of its bytes are received: the sender's share (this side's
// offer), the sender's window (a frame it may have in flight: from the
// ring's expected sequence, Slots of them), each sequence once, and all
// senders' bytes together (PayloadsAheadTotalFactor shares). What passes
// is fetched into memory of this side's, which no peer can write; the
// frame that names it runs on those bytes, in the ring's order, and they
// are freed when it has run. A frame whose payload has not come yet waits
// in its slot, until the context's rendezvous time limit; a payload that
// was refused refuses its frame, with why, as any refused frame is told.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_RECEIVE_PAYLOADAHEAD_H
#define TWOCHAINS_RUNTIME_RECEIVE_PAYLOADAHEAD_H

#include "receive/ReceiveContext.h"
#include "wire/Frame.h"

namespace twochains::rt {

/// Registers the PAYLOAD handler.
ucs_status_t setupPayloadAhead(CoreContext *Ctx);
/// Takes PAYLOAD messages on the RMA worker too, once it exists (not where
/// channels' threads progress it), and offers RMA peers to send them there.
ucs_status_t setupPayloadsByRma(CoreContext *Ctx);
/// Frame V of Peer, captured, names a payload sent ahead: points V at its
/// bytes. TC_ERR_INCOMPLETE while they have yet to come (the frame waits);
/// else TC_OK, or why the frame is refused.
tc_status_t takePayloadAhead(CoreContext *Ctx, tc_peer *Peer, FrameView &V);
/// Frame Sequence of Peer is finished (run or refused): what came ahead
/// for it, or for frames before it, is freed.
void finishPayloadAhead(CoreContext *Ctx, tc_peer *Peer, uint64_t Sequence);
/// Peer is released: what it sent ahead is freed, or, while UCX still
/// fetches it, orphaned and freed when the fetch ends.
void forgetPayloadsAhead(CoreContext *Ctx, tc_peer *Peer);

} // namespace twochains::rt

#endif
