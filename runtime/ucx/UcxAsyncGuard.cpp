//===- UcxAsyncGuard.cpp - Around a bug of UCX before 1.22 in async events -===//
//
// UCX's async thread delivers events on file descriptors (connection
// requests, the TCP connection manager's sockets) to the handler set for
// each. When the worker is busy it cannot, and queues the event as missed,
// under the handler's id, which for a descriptor is its number; the next
// ucp_worker_progress delivers it to whatever handler has that number
// then. A descriptor closed and reused in between, as connections are
// closed and the next ones accepted, gets the old one's event: a write
// event to a connection-manager endpoint that has sent nothing aborts the
// process (UCX 1.13, tcp_sockcm_ep.c:416, an assertion on its state), one
// to an endpoint disconnecting as well (openucx/ucx#11455). Anyone who
// reaches the listener could so abort a receiver by opening and closing
// connections fast (security-e2e 'startups': within seconds). UCX 1.22
// drops a missed event the handler no longer asks for (openucx/ucx#11458).
//
// The same here, from outside: the three calls libuct makes to set, change
// and remove a descriptor's handler are interposed, and each handler is
// called through a trampoline that passes on only the events it asks for
// now. This file is part of libtwochains-ucx, which comes before libucs in
// the process's lookup order (see UcxRkeyGuard.cpp); the real functions are
// the next definitions (RTLD_NEXT).
//
// The trampoline also parks a descriptor that asks for write events and
// takes them without doing anything (UcxAsyncGuard.h): the TCP connection
// manager asks for them while its endpoint waits for the worker's owner
// (a connection request not yet accepted, a reply not yet taken), and a
// socket is always writable, so UCX's async thread spun on it until the
// owner's next progress. In a job of 64 ranks on 2 cores, 40 % of all CPU
// time in the first all-to-all round.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <array>
#include <atomic>
#include <dlfcn.h>
#include <mutex>
#include <ucs/async/async_fwd.h>
#include <unordered_map>
#include <vector>

#include "ucx/UcxAsyncGuard.h"

