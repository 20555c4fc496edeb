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
//===----------------------------------------------------------------------===//
#include <array>
#include <atomic>
#include <dlfcn.h>
#include <mutex>
#include <ucs/async/async_fwd.h>
#include <unordered_map>

namespace {

using SetFn = ucs_status_t (*)(ucs_async_mode_t, int, ucs_event_set_types_t, ucs_async_event_cb_t,
                               void *, ucs_async_context_t *);
using ModifyFn = ucs_status_t (*)(int, ucs_event_set_types_t);
using RemoveFn = ucs_status_t (*)(int, int);

/// A handler as libuct set it, and the events it asks for now.
struct Handler {
  ucs_async_event_cb_t Callback;
  void *Arg;
  std::atomic<int> Events;
};

struct Guard {
  std::mutex Lock;
  std::unordered_map<int, Handler *> ByDescriptor;
  /// Handlers removed without waiting for a call in flight (is_sync 0),
  /// kept a while before they are freed; libuct's TCP parts always wait.
  std::array<Handler *, 1024> Retired = {};
  size_t NextRetired = 0;
  SetFn Set = reinterpret_cast<SetFn>(dlsym(RTLD_NEXT, "ucs_async_set_event_handler"));
  ModifyFn Modify = reinterpret_cast<ModifyFn>(dlsym(RTLD_NEXT, "ucs_async_modify_handler"));
  RemoveFn Remove = reinterpret_cast<RemoveFn>(dlsym(RTLD_NEXT, "ucs_async_remove_handler"));
};

Guard &guard() {
  static Guard *G = new Guard; // never destroyed: UCX removes handlers at exit
  return *G;
}

/// What UCX calls: a missed event the handler no longer asks for (its
/// descriptor's earlier owner's, or from before it changed its events)
/// ends here.
void trampoline(int Id, ucs_event_set_types_t Events, void *Arg) {
  auto *H = static_cast<Handler *>(Arg);
  int Wanted = Events & H->Events.load(std::memory_order_acquire);
  if (Wanted)
    H->Callback(Id, ucs_event_set_types_t(Wanted), H->Arg);
}

} // namespace

extern "C" __attribute__((visibility("default"))) ucs_status_t
ucs_async_set_event_handler(ucs_async_mode_t Mode, int Fd, ucs_event_set_types_t Events,
                            ucs_async_event_cb_t Callback, void *Arg, ucs_async_context_t *Async) {
  Guard &G = guard();
  if (!G.Set)
    return UCS_ERR_UNSUPPORTED;
  auto *H = new Handler{Callback, Arg, {int(Events)}};
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
    if (auto It = G.ByDescriptor.find(Fd); It != G.ByDescriptor.end())
      It->second->Events.store(int(Events), std::memory_order_release);
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
  if (Sync) {
    delete H; // UCX waited for any call of it in flight
  } else {
    Handler *&Slot = G.Retired[G.NextRetired++ % G.Retired.size()];
    delete Slot;
    Slot = H;
  }
  return St;
}
