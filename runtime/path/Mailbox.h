//===- Mailbox.h - A peer's ring and credit line, and their offer ---------===//
#ifndef TWOCHAINS_RUNTIME_PATH_MAILBOX_H
#define TWOCHAINS_RUNTIME_PATH_MAILBOX_H

#include "path/PathContext.h"
#include "wire/Wire.h"

#include <string>
#include <vector>

namespace twochains::rt {

/// Allocates the peer's ring (frames from it) and credit line (its
/// reports), for the path its frames take.
tc_status_t setupLocalSide(CoreContext *Ctx, tc_peer *Peer);
/// A cold ring's pages, but those of the slot it expects next, given back
/// to the system (they read as zeros when next touched). Only once its
/// sender cannot store into them: context/Polling.cpp closes it first.
void releaseRingPages(CoreContext *Ctx, tc_peer *Peer);
/// The frame path's part of an offer (wireup/Offer.cpp makes the rest):
/// the ring's shape and path, and on the RMA path the keys and addresses
/// of Peer's ring, credit line and doorbell place, appended to Body.
tc_status_t offerLocalSide(CoreContext *Ctx, tc_peer *Peer, Offer &Header,
                           std::vector<uint8_t> &Body);
/// Takes the frame path's part of the other side's checked offer: its ring
/// and credit line (mapped here where UCX maps them, checked and guarded),
/// its doorbell, and an RMA endpoint where the path is RMA.
tc_status_t attachRemoteSide(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &O,
                             std::string &Why);
/// A peer's frame path as it is released: a live peer's last credits
/// reported, so that the sender's tc_flush ends rather than seeing the
/// peer close first (reportLastCredits); its puts and credit reports in
/// flight let land, bounded, or, a failed peer's, given up on, which
/// endRequestsInFlight says (closing its endpoints then ends them); the
/// other side's memory let go, its keys and mappings (detachRemoteSide);
/// its RMA endpoint closed (closeDataEndpoint); this side's ring and
/// credit line (releaseLocalSide); and what a gone peer's handle keeps no
/// longer needs (shedPathBuffers).
void reportLastCredits(tc_peer *Peer);
bool endRequestsInFlight(tc_peer *Peer);
void detachRemoteSide(CoreContext *Ctx, tc_peer *Peer);
/// Puts complete locally before they land: they are made to land before
/// closing (a failed peer's, briefly: nothing of it is expected to land).
/// Then closed by flushing, which has nothing left to flush: a forced
/// close of this endpoint (UCX 1.13) left its shared-memory transport
/// endpoints behind, each with the other side's segment attached, two
/// mappings and 17 kB per closed peer on each side for the life of the
/// context (containment-e2e 'cycles'). Forced only if something is still
/// in flight (GaveUp, endRequestsInFlight's answer): that cancels it, and
/// its buffers go with the peer.
void closeDataEndpoint(CoreContext *Ctx, tc_peer *Peer, bool GaveUp);
void releaseLocalSide(CoreContext *Ctx, tc_peer *Peer);
void shedPathBuffers(tc_peer *Peer);
/// The sender's side when the receiver declined RMA: credits come by
/// message into a line of this side's own, not the RMA-mapped one nobody
/// writes. False if it cannot be allocated.
bool useOwnCreditLine(tc_peer *Peer);
/// TC_DIRECT_STORES=0: always puts, never stores into a mapping of the
/// peer's memory (docs/performance.md, "Direct stores").
bool directStores();
/// Receiver: whether frames from this sender can travel by RMA: the
/// sender can, and this side's RMA worker reaches its RMA worker.
/// A HELLO of shared memory (OfferSharedMemory) reaches if this side maps
/// the sender's segment, and makes the connection one of shared memory.
bool rmaReaches(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &Hello);
/// Sender: Peer is a rank of this host, whose blob names this side's
/// addresses: its ring and credit line will be this side's memory file,
/// offered as such (unless TC_DIRECT_STORES=0). Before setupLocalSide.
void shareMemoryWith(tc_peer *Peer);
/// The peer has mapped this side's memory file (it took the welcome, or
/// this side took its): the file's descriptor is closed, so that a
/// connection holds none and no other process can open the file after.
void closeMailboxFile(tc_peer *Peer);
/// Peer's RMA endpoint, made now if the connection is one of shared memory
/// that had no need of one yet (a payload goes by RMA); null if none.
ucp_ep_h dataEndpoint(CoreContext *Ctx, tc_peer *Peer);
/// The connection of shared memory whose mailbox token this is, for a
/// payload that came by RMA from From, an endpoint no peer holds (UCX made
/// it for the sender): the connection takes it as its RMA endpoint, as if
/// it had made it (UCX gives this side that one when it connects). Null
/// if no connection has the token, or one has another endpoint. Sender:
/// the peer that holds From already, if one does (only it is compared).
tc_peer *peerOfMailboxToken(CoreContext *Ctx, const uint8_t *Token, ucp_ep_h From, tc_peer *Sender);
/// How a segment of this process is named to a peer of this host (in an
/// offer of shared memory, or as its doorbell).
SharedSegmentRecord recordOfSegment(const SharedSegment &S);
/// True if this side puts to Peer (frames or credits), rather than storing
/// into memory UCX maps here.
bool putsTo(const tc_peer *Peer);
/// A peer welcomed on the RMA path: counted, and its way of storing said.
void countRmaPeer(CoreContext *Ctx, tc_peer *Peer);

} // namespace twochains::rt

#endif