namespace {

using SetFn = ucs_status_t (*)(ucs_async_mode_t, int, ucs_event_set_types_t, ucs_async_event_cb_t,
                               void *, ucs_async_context_t *);
using ModifyFn = ucs_status_t (*)(int, ucs_event_set_types_t);
using RemoveFn = ucs_status_t (*)(int, int);

/// Write events a handler may take in a row, asking for nothing else and
/// changing nothing, before its descriptor is parked.
constexpr unsigned IdleWritesBeforeParking = 16;

/// A handler as libuct set it, and the events it asks for now.
struct Handler {
  ucs_async_event_cb_t Callback;
  void *Arg;
  std::atomic<int> Events;
  int Fd;
  /// Bumped by every change of its events (under Guard::Lock).
  std::atomic<unsigned> Changes{0};
  /// Write events it took in a row without a change (the async thread's).
  std::atomic<unsigned> IdleWrites{0};
  /// Changed under Guard::Lock: parked (in Guard::Parked; read by the
  /// trampoline without it), removed.
  std::atomic<bool> Parked{false};
  bool Removed = false;
  /// The worker it serves, if Two-Chains claimed it (twochains_ucx_claim):
  /// only those are parked, and rearmed when that worker turns.
  void *Owner = nullptr;
};

struct Guard {
  std::mutex Lock;
  std::unordered_map<int, Handler *> ByDescriptor;
  /// Handlers removed without waiting for a call in flight (is_sync 0),
  /// kept a while before they are freed; libuct's TCP parts always wait.
  std::array<Handler *, 1024> Retired = {};
  size_t NextRetired = 0;
  /// Parked handlers: their descriptors ask the kernel for no write event
  /// until the next twochains_ucx_rearm_parked.
  std::vector<Handler *> Parked;
  /// The async contexts of claimed workers, and their workers.
  std::unordered_map<ucs_async_context_t *, void *> Owners;
  std::atomic<size_t> ParkedCount{0};
  std::atomic<uint64_t> IdleWritesTaken{0}, Parkings{0}, ParkedEvents{0};
  SetFn Set = reinterpret_cast<SetFn>(dlsym(RTLD_NEXT, "ucs_async_set_event_handler"));
  ModifyFn Modify = reinterpret_cast<ModifyFn>(dlsym(RTLD_NEXT, "ucs_async_modify_handler"));
  RemoveFn Remove = reinterpret_cast<RemoveFn>(dlsym(RTLD_NEXT, "ucs_async_remove_handler"));
};

Guard &guard() {
  static Guard *G = new Guard; // never destroyed: UCX removes handlers at exit
  return *G;
}

/// The worker whose handlers this thread's UCX calls set now.
thread_local void *Claiming = nullptr;

/// The handler this thread is calling: removed from inside its own call,
/// it is retired rather than freed (the trampoline reads it after).
thread_local Handler *Calling = nullptr;

void unlistParked(Guard &G, Handler *H) {
  if (!H->Parked)
    return;
  H->Parked = false;
  G.Parked.erase(std::remove(G.Parked.begin(), G.Parked.end(), H), G.Parked.end());
  G.ParkedCount.store(G.Parked.size(), std::memory_order_release);
}

/// After a write event that changed nothing: one more in a row, and past
/// IdleWritesBeforeParking its descriptor stops asking for them, unless it
/// changed meanwhile (Before: its changes when the event came).
void noteIdleWrite(Handler *H, int Asked, unsigned Before) {
  Guard &G = guard();
  G.IdleWritesTaken.fetch_add(1, std::memory_order_relaxed);
  // Only a descriptor that asks for write events alone: parked, it asks
  // for nothing, edge-triggered, so that an error or hang-up, which the
  // kernel reports whatever is asked, comes once rather than on every wait.
  if (Asked != UCS_EVENT_SET_EVWRITE ||
      H->IdleWrites.fetch_add(1, std::memory_order_relaxed) + 1 < IdleWritesBeforeParking)
    return;
  std::lock_guard<std::mutex> L(G.Lock);
  if (!H->Owner || H->Removed || H->Parked || H->Changes.load(std::memory_order_acquire) != Before)
    return;
  if (G.Modify(H->Fd, UCS_EVENT_SET_EDGE_TRIGGERED) != UCS_OK)
    return;
  H->Parked = true;
  G.Parked.push_back(H);
  G.ParkedCount.store(G.Parked.size(), std::memory_order_release);
  G.Parkings.fetch_add(1, std::memory_order_relaxed);
}

/// What UCX calls: a missed event the handler no longer asks for (its
/// descriptor's earlier owner's, or from before it changed its events)
/// ends here.
void trampoline(int Id, ucs_event_set_types_t Events, void *Arg) {
  auto *H = static_cast<Handler *>(Arg);
  int Asked = H->Events.load(std::memory_order_acquire);
  int Wanted = Events & Asked;
  // An error or a hang-up on a parked socket, which the kernel reports
  // whatever is asked: once (parked edge-triggered), and the handler finds
  // it with its next write event, once rearmed.
  if (H->Parked.load(std::memory_order_acquire))
    guard().ParkedEvents.fetch_add(1, std::memory_order_relaxed);
  if (!Wanted)
    return;
  unsigned Before = H->Changes.load(std::memory_order_acquire);
  Handler *Outer = Calling;
  Calling = H;
  H->Callback(Id, ucs_event_set_types_t(Wanted), H->Arg);
  Calling = Outer;
  if (Wanted != UCS_EVENT_SET_EVWRITE || H->Changes.load(std::memory_order_acquire) != Before)
    H->IdleWrites.store(0, std::memory_order_relaxed);
  else
    noteIdleWrite(H, Asked, Before);
}

} // namespace

