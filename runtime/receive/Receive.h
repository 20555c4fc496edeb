//===- Receive.h - The receive side: rings, frames, credits ---------------===//
#ifndef TWOCHAINS_RUNTIME_RECEIVE_RECEIVE_H
#define TWOCHAINS_RUNTIME_RECEIVE_RECEIVE_H

#include "base/Clock.h"
#include "containment/JamGuard.h"
#include "receive/PeerReceive.h"
#include "receive/ReceiveContext.h"
#include "wire/Frame.h"

namespace twochains::rt {

/// Whether a frame that stays incomplete was cut short is looked at every
/// this many polls of its ring (a power of two).
constexpr unsigned TruncationCheckEvery = 64;
/// Empty polls of a ring before credits not yet reported are reported...
constexpr unsigned IdleReportPolls = 64;
/// ... or this long since its first empty poll, whichever comes first: a
/// receiver whose loop does more than poll (its own UCX worker, work of
/// its own) takes longer for 64 polls; with UCX's TCP progress in its loop
/// (about 4 µs a turn) a sender's tc_flush waited 258 µs for its credits
/// against 20 µs for a UCX active message and its answer.
constexpr uint64_t IdleReportNs = 5'000;

/// An empty poll of a ring with frames unreported: whether it is time to
/// report them (IdleReportPolls, IdleReportNs).
inline bool idleReportDue(PeerReceive &Receiving) {
  if (__builtin_expect(Receiving.CreditsAsked, 0)) {
    Receiving.CreditsAsked = false;
    return true;
  }
  // The clock is read at the empty polls numbered by powers of two: a read
  // costs about what an empty poll does in a VM (read at every one, it was
  // a sixth of a waiting caller's time), and a slow loop's polls are few.
  unsigned Polls = ++Receiving.IdlePolls;
  if (Polls >= IdleReportPolls)
    return true;
  if (Polls & (Polls - 1))
    return false;
  uint64_t Now = nowNs();
  if (Polls == 1) {
    Receiving.IdleSinceNs = Now;
    return false;
  }
  return Now - Receiving.IdleSinceNs >= IdleReportNs;
}

/// The peer waits for its credits (it rang the doorbell, path/FramePath.h
/// askForCredits): they are reported at the ring's next idle poll that
/// owes any.
inline void creditsAsked(tc_peer *Peer) { Peer->Receiving->CreditsAsked = true; }

/// Up to a budget of frames of a peer's ring, in sequence, and its credit
/// reports. Returns the frames it finished.
unsigned serveRing(CoreContext *Ctx, tc_peer *Peer, JamRun &Run);
/// Reports the frames finished so far to the sender.
void reportCredits(CoreContext *Ctx, tc_peer *Peer);

/// At close: a bundle open in the peer's ring whose frames published so
/// far have all run is finished, so that the last credit report covers it
/// and its sender's tc_flush ends (what its sender appends later is lost
/// with the connection, as frames sent after a close are).
void finishBundleAtClose(CoreContext *Ctx, tc_peer *Peer);

/// Whether the peer's ring takes the short way (pollRing): it is there,
/// its peer welcomed, and no frame of it waits for code.
inline bool ringReady(const tc_peer *Peer) {
  const PeerReceiveHalf &Rx = *Peer->Rx;
  return Rx.Ring && Peer->Welcomed && !Peer->Receiving->CodeWait.awaiting(Rx.Receive->expected());
}

/// A ready ring's turn. An idle ring costs one load: the first line's last
/// word of the slot it expects (frameMayHaveArrived). Now and then it takes
/// the full turn anyway, to see whether a frame that never began to arrive
/// was skipped by its sender. Returns the frames it finished.
inline unsigned pollRing(CoreContext *Ctx, tc_peer *Peer, JamRun &Run) {
  PeerReceiveHalf &Rx = *Peer->Rx;
  PeerReceive &Receiving = *Peer->Receiving;
  if (!frameMayHaveArrived(ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot()),
                           Rx.Receive->expected()) &&
      ((Receiving.IncompletePolls + 1) & (TruncationCheckEvery - 1))) {
    ++Receiving.IncompletePolls;
    if (Rx.Receive->creditPending() && idleReportDue(Receiving))
      reportCredits(Ctx, Peer);
    return 0;
  }
  return serveRing(Ctx, Peer, Run);
}

/// The receive side of a peer's turn, any ring. Returns the frames it
/// finished.
inline unsigned receiveFrom(CoreContext *Ctx, tc_peer *Peer, JamRun &Run) {
  // A peer that went away may have left complete frames behind: they
  // still run (nothing sent is lost); only credits stop.
  if (!Peer->Rx->Ring || !Peer->Welcomed)
    return 0;
  return serveRing(Ctx, Peer, Run);
}

/// The word a frame's arrival will write first: the header line of the
/// slot the first ring expects next (what a waiting executor watches).
const volatile void *watchedWord(CoreContext *Ctx);

} // namespace twochains::rt

#endif
