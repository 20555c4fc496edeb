//===- Sleep.h - Waits that sleep until a frame or a message arrives -------===//
//
// A side that waits (tc_wait, tc_call, tc_flush, the executor) spins a
// little, then sleeps on the context's epoll fd, which holds the control
// worker's event fd: messages make it readable. Frames and credit reports
// that a peer stores straight into this side's memory make no event, so
// before sleeping this side writes a flag into every such peer's credit
// line (CreditWordSleep), and a peer that stores into it afterwards sees
// the flag and wakes it with an AmWake message (path/FramePath.cpp).
// docs/runtime.md, "Sleeping waits", says why this is race-free and what
// a peer that never wakes can delay (its own frames only).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_SLEEP_H
#define TWOCHAINS_RUNTIME_CORE_SLEEP_H

#include "base/Clock.h"
#include "core/CoreContext.h"

namespace twochains::rt {

/// How long a wait polls before it sleeps: a frame that comes sooner is
/// taken at polling's latency.
constexpr uint64_t SpinBeforeSleepNs = 50'000;
/// After this long of it, each poll yields the core first.
constexpr uint64_t YieldAfterNs = 5'000;
/// The longest sleep where some peer cannot wake this side (its frames
/// come by RMA puts, not stores here, or UCX gives the worker no event
/// fd): such a peer's frames wait at most this long.
constexpr uint64_t NapNs = 1'000'000;

/// Whether a direct store's flag check is ordered by the sleeper alone
/// (membarrier, registered at the first context): a store, then a plain
/// load. Otherwise both sides fence.
extern bool SleepFenceAsymmetric __attribute__((visibility("hidden")));

/// A side that just stored a frame or a credit report straight into its
/// peer's memory orders that store before its load of the peer's sleep
/// flag (Dekker, the sleeper doing the mirror image).
inline void fenceBeforeSleepFlag() {
  if (SleepFenceAsymmetric)
    __asm__ __volatile__("" ::: "memory");
  else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/// At context creation: the epoll fd, and this process registered for the
/// asymmetric fence. False (logged) if the fd cannot be made.
bool setupSleep(CoreContext *Ctx);
void teardownSleep(CoreContext *Ctx);
/// The control worker is about to be destroyed: its fd leaves the epoll
/// set (the next sleep adds the new worker's).
void forgetSleepWorker(CoreContext *Ctx);

/// Sleeps until something may have arrived (a message, a flagged store, a
/// frame in a ring or a change in a credit line seen on the way in), or
/// TimeoutNs passed; another thread sleeping already: until it wakes.
/// True when woken or something was found; false at the timeout. The
/// caller holds no lock of the context and is not a running jam.
bool sleepContext(CoreContext *Ctx, uint64_t TimeoutNs);
/// The sleeper's side alone, for an application that polls the fd itself
/// (tc_context_arm): false if something is there to do first; else true,
/// and MaxSleepNs how long the fd may be slept on (NoDueTime: until it is
/// readable): NapNs if some peer cannot wake this side, less if a
/// feature's due time comes sooner.
bool armSleep(CoreContext *Ctx, uint64_t &MaxSleepNs);
/// A ring joined the polled list: a thread asleep on the fd did not flag
/// its peer, so it is woken to look again.
void polledChanged(CoreContext *Ctx);
/// Tells threads waiting in sleepContext behind the one on the fd to look
/// again (a call ended, the fd sleeper woke).
void notifySleepers(CoreContext *Ctx);
/// Wakes whoever sleeps on the context's fd (tc_executor_stop).
void wakeContext(CoreContext *Ctx);

/// A wait's idle streak: polls for YieldAfterNs, polls and yields until
/// SpinBeforeSleepNs, then sleeps.
struct IdleWait {
  uint64_t Since = 0;
  /// How long this wait polls and yields before it sleeps.
  uint64_t SleepAfterNs = SpinBeforeSleepNs;
  /// After a pass that did nothing: returns at once while spinning, else
  /// sleeps (until DeadlineNs at most). Sleeps only where the context's
  /// waits do (not TC_WAIT_POLL).
  void idle(CoreContext *Ctx, uint64_t NowNs, uint64_t DeadlineNs);
  /// After a pass that did something.
  void busy() { Since = 0; }
  /// After a turn of a wait until DeadlineNs (Ran: it did something):
  /// false once the deadline has passed; else polls a while or sleeps, as
  /// idle does, and true.
  bool after(CoreContext *Ctx, bool Ran, uint64_t DeadlineNs) {
    uint64_t Now = nowNs();
    if (Now > DeadlineNs)
      return false;
    if (Ran)
      busy();
    idle(Ctx, Now, DeadlineNs);
    return true;
  }
};

} // namespace twochains::rt

#endif
