//===- Progress.cpp - tc_progress and the executor thread -----------------===//
//
// A turn of the context (tc_progress): the workers that need it, the
// control turn's housekeeping when the clock says one is due, then every
// peer's turn: the answers that came for it by message, its send side
// (send/Send.h, serviceSends) and its receive side (receive/Receive.h,
// receiveFrom), which polls its ring at the slot it expects next and runs
// what arrived. The executor thread runs turns and waits (base/Wait.h)
// while nothing arrives.
//
//===----------------------------------------------------------------------===//
#include "context/Context.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "calls/Calls.h"
#include "containment/JamGuard.h"
#include "core/Lock.h"
#include "core/Polled.h"
#include "core/Sleep.h"
#include "receive/Receive.h"
#include "send/Send.h"

#include <algorithm>
#include <climits>
#include <thread>

using namespace twochains::rt;

static constexpr unsigned ControlEvery = 8;
/// A clock read costs about 30 ns in a VM, an idle poll about as much:
/// read every 8 calls, it was an eighth of a waiting receiver's time, and
/// a frame that lands during one waits for it.
static constexpr unsigned ClockEvery = 64;
static constexpr uint64_t ControlPeriodNs = 1'000'000;
static constexpr uint64_t ControlBusyPeriodNs = 10'000'000;
/// The executor sleeps this long at most at a time (tc_executor_stop
/// wakes it sooner).
static constexpr uint64_t ExecutorSleepNs = 100'000'000;

/// After a sleep, or a look that found something: the next turn takes the
/// control turn, whose clock would otherwise hold a handshake or a reply
/// that woke it for a while, and looks at the credit lines' reports.
static void takeControlDue(tc_context *Ctx) {
  if (Ctx->ControlDue.load(std::memory_order_relaxed) &&
      Ctx->ControlDue.exchange(false, std::memory_order_relaxed)) {
    // The next turn counts to both: a control turn, and a report turn
    // (a fault or miss report in a credit line may be what woke it).
    Ctx->ControlTurnNs = 0;
    Ctx->ClockPolls = ClockEvery - 1;
    Ctx->ControlPolls = ControlEvery - 1;
  }
}

extern "C" tc_status_t tc_executor_start(tc_context_t *Ctx) {
  if (!Ctx || Ctx->Executor.joinable())
    return TC_ERR_INVALID_PARAM;
  Ctx->StopExecutor = false;
  Ctx->ExecutorRunning = true;
  Ctx->Executor = std::thread([Ctx] {
    IdleWait Idle;
    while (!Ctx->StopExecutor.load(std::memory_order_relaxed)) {
      unsigned Ran = 0;
      const volatile void *Watched;
      {
        lockContext(Ctx);
        std::lock_guard<std::recursive_mutex> G(Ctx->Lock, std::adopt_lock);
        takeControlDue(Ctx);
        progressContext(Ctx, &Ran);
        Watched = watchedWord(Ctx);
      }
      // Application threads waiting for the lock go first.
      while (Ctx->LockWaiters.load(std::memory_order_relaxed) > 0 &&
             !Ctx->StopExecutor.load(std::memory_order_relaxed))
        std::this_thread::yield();
      if (Ran) {
        Idle.busy();
        continue;
      }
      // An answer to a call comes on the control worker, not into a ring.
      if (!Ctx->Calls->CallsOutstanding)
        Ctx->Wait->wait(Watched);
      // Idle a while: sleeps until a frame or a message comes.
      uint64_t Now = nowNs();
      Idle.idle(Ctx, Now, Now + ExecutorSleepNs);
    }
  });
  return TC_OK;
}

void twochains::rt::stopExecutor(tc_context *Ctx) {
  Ctx->StopExecutor = true;
  wakeContext(Ctx);
  Ctx->Executor.join();
  Ctx->ExecutorRunning = false;
}

extern "C" tc_status_t tc_executor_stop(tc_context_t *Ctx) {
  if (!Ctx || !Ctx->Executor.joinable())
    return TC_ERR_INVALID_PARAM;
  stopExecutor(Ctx);
  return TC_OK;
}

extern "C" tc_status_t tc_wait(tc_context_t *Ctx, int TimeoutMs) {
  if (!Ctx || TimeoutMs < 0 || ThreadRunningJamOf == Ctx)
    return TC_ERR_INVALID_PARAM;
  sleepContext(Ctx, msToNs(uint64_t(TimeoutMs)));
  HotPathGuard Guard(Ctx);
  takeControlDue(Ctx);
  return TC_OK;
}

