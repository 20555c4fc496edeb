//===- Lock.h - Who holds what: the context's lock and peers' channels ----===//
//
// Lock order: a peer's channel, then the context's lock; whoever holds the
// context only tries channels (runtime/README.md, "Locks").
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_LOCK_H
#define TWOCHAINS_RUNTIME_CORE_LOCK_H

#include "core/CoreContext.h"

#include <thread>

namespace twochains::rt {

/// The context whose jam this thread is running, if any: the jam's own calls
/// (tc_jam_reply) do not take the lock again, so a jam abandoned inside one
/// leaves no lock behind.
/// (initial-exec: read on every send and frame, where __tls_get_addr was a
/// twentieth of a frame's instructions.)
inline thread_local CoreContext *ThreadRunningJamOf __attribute__((tls_model("initial-exec"))) =
    nullptr;

/// Takes the context's lock, counted as waiting while it does; a thread
/// that just had it lets one that waits go first (the executor thread and
/// the application's threads alike).
inline void lockContext(CoreContext *Ctx) {
  if (Ctx->LockWaiters.load(std::memory_order_relaxed) > 0)
    std::this_thread::yield();
  if (Ctx->Lock.try_lock())
    return;
  Ctx->LockWaiters.fetch_add(1, std::memory_order_relaxed);
  Ctx->Lock.lock();
  Ctx->LockWaiters.fetch_sub(1, std::memory_order_relaxed);
}

/// What tc_send and tc_progress hold: the context's lock while the
/// executor thread runs or the context is for threads (TC_CONTEXT_THREADS),
/// nothing otherwise (the caller then serialises, as with a UCX worker). An
/// uncontended lock still costs an atomic read-modify-write, which waits
/// for the frame just stored into the other process's memory to leave this
/// core: in a stream, most of a send.
/// Whether a hot-path call on Ctx takes its lock (HotPathGuard).
inline bool hotPathLocks(CoreContext *Ctx) {
  return (Ctx->ExecutorRunning.load(std::memory_order_acquire) ||
          (Ctx->Flags & TC_CONTEXT_THREADS)) &&
         ThreadRunningJamOf != Ctx;
}

class HotPathGuard {
public:
  explicit HotPathGuard(CoreContext *Ctx) : Held(hotPathLocks(Ctx) ? Ctx : nullptr) {
    if (Held)
      lockContext(Held);
  }
  ~HotPathGuard() {
    if (Held)
      Held->Lock.unlock();
  }
  HotPathGuard(const HotPathGuard &) = delete;
  HotPathGuard &operator=(const HotPathGuard &) = delete;

private:
  CoreContext *Held;
};

/// What a call on one peer holds (tc_send, tc_call_*, tc_flush, ...): a
/// channelled peer's own lock, and nothing of the context, so threads on
/// different peers never wait for each other; otherwise what HotPathGuard
/// holds. The one order in which locks are waited for is channel, then
/// context: whoever holds the context only tries channels.
class PeerGuard {
public:
  explicit PeerGuard(tc_peer *Peer) {
    if (Peer->Channelled) {
      Peer->Channel.lock();
      Held = Peer;
    } else if (hotPathLocks(Peer->Ctx)) {
      lockContext(Peer->Ctx);
      HeldContext = Peer->Ctx;
    }
  }
  ~PeerGuard() {
    if (Held)
      Held->Channel.unlock();
    else if (HeldContext)
      HeldContext->Lock.unlock();
  }
  PeerGuard(const PeerGuard &) = delete;
  PeerGuard &operator=(const PeerGuard &) = delete;

private:
  tc_peer *Held = nullptr;
  CoreContext *HeldContext = nullptr;
};

} // namespace twochains::rt

#endif