extern "C" __attribute__((visibility("default"))) ucs_status_t
ucs_async_set_event_handler(ucs_async_mode_t Mode, int Fd, ucs_event_set_types_t Events,
                            ucs_async_event_cb_t Callback, void *Arg, ucs_async_context_t *Async) {
  Guard &G = guard();
  if (!G.Set)
    return UCS_ERR_UNSUPPORTED;
  auto *H = new Handler{Callback, Arg, {int(Events)}, Fd};
  if (Async) {
    // A handler set in a claimed call makes its async context the
    // worker's; those UCX's async thread sets later for it (a connection
    // accepted on a claimed listener) are the worker's too.
    std::lock_guard<std::mutex> L(G.Lock);
    if (Claiming)
      G.Owners[Async] = Claiming;
    if (auto It = G.Owners.find(Async); It != G.Owners.end())
      H->Owner = It->second;
  }
  ucs_status_t St = G.Set(Mode, Fd, Events, trampoline, H, Async);
  if (St != UCS_OK) {
    delete H;
    return St;
  }
  std::lock_guard<std::mutex> L(G.Lock);
  G.ByDescriptor[Fd] = H;
  return St;
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
ucs_async_modify_handler(int Fd, ucs_event_set_types_t Events) {
  Guard &G = guard();
  {
    // Before UCX's own change: an event it is told to stop asking for is
    // not passed on from now.
    std::lock_guard<std::mutex> L(G.Lock);
    if (auto It = G.ByDescriptor.find(Fd); It != G.ByDescriptor.end()) {
      Handler *H = It->second;
      H->Events.store(int(Events), std::memory_order_release);
      H->Changes.fetch_add(1, std::memory_order_acq_rel);
      H->IdleWrites.store(0, std::memory_order_relaxed);
      unlistParked(G, H); // what it asks for now is what UCX sets below
    }
  }
  return G.Modify ? G.Modify(Fd, Events) : UCS_ERR_UNSUPPORTED;
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
ucs_async_remove_handler(int Id, int Sync) {
  Guard &G = guard();
  if (!G.Remove)
    return UCS_ERR_UNSUPPORTED;
  ucs_status_t St = G.Remove(Id, Sync);
  if (St != UCS_OK)
    return St;
  std::lock_guard<std::mutex> L(G.Lock);
  auto It = G.ByDescriptor.find(Id);
  if (It == G.ByDescriptor.end())
    return St;
  Handler *H = It->second;
  G.ByDescriptor.erase(It);
  unlistParked(G, H);
  H->Removed = true;
  if (Sync && H != Calling) {
    delete H; // UCX waited for any call of it in flight
  } else {
    Handler *&Slot = G.Retired[G.NextRetired++ % G.Retired.size()];
    delete Slot;
    Slot = H;
  }
  return St;
}

extern "C" __attribute__((visibility("default"))) void twochains_ucx_claim(void *Owner) {
  Claiming = Owner;
}

extern "C" __attribute__((visibility("default"))) void twochains_ucx_disown(void *Owner) {
  Guard &G = guard();
  std::lock_guard<std::mutex> L(G.Lock);
  for (auto It = G.Owners.begin(); It != G.Owners.end();)
    It = It->second == Owner ? G.Owners.erase(It) : std::next(It);
  for (auto &[Fd, H] : G.ByDescriptor)
    if (H->Owner == Owner) {
      unlistParked(G, H);
      H->Owner = nullptr;
    }
}

extern "C" __attribute__((visibility("default"))) void twochains_ucx_rearm_parked(void *Owner) {
  Guard &G = guard();
  if (G.ParkedCount.load(std::memory_order_acquire) == 0)
    return;
  std::lock_guard<std::mutex> L(G.Lock);
  for (size_t I = 0; I < G.Parked.size();) {
    Handler *H = G.Parked[I];
    if (H->Owner != Owner) {
      ++I;
      continue;
    }
    H->Parked = false;
    H->IdleWrites.store(0, std::memory_order_relaxed);
    G.Modify(H->Fd, ucs_event_set_types_t(H->Events.load(std::memory_order_acquire)));
    G.Parked[I] = G.Parked.back();
    G.Parked.pop_back();
  }
  G.ParkedCount.store(G.Parked.size(), std::memory_order_release);
}

extern "C" __attribute__((visibility("default"))) void twochains_ucx_idle_writes(
    uint64_t *Taken, uint64_t *Parkings, uint64_t *ParkedEvents) {
  Guard &G = guard();
  *Taken = G.IdleWritesTaken.load(std::memory_order_relaxed);
  *Parkings = G.Parkings.load(std::memory_order_relaxed);
  *ParkedEvents = G.ParkedEvents.load(std::memory_order_relaxed);
}
