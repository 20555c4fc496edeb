//===- Quarantine.h - Abandoned frames charged to their peer's address ----===//
//
// The receive side's use of containment/AddressQuarantine.h: an abandoned
// frame is charged to its peer's address; an address past its budget has
// every peer of it refused (their frames here; new connections at the
// handshake, wireup/Handshake.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_RECEIVE_QUARANTINE_H
#define TWOCHAINS_RUNTIME_RECEIVE_QUARANTINE_H

#include "containment/JamGuard.h"
#include "receive/PeerReceive.h"
#include "receive/ReceiveContext.h"

namespace twochains::rt {

/// Charges the frame Run has just abandoned to Peer's address: the time
/// since the watchdog first saw it running. An address (or host) that this
/// puts past its budget is logged, counted, and every peer of it marked
/// refused.
void chargeAbandoned(CoreContext *Ctx, tc_peer *Peer, const JamRun &Run);

/// Whether the peer's address is refused now; the mark is dropped when its
/// refusal is over.
bool addressStillRefused(tc_peer *Peer);
/// The frame path's check: one load while the peer's address is not refused.
inline bool addressRefused(tc_peer *Peer) {
  return __builtin_expect(Peer->Receiving->AddressRefusedUntilNs != 0, 0) &&
         addressStillRefused(Peer);
}

/// Until when a peer of identity Who is refused (0: it is not).
uint64_t addressRefusedUntil(CoreContext *Ctx, const PeerIdentity &Who);

} // namespace twochains::rt

#endif
