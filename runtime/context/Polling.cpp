//===- Polling.cpp - Rings that go cold, and the sweep -------------------===//
//
// On the control turn: a peer quiet for QuietTurnsBeforeCold turns and
// QuietBeforeColdNs (core/Polled.h), with nothing owed either way, is made
// cold: its sender is told by the cold flag in its credit line, and its
// ring leaves the list every pass polls (core/Polled.h). The flag is
// stored before the ring is looked at once more, and the sender loads it
// after each frame it stores (the same order as the sleep flag's, and the
// same fence: core/Sleep.cpp), so a frame stored meanwhile is either seen
// here or followed by the doorbell.
// A sender that cannot ring (it could not map the doorbell) is found by
// the sweep, which looks at a few cold rings each turn.
//
// A cold ring is also closed past the frame it expects (the limit word,
// stored with the cold flag, under the same fence): if that frame has not
// begun, its sender sees the limit after storing it, so every page but
// that frame's slot's is given back. A sender that would store past
// the limit asks for the ring to be opened (its doorbell, or a wake), and
// the frame waits as for a full ring.
//
//===----------------------------------------------------------------------===//
#include "context/Context.h"

#include "calls/PeerCalls.h"
#include "code/PeerCode.h"
#include "package/PeerPackage.h"

#include "core/Polled.h"
#include "core/Sleep.h"
#include "core/Stats.h"
#include "receive/Receive.h"
#include "send/Send.h"
#include "path/FramePath.h"
#include "path/Mailbox.h"

#include <cstdlib>
#include <cstring>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

using namespace twochains::rt;

/// Cold rings the sweep looks at per control turn.
static constexpr unsigned SweepPerTurn = 64;

/// Whether the peer may go cold: its sender stores into the ring (its
/// offer says so) and can be told (RMA with direct mappings both ways, a
/// doorbell place), and
/// nothing is owed or awaited either way.
static bool mayGoCold(tc_context *Ctx, tc_peer *P) {
  const PeerSendHalf &Tx = *P->Tx;
  const PeerReceiveHalf &Rx = *P->Rx;
  const PeerReceive &Receiving = *P->Receiving;
  if (!P->Welcomed || P->Failed || P->Channelled || P->Path != PathRma || !Rx.SenderStores ||
      !Rx.CreditDirect || !Tx.RingDirect || P->DoorbellPlace == NoDoorbell || !Rx.Ring ||
      !Rx.Receive || !Tx.Send || !Tx.CreditWord)
    return false;
  uint64_t Expected = Rx.Receive->expected();
  return Tx.CreditWord[CreditWordFinished] >= Tx.Send->next() && !sendsDue(P, true) &&
         !callsAwaited(P) && !P->Code->Shipping.active() && !P->Code->Deploying.active() &&
         !P->Package->PushingRied && !Tx.Corked && !Rx.Receive->creditPending() &&
         !Receiving.RefusalPending && !Receiving.CodeWait.awaiting(Expected) &&
         !Receiving.StalledSinceNs &&
         !frameBegun(ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot()), Expected);
}

/// The flag's stores before the rings' loads, here and in every sender.
static void fenceAfterFlags() {
  if (!SleepFenceAsymmetric || syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0))
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static void coolQuietPeers(tc_context *Ctx) {
  std::vector<tc_peer *> Cooled;
  uint64_t Now = nowNs();
  for (size_t I = 0; I < Ctx->Polled.size(); ++I) {
    tc_peer *P = Ctx->Polled[I];
    if (!mayGoCold(Ctx, P))
      notQuiet(P);
    else if (quietLongEnough(P, P->Rx->Receive->expected(), P->Tx->Send->next(), Now))
      Cooled.push_back(P);
  }
  if (Cooled.empty())
    return;
  // Cold, and closed past the next frame: its slot is kept, the others'
  // pages given back unless that frame has begun (its sender may then be
  // storing on without having seen the limit).
  for (tc_peer *P : Cooled) {
    closeColdRing(P);
    makeCold(Ctx, P);
    countHeld(Ctx, &tc_stats_t::rings_cooled);
  }
  fenceAfterFlags();
  for (tc_peer *P : Cooled) {
    uint64_t Expected = P->Rx->Receive->expected();
    // A frame stored before its sender saw the flag: polled again.
    if (frameBegun(ringSlot(P->Rx->Ring, Ctx->SlotSize, P->Rx->Receive->expectedSlot()),
                   Expected)) {
      startPolling(Ctx, P);
      continue;
    }
    releaseRingPages(Ctx, P);
  }
}

/// A few cold rings a turn, in turn: a frame whose sender did not ring.
static void sweepColdRings(tc_context *Ctx) {
  size_t Peers = Ctx->Accepted.size() + Ctx->Connected.size();
  if (!Ctx->ColdPeers || !Peers)
    return;
  for (unsigned Looked = 0; Looked < SweepPerTurn && Looked < Peers; ++Looked) {
    size_t At = Ctx->SweepAt++ % Peers;
    tc_peer *P = At < Ctx->Accepted.size() ? Ctx->Accepted[At].get()
                                           : Ctx->Connected[At - Ctx->Accepted.size()];
    if (P->Cold && P->Rx->Ring && P->Rx->Receive &&
        frameBegun(ringSlot(P->Rx->Ring, Ctx->SlotSize, P->Rx->Receive->expectedSlot()),
                   P->Rx->Receive->expected()))
      startPolling(Ctx, P);
  }
}

/// TC_COLD_SWEEP=0: no sweep, so that a test shows the doorbell alone
/// finds cold rings' frames (diagnostic; docs/scaling.md).
static bool sweepWanted() {
  static const bool Wanted = [] {
    const char *Env = std::getenv("TC_COLD_SWEEP");
    return !Env || std::strcmp(Env, "0");
  }();
  return Wanted;
}

static void turnPolling(CoreContext *Core) {
  auto *Ctx = static_cast<tc_context *>(Core);
  if (sweepWanted())
    sweepColdRings(Ctx);
  coolQuietPeers(Ctx);
}

void twochains::rt::setupPolling(tc_context *Ctx) { addHousekeeping(Ctx, turnPolling); }
