//===- Polled.h - Which rings every pass polls ----------------------------===//
//
// A pass of the executor polls the rings of the peers in
// CoreContext::Polled, and looks at the doorbell's summary word: not at
// every ring of every peer. A peer quiet for a while is made cold
// (context/Polling.cpp): its ring leaves the list and its sender, told by
// the cold flag in its credit line, rings the doorbell after each frame
// it stores, which puts the peer back (docs/scaling.md).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_POLLED_H
#define TWOCHAINS_RUNTIME_CORE_POLLED_H

#include "core/CoreContext.h"

namespace twochains::rt {

/// Polls Peer's ring every pass from now on; a cold one is warm again (its
/// cold flag cleared). Holds the context.
void startPolling(CoreContext *Ctx, tc_peer *Peer);
/// Takes Peer out of the list (it is released, or made cold).
void stopPolling(CoreContext *Ctx, tc_peer *Peer);
/// A place in this side's doorbell for Peer, mapping the doorbell at the
/// first call (NoDoorbell if there is none to give: its ring is then
/// polled always). Given back at release.
uint32_t takeDoorbellPlace(CoreContext *Ctx, tc_peer *Peer);
void giveBackDoorbellPlace(CoreContext *Ctx, tc_peer *Peer);
/// The doorbell rang (its summary word is set): every peer whose bit is
/// set is polled again. Returns how many were warmed.
unsigned answerDoorbell(CoreContext *Ctx);
/// The doorbell's memory, at the context's end.
void releaseDoorbell(CoreContext *Ctx);

} // namespace twochains::rt

#endif
