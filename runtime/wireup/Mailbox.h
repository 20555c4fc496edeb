//===- Mailbox.h - A peer's ring and credit line, and the offers ----------===//
#ifndef TWOCHAINS_RUNTIME_WIREUP_MAILBOX_H
#define TWOCHAINS_RUNTIME_WIREUP_MAILBOX_H

#include "wireup/WireupContext.h"

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
/// The offer describing Peer's local side, with its body (MAC not set).
tc_status_t makeOffer(CoreContext *Ctx, tc_peer *Peer, Offer &Header, std::vector<uint8_t> &Body);
/// Takes the other side's checked offer: its ring and credit line, and an
/// RMA endpoint where the path is RMA.
tc_status_t acceptOffer(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &O, std::string &Why);
/// Receiver: whether frames from this sender can travel by RMA: the
/// sender can, and this side's RMA worker reaches its RMA worker.
bool rmaReaches(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &Hello);
/// True if this side puts to Peer (frames or credits), rather than storing
/// into memory UCX maps here.
bool putsTo(const tc_peer *Peer);
/// A peer welcomed on the RMA path: counted, and its way of storing said.
void countRmaPeer(CoreContext *Ctx, tc_peer *Peer);

} // namespace twochains::rt

#endif
