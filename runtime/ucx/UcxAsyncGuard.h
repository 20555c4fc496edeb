//===- UcxAsyncGuard.h - Descriptors parked while they wait for progress --===//
//
// UCX 1.13's TCP connection manager asks its async thread for write events
// while an endpoint waits for the worker's owner to act (take a connect's
// reply, accept a request), and a connected socket is always writable: the
// async thread took them and did nothing, as fast as it could, until the
// owner's next progress (a core's worth, each time). libtwochains-ucx
// (UcxAsyncGuard.cpp) parks such a descriptor of a worker Two-Chains
// claimed: after 16 write events in a row that changed nothing, it asks the
// kernel for none (edge-triggered, so that an error or hang-up, reported
// whatever is asked, comes once) until that worker's next turn
// (twochains_ucx_rearm_parked);
// any change of its events by UCX rearms it at once. Other workers of the
// process (the application's own) are left as UCX made them.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_UCX_UCXASYNCGUARD_H
#define TWOCHAINS_RUNTIME_UCX_UCXASYNCGUARD_H

#include <stdint.h>

extern "C" {

/// The handlers that the UCX calls of this thread set from now on (and
/// those UCX's async thread sets later on the same async context: the
/// connections a listener accepts) serve Owner's worker. Null ends it.
void twochains_ucx_claim(void *Owner);
/// Owner's worker is about to be destroyed: its handlers are no longer
/// claimed (its memory may be another's next).
void twochains_ucx_disown(void *Owner);
/// Asks again for the write events of Owner's parked descriptors: after a
/// turn of its worker, whose owner may have given them something to do.
/// Cheap when none is parked.
void twochains_ucx_rearm_parked(void *Owner);
/// Since the process began (for tests and diagnostics): write events taken
/// that changed nothing, parkings, and events that came for a parked
/// descriptor (an error, a hang-up: the kernel reports those whatever is
/// asked, once while it is parked).
void twochains_ucx_idle_writes(uint64_t *Taken, uint64_t *Parkings, uint64_t *ParkedEvents);

} // extern "C"

namespace twochains::rt {

/// Claims the handlers the UCX calls of its scope set for Worker.
class ClaimedHandlers {
public:
  explicit ClaimedHandlers(void *Worker) { twochains_ucx_claim(Worker); }
  ~ClaimedHandlers() { twochains_ucx_claim(nullptr); }
  ClaimedHandlers(const ClaimedHandlers &) = delete;
  ClaimedHandlers &operator=(const ClaimedHandlers &) = delete;
};

} // namespace twochains::rt

#endif
