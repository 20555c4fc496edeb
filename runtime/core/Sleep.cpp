//===- Sleep.cpp - Waits that sleep until a frame or a message arrives -----===//
//
// The sleeper writes its flag into every peer's credit line that it can
// store into, orders that before it looks at its rings and credit lines
// again (membarrier: every thread of every registered process has fenced),
// and sleeps only if it found nothing. A peer that stores a frame or a
// credit report, then loads the flag (fenceBeforeSleepFlag), either sees
// the flag, and wakes the sleeper, or stored before the sleeper looked.
//
//===----------------------------------------------------------------------===//
#include "core/Sleep.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "core/Lock.h"
#include "core/Stats.h"
#include "ucx/Request.h"
#include "wire/Frame.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <mutex>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace twochains::rt {

__attribute__((visibility("hidden"))) bool SleepFenceAsymmetric = false;

/// The context whose fd this thread sleeps on (in sleepContext's prepare
/// and sleep): a ring it adds to the polled list needs no wake.
static thread_local const CoreContext *SleepingOn = nullptr;

static bool registerAsymmetricFence() {
  static std::once_flag Once;
  static bool Registered = false;
  std::call_once(Once, [] {
    long Commands = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    Registered = Commands > 0 && (Commands & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                 syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
    SleepFenceAsymmetric = Registered;
  });
  return Registered;
}

bool setupSleep(CoreContext *Ctx) {
  registerAsymmetricFence();
  Ctx->WakeFd = epoll_create1(EPOLL_CLOEXEC);
  if (Ctx->WakeFd < 0) {
    logError(std::string("epoll_create1: ") + std::strerror(errno));
    return false;
  }
  return true;
}

void teardownSleep(CoreContext *Ctx) {
  if (Ctx->WakeFd >= 0)
    close(Ctx->WakeFd);
  Ctx->WakeFd = -1;
}

void forgetSleepWorker(CoreContext *Ctx) {
  // A thread asleep on the worker's fd would not hear of the new one.
  if (Ctx->WakeWorker && Ctx->WakeWorkerFd && Ctx->FdSleeper.load(std::memory_order_acquire) &&
      SleepingOn != Ctx)
    ucp_worker_signal(Ctx->WakeWorker);
  int Fd;
  if (Ctx->WakeWorker && Ctx->WakeWorkerFd && ucp_worker_get_efd(Ctx->WakeWorker, &Fd) == UCS_OK &&
      Ctx->WakeFd >= 0)
    epoll_ctl(Ctx->WakeFd, EPOLL_CTL_DEL, Fd, nullptr);
  Ctx->WakeWorker = nullptr;
  Ctx->WakeWorkerFd = false;
}

/// The control worker's fd in the set (once per worker: a listen or
/// connect may have replaced it). False if it has none: an application's
/// worker whose context lacks UCP_FEATURE_WAKEUP.
static bool watchWorker(CoreContext *Ctx) {
  if (Ctx->WakeWorker == Ctx->Worker)
    return Ctx->WakeWorkerFd;
  forgetSleepWorker(Ctx);
  Ctx->WakeWorker = Ctx->Worker;
  int Fd;
  epoll_event E = {};
  E.events = EPOLLIN;
  Ctx->WakeWorkerFd = Ctx->Worker && Ctx->WakeFd >= 0 &&
                      ucp_worker_get_efd(Ctx->Worker, &Fd) == UCS_OK &&
                      epoll_ctl(Ctx->WakeFd, EPOLL_CTL_ADD, Fd, &E) == 0;
  if (!Ctx->WakeWorkerFd)
    logWarning("the control worker has no event fd (its UCX context lacks "
               "UCP_FEATURE_WAKEUP): waits nap for at most 1 ms at a time");
  return Ctx->WakeWorkerFd;
}

/// The RMA worker's fd in the set (Watch), or out of it: in it only while
/// payloads move on that worker, when each sleep arms the worker first.
/// Once signalled the fd stays readable until the worker is armed again,
/// so an unarmed worker's fd in the set would end every sleep at once.
/// False if the worker has no fd.
static bool watchDataWorker(CoreContext *Ctx, bool Watch) {
  if (Watch == Ctx->DataWorkerWatched)
    return true;
  int Fd;
  epoll_event E = {};
  E.events = EPOLLIN;
  if (!Ctx->DataWorker || Ctx->WakeFd < 0 || ucp_worker_get_efd(Ctx->DataWorker, &Fd) != UCS_OK ||
      epoll_ctl(Ctx->WakeFd, Watch ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, Fd, &E) != 0)
    return false;
  Ctx->DataWorkerWatched = Watch;
  return true;
}

namespace {
/// What a turn of a worker and its arming found before a sleep.
enum class Armed { Found, Yes, Failed };
} // namespace

/// Turns Worker until it has nothing more (Took: a turn before this look
/// took something already), then arms it. UCX wakes an armed worker only
/// for events that come after it was armed: what arrived before is taken
/// first (its handlers run now), and is then what the wait looks at,
/// without sleeping: Found.
static Armed turnThenArm(ucp_worker_h Worker, bool Took) {
  for (unsigned I = 0; I < 64 && turnWorker(Worker); ++I)
    Took = true;
  if (Took)
    return Armed::Found;
  ucs_status_t St = ucp_worker_arm(Worker);
  return St == UCS_ERR_BUSY ? Armed::Found : St == UCS_OK ? Armed::Yes : Armed::Failed;
}

namespace {
struct Look {
  bool Found = false;   // something to do: do not sleep
  bool Bounded = false; // some peer cannot wake this side: nap
  uint64_t DueNs = NoDueTime; // some feature has work on the clock then
};
} // namespace

/// The sleeper's side of the handshake with its peers. Holds the context.
static Look prepare(CoreContext *Ctx) {
  Look L;
  Ctx->BeforeSleep.notify(Ctx);
  // A payload on its way ahead of its frame (send/PayloadAhead.h) moves
  // as its worker turns. On the control worker its socket's events wake
  // the sleep, and the sleep is bounded besides (not a busy wait: a peer
  // whose payload never comes must not keep this side's core busy). On
  // the RMA worker, the worker's own events wake it: a rendezvous's
  // answer, or its fetch's completion (RDMA), rather than the end of a
  // 1 ms nap.
  if (Ctx->PayloadsAheadOnControl)
    L.Bounded = true;
  bool OnRma = Ctx->PayloadsAheadActive > Ctx->PayloadsAheadOnControl;
  if (!watchDataWorker(Ctx, OnRma)) {
    L.Bounded |= OnRma;
  } else if (OnRma) {
    Armed A = turnThenArm(Ctx->DataWorker, false);
    L.Found = A == Armed::Found;
    L.Bounded |= A == Armed::Failed;
    if (L.Found)
      return L;
  }
  if (!watchWorker(Ctx)) {
    L.Bounded = true;
  } else {
    // A handler only queues what came (an answer for code shipped ahead, a
    // handshake), so this look cannot tell whether it is what the waiter
    // waits for: it looks rather than sleeps. So with what a turn before
    // this look took (progressControl): the event that woke the fd for it
    // is spent.
    Armed A = turnThenArm(Ctx->Worker, Ctx->ControlTook.exchange(false, std::memory_order_relaxed));
    L.Found = A == Armed::Found;
    L.Bounded |= A == Armed::Failed;
    if (L.Found)
      return L;
  }
  CoreContext::PeerLook Peers;
  // Frames and credits by message make events; an unwelcomed peer's
  // handshake is messages too. Cold rings are not looked at: their
  // senders ring the doorbell, and wake this side if its doorbell says it
  // sleeps (core/Polled.h).
  if (Ctx->FlagPeerForSleep)
    for (size_t I = 0; I < Ctx->Polled.size(); ++I)
      if (tc_peer *Peer = Ctx->Polled[I]; Peer->Welcomed && !Peer->Failed && Peer->Path == PathRma)
        Ctx->FlagPeerForSleep(Peer, Peers);
  if (Ctx->Doorbell && Ctx->ColdPeers) {
    __atomic_store_n(&Ctx->Doorbell[DoorbellSleeping], 1, __ATOMIC_RELAXED);
    Peers.Flagged = true;
  }
  if (Peers.Flagged) {
    Ctx->SleepLooks.fetch_add(1, std::memory_order_relaxed);
    if (SleepFenceAsymmetric &&
        syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0) {
    } else {
      // The stores' side fences too only where it could not register.
      __atomic_thread_fence(__ATOMIC_SEQ_CST);
      if (SleepFenceAsymmetric)
        L.Bounded = true;
    }
  }
  if (Ctx->LookAtPeerForSleep)
    for (size_t I = 0; I < Ctx->Polled.size(); ++I)
      Ctx->LookAtPeerForSleep(Ctx, Ctx->Polled[I], Peers);
  L.Found |= Peers.Found;
  L.Bounded |= Peers.Bounded;
  if (Ctx->Doorbell && __atomic_load_n(&Ctx->Doorbell[DoorbellSummary], __ATOMIC_RELAXED))
    L.Found = true;
  // Work on the clock (a retry, a time limit) wakes the sleep when due:
  // the pass after a sleep takes the control turn, which does it.
  L.DueNs = nextDueTime(Ctx);
  if (L.DueNs <= nowNs())
    L.Found = true;
  return L;
}

/// Whether something on the clock is due within Ns: the sleep is that long.
static uint64_t untilDue(const Look &L, uint64_t Ns) {
  uint64_t Now = nowNs();
  return L.DueNs <= Now ? 0 : std::min(Ns, L.DueNs - Now);
}

static void futexWait(std::atomic<uint32_t> &Word, uint32_t Seen, uint64_t Ns) {
  timespec T = {time_t(Ns / 1'000'000'000), long(Ns % 1'000'000'000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t *>(&Word), FUTEX_WAIT_PRIVATE, Seen, &T, nullptr, 0);
}

void notifySleepers(CoreContext *Ctx) {
  Ctx->WakeSeq.fetch_add(1, std::memory_order_release);
  if (Ctx->WakeWaiters.load(std::memory_order_acquire) > 0)
    syscall(SYS_futex, reinterpret_cast<uint32_t *>(&Ctx->WakeSeq), FUTEX_WAKE_PRIVATE, INT_MAX,
            nullptr, nullptr, 0);
}

void wakeContext(CoreContext *Ctx) {
  notifySleepers(Ctx);
  if (Ctx->WakeWorkerFd && Ctx->WakeWorker)
    ucp_worker_signal(Ctx->WakeWorker);
}

/// prepare, holding the context as its other calls do.
static Look prepareHeld(CoreContext *Ctx) {
  bool Locks = hotPathLocks(Ctx);
  if (Locks)
    lockContext(Ctx);
  Look L = prepare(Ctx);
  if (Locks)
    Ctx->Lock.unlock();
  return L;
}

bool armSleep(CoreContext *Ctx, uint64_t &MaxSleepNs) {
  Look L = prepareHeld(Ctx);
  MaxSleepNs = untilDue(L, L.Bounded || !Ctx->WakeWorkerFd ? NapNs : NoDueTime);
  return !L.Found;
}

void polledChanged(CoreContext *Ctx) {
  if (Ctx->FdSleeper.load(std::memory_order_acquire) && SleepingOn != Ctx && Ctx->WakeWorkerFd &&
      Ctx->WakeWorker)
    ucp_worker_signal(Ctx->WakeWorker);
}

bool sleepContext(CoreContext *Ctx, uint64_t TimeoutNs) {
  uint32_t Seen = Ctx->WakeSeq.load(std::memory_order_acquire);
  if (Ctx->FdSleeper.exchange(true, std::memory_order_acq_rel)) {
    Ctx->WakeWaiters.fetch_add(1, std::memory_order_acq_rel);
    futexWait(Ctx->WakeSeq, Seen, TimeoutNs);
    Ctx->WakeWaiters.fetch_sub(1, std::memory_order_acq_rel);
    return Ctx->WakeSeq.load(std::memory_order_acquire) != Seen;
  }
  SleepingOn = Ctx;
  Look L = prepareHeld(Ctx);
  bool Woken = L.Found;
  if (!Woken) {
    uint64_t Ns = untilDue(L, L.Bounded ? std::min(TimeoutNs, NapNs) : TimeoutNs);
    count(Ctx, &tc_stats_t::sleeps);
    if (Ctx->WakeWorkerFd) {
      // Rounded up: a sleep never ends before it should.
      int Ms = int(std::min<uint64_t>((Ns + 999'999) / 1'000'000, INT_MAX));
      epoll_event E;
      Woken = epoll_wait(Ctx->WakeFd, &E, 1, Ms) > 0;
    } else {
      timespec T = {time_t(Ns / 1'000'000'000), long(Ns % 1'000'000'000)};
      nanosleep(&T, nullptr);
    }
  }
  SleepingOn = nullptr;
  Ctx->FdSleeper.store(false, std::memory_order_release);
  // Awake: cold senders need not wake it (one may have taken it already).
  if (Ctx->Doorbell)
    __atomic_store_n(&Ctx->Doorbell[DoorbellSleeping], 0, __ATOMIC_RELAXED);
  // What woke it (a handshake, an answer by message) may wait for the
  // control turn, which the next pass then takes.
  Ctx->ControlDue.store(true, std::memory_order_relaxed);
  notifySleepers(Ctx);
  return Woken;
}

void IdleWait::idle(CoreContext *Ctx, uint64_t NowNs, uint64_t DeadlineNs) {
  if (!Since) {
    Since = NowNs;
    return;
  }
  if (!Ctx->SleepWaits || NowNs >= DeadlineNs)
    return;
  uint64_t Idle = NowNs - Since;
  if (Idle < YieldAfterNs)
    return;
  if (Idle < SleepAfterNs) {
    // The peer waited for may be runnable on this very core: it goes
    // first (a system call each, where the core is the caller's alone).
    sched_yield();
    return;
  }
  sleepContext(Ctx, DeadlineNs - NowNs);
}

} // namespace twochains::rt
