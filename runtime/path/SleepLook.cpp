//===- SleepLook.cpp - The frame path's part of a sleep's look ------------===//
//
// Before the context sleeps (core/Sleep.cpp), it raises its sleep flag in
// the credit line of every polled peer that stores into it, fences, and
// looks at their rings and credit lines once more: a peer that stored a
// frame or a credit report before it saw the flag is found here, one that
// stores after it wakes the sleeper (FramePath.h, wakeIfSleeping).
//
//===----------------------------------------------------------------------===//
#include "path/FramePath.h"
#include "path/PeerPath.h"

namespace twochains::rt {

static void flagPeerForSleep(tc_peer *Peer, CoreContext::PeerLook &L) {
  if (Peer->Rx->CreditDirect && Peer->Tx->RingDirect) {
    __atomic_store_n(&Peer->Rx->CreditDirect[CreditWordSleep], 1, __ATOMIC_RELAXED);
    L.Flagged = true;
  } else {
    L.Bounded = true; // its puts land unseen
  }
}

static void lookAtPeerForSleep(CoreContext *Ctx, tc_peer *Peer, CoreContext::PeerLook &L) {
  PeerReceiveHalf &Rx = *Peer->Rx;
  if (Rx.Ring && Rx.Receive && Peer->Welcomed) {
    uint64_t E = Rx.Receive->expected();
    if (frameBegun(ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot()), E)) {
      // There at the last look too and not taken since: incomplete,
      // awaiting code, or a frame this wait does not run (tc_flush).
      if (Rx.SleepFound == E + 1)
        L.Bounded = true;
      else
        L.Found = true;
      Rx.SleepFound = E + 1;
    }
  }
  PeerSendHalf &Tx = *Peer->Tx;
  if (Tx.CreditWord)
    for (unsigned W = 0; W < CreditWordsWatched; ++W)
      if (uint64_t V = Tx.CreditWord[W]; V != Tx.SleepCredit[W]) {
        Tx.SleepCredit[W] = V;
        L.Found = true;
      }
  // A closed ring opened again: a send that waited for it may go.
  if (Tx.CreditWord && Tx.ClosedAt && Tx.CreditWord[CreditWordLimit] != Tx.ClosedAt) {
    Tx.ClosedAt = Tx.CreditWord[CreditWordLimit];
    L.Found = true;
  }
}

void setupSleepLook(CoreContext *Ctx) {
  Ctx->FlagPeerForSleep = flagPeerForSleep;
  Ctx->LookAtPeerForSleep = lookAtPeerForSleep;
}

} // namespace twochains::rt
