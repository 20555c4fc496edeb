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
/// Takes Peer out of the list, cold: its sender, told by the cold flag,
/// rings the doorbell after each frame it stores from now on.
void makeCold(CoreContext *Ctx, tc_peer *Peer);
/// Empties the list (the context ends).
void stopPollingAll(CoreContext *Ctx);

/// A peer goes cold after both QuietTurnsBeforeCold quiet control turns
/// (1 ms apart while idle, 10 ms while frames run) and QuietBeforeColdNs
/// quiet: turns alone were 8 ms, less than a sender takes from the
/// receiver's welcome to its first frames on a loaded host, whose second
/// frame then met a closed ring (TC_ERR_NO_CREDIT) on a connection just
/// made.
constexpr unsigned QuietTurnsBeforeCold = 8;
constexpr uint64_t QuietBeforeColdNs = 100'000'000;
/// One control turn of Peer's, which has received Received frames and sent
/// Sent: whether it has been quiet (the same counts) long enough to go
/// cold.
bool quietLongEnough(tc_peer *Peer, uint64_t Received, uint64_t Sent, uint64_t Now);
/// Peer owes or is owed something: its quiet turns count again from zero.
void notQuiet(tc_peer *Peer);
/// A place in this side's doorbell for Peer, mapping the doorbell at the
/// first call (NoDoorbell if there is none to give: its ring is then
/// polled always). Given back at release.
uint32_t takeDoorbellPlace(CoreContext *Ctx, tc_peer *Peer);
void giveBackDoorbellPlace(CoreContext *Ctx, tc_peer *Peer);
/// The doorbell rang (its summary word is set): every peer whose bit is
/// set is polled again; one polled already asks for its credits
/// (askForCredits), told to RangWhilePolled. Returns how many were warmed.
unsigned answerDoorbell(CoreContext *Ctx, void (*RangWhilePolled)(tc_peer *));
/// The doorbell's memory, at the context's end.
void releaseDoorbell(CoreContext *Ctx);

} // namespace twochains::rt

#endif