extern "C" tc_status_t tc_context_fd(tc_context_t *Ctx, int *Fd) {
  if (!Ctx || !Fd || Ctx->WakeFd < 0)
    return TC_ERR_INVALID_PARAM;
  *Fd = Ctx->WakeFd;
  return TC_OK;
}

extern "C" int tc_context_arm(tc_context_t *Ctx, int *MaxTimeoutMs) {
  if (!Ctx || ThreadRunningJamOf == Ctx)
    return TC_ERR_INVALID_PARAM;
  uint64_t MaxSleepNs = NoDueTime;
  if (!armSleep(Ctx, MaxSleepNs))
    return 0;
  // Rounded up, as poll's timeout is: the fd's sleep ends no sooner.
  if (MaxTimeoutMs)
    *MaxTimeoutMs = MaxSleepNs == NoDueTime
                        ? -1
                        : int(std::min<uint64_t>((MaxSleepNs + 999'999) / 1'000'000, INT_MAX));
  return 1;
}

extern "C" const char *tc_wait_mode_name(const tc_context_t *Ctx) {
  return Ctx && Ctx->Wait ? Ctx->Wait->name() : "";
}



/// One peer's whole turn: the answers that came for it by message, its
/// send side (reports, a corked batch, what jams queued), then its receive
/// side. Returns the frames it finished.
static unsigned servePeer(tc_context *Ctx, tc_peer *Peer, JamRun &Run) {
  // A channel that an application thread is sending on keeps its turn
  // for the next pass: this side never waits for it.
  std::unique_lock<std::recursive_mutex> Channel(Peer->Channel, std::defer_lock);
  if (Peer->Channelled && !Channel.try_lock())
    return 0;
  if (!Ctx->Calls->ArrivedAnswers.empty())
    takeArrivedAnswers(Peer);
  // Read again, not passed: the caller's loop keeps fewer values alive.
  serviceSends(Peer, /*ReportTurn=*/Ctx->ControlPolls == 0);
  return receiveFrom(Ctx, Peer, Run);
}

/// The control worker's turn and the context's housekeeping, when the
/// clock says one is due (tc_progress reads it every ClockEvery calls).
__attribute__((noinline)) static void controlTurn(tc_context *Ctx) {
  uint64_t Now = nowNs();
  Ctx->Calls->endControlQuiet(Now);
  uint64_t Period = Ctx->RanSinceClock ? ControlBusyPeriodNs : ControlPeriodNs;
  Ctx->RanSinceClock = 0;
  if (Now - Ctx->ControlTurnNs < Period)
    return;
  Ctx->ControlTurnNs = Now;
  progressControl(Ctx);
  runHousekeeping(Ctx);
}

/// One peer's part of tc_progress. A peer with nothing due but a ready
/// ring goes straight to it (pollRing); servePeer otherwise. ReportTurn:
/// this call looks for miss and fault reports.
static inline unsigned pollPeer(tc_context *Ctx, tc_peer *Peer, bool ReportTurn, JamRun &Run) {
  if (!Ctx->Calls->ArrivedAnswers.empty() || sendsDue(Peer, ReportTurn) || Peer->Channelled ||
      !ringReady(Peer))
    return servePeer(Ctx, Peer, Run);
  return pollRing(Ctx, Peer, Run);
}

/// A turn of the context; inlined into tc_progress, whose every call is
/// one (an idle receiver's is ~150 instructions).
__attribute__((always_inline)) static inline tc_status_t progressTurn(tc_context *Ctx,
                                                                      unsigned *Executed) {
  HotPathGuard Guard(Ctx);
  if (Ctx->Receive->RunningJam) {
    // The frame being run lives in the context's private copy, which the
    // next frame would overwrite under it.
    logError("tc_progress called from inside a running jam: refused");
    return TC_ERR_INVALID_PARAM;
  }
  if (!JamGuardReady) {
    std::string GuardError;
    if (!prepareJamGuard(GuardError)) {
      logError(GuardError);
      return TC_ERR_IO;
    }
  }
  JamRun &Run = currentJamRun();
  if (Ctx->Containment->Dog)
    Ctx->Containment->Dog->watch(&Run);
  // Frames into this side's rings need no progress here (the sender's put
  // or stores write them); only this side's own puts (credits, replies)
  // do, and those complete at their next report or a later turn. So the
  // data worker turns every call only while this side puts to a peer and
  // no thread sends on channels (a multi-threaded worker's progress takes
  // UCX's lock, which every sending thread's put takes too); else every
  // ClockEvery calls, for connections being wired up.
  if (Ctx->DataWorker &&
      ((Ctx->PutPeers && !Ctx->Channels) || Ctx->PayloadsAheadActive || Ctx->ClockPolls == 0))
    ucp_worker_progress(Ctx->DataWorker);
  // The control worker (TCP: an epoll_wait system call per progress, a
  // microsecond or more in a VM) takes a turn at most every ControlPeriodNs,
  // the clock read every ClockEvery calls: connections and rieds wait a
  // little, frames by RMA never. While frames run (some ran since the
  // clock was last read), every ControlBusyPeriodNs: each turn stalls the
  // frame behind it by its system calls, which is the tail of a stream.
  // Frames by message arrive on it: with such peers it is progressed every
  // call. Answers to calls come as frames unless larger than a slot: while
  // calls are outstanding it turns every ControlEvery calls, not every call
  // (a system call each over TCP), and not in a call's first microseconds
  // (CallsContext::ControlQuietUntilNs).
  if (Ctx->AmPeers || Ctx->PayloadsAheadOnControl ||
      (Ctx->Calls->CallsOutstanding && Ctx->ControlPolls == 0 &&
       !Ctx->Calls->ControlQuiet.load(std::memory_order_relaxed)))
    progressControl(Ctx);
  if (++Ctx->ControlPolls >= ControlEvery)
    Ctx->ControlPolls = 0;
  if (++Ctx->ClockPolls >= ClockEvery) {
    Ctx->ClockPolls = 0;
    controlTurn(Ctx);
  }
  unsigned Count = 0;
  // Frames come from the senders that connected to us and, as replies,
  // from the receivers we connected to: those polled every pass, and the
  // cold ones whose senders rang the doorbell (core/Polled.h). By index,
  // without a copy on the hot path: a jam may connect onward
  // (tc_jam_forward) and so append to the list while we iterate.
  bool ReportTurn = Ctx->ControlPolls == 0;
  if (Ctx->Doorbell &&
      __builtin_expect(__atomic_load_n(&Ctx->Doorbell[DoorbellSummary], __ATOMIC_ACQUIRE), 0))
    answerDoorbell(Ctx, creditsAsked);
  for (size_t I = 0; I < Ctx->Polled.size(); ++I)
    Count += pollPeer(Ctx, Ctx->Polled[I], ReportTurn, Run);
  Ctx->RanSinceClock += Count;
  if (Executed)
    *Executed = Count;
  return TC_OK;
}

tc_status_t twochains::rt::progressContext(tc_context *Ctx, unsigned *Executed) {
  return progressTurn(Ctx, Executed);
}

extern "C" tc_status_t tc_progress(tc_context_t *Ctx, unsigned *Executed) {
  if (!Ctx)
    return TC_ERR_INVALID_PARAM;
  return progressTurn(Ctx, Executed);
}

/// What the layers below call to have the context progress (core's
/// Progress): a caller waiting for its answer, say.
static unsigned progressFromBelow(CoreContext *Core) {
  takeControlDue(static_cast<tc_context *>(Core));
  unsigned Ran = 0;
  progressContext(static_cast<tc_context *>(Core), &Ran);
  return Ran;
}

/// Before the context sleeps: credits its rings have not reported yet
/// (a ring reports them after some idle polls, which a sleeper does not
/// make) are reported, or a peer flushing to it would wait for its wake.
static void reportBeforeSleep(CoreContext *Core) {
  auto *Ctx = static_cast<tc_context *>(Core);
  // A cold ring owes nothing: it reported all before it went cold.
  for (size_t I = 0; I < Ctx->Polled.size(); ++I) {
    tc_peer *Peer = Ctx->Polled[I];
    std::unique_lock<std::recursive_mutex> Channel(Peer->Channel, std::defer_lock);
    if (!Peer->Rx->Receive || !Peer->Welcomed || !Peer->Rx->Receive->creditPending() ||
        (Peer->Channelled && !Channel.try_lock()))
      continue;
    reportCredits(Ctx, Peer);
  }
}

void twochains::rt::setupProgress(tc_context *Ctx) {
  Ctx->Progress = progressFromBelow;
  Ctx->BeforeSleep.subscribe(reportBeforeSleep);
}
