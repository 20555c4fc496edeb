//===- Request.h - Waiting for a UCX request ------------------------------===//
#ifndef TWOCHAINS_RUNTIME_UCX_REQUEST_H
#define TWOCHAINS_RUNTIME_UCX_REQUEST_H

#include "base/Clock.h"
#include "ucx/UcxAsyncGuard.h"

#include <ucp/api/ucp.h>

namespace twochains::rt {

/// One turn of a worker, outside the frame path's polls: what it did (a
/// connection request accepted, a connect's reply taken) may give a
/// parked descriptor of the connection manager something to do
/// (UcxAsyncGuard.h).
inline unsigned turnWorker(ucp_worker_h Worker) {
  unsigned N = ucp_worker_progress(Worker);
  twochains_ucx_rearm_parked(Worker);
  return N;
}

/// Waits for a UCX request (or an immediate completion) by progressing the
/// worker; returns its status.
ucs_status_t waitRequest(ucp_worker_h Worker, ucs_status_ptr_t Request);
/// The same, giving up at Deadline (steady-clock nanoseconds): the request
/// is cancelled, left to UCX to release, and UCS_ERR_TIMED_OUT returned; so
/// what it reads must live as long as the endpoint, not the call.
ucs_status_t waitRequestUntil(ucp_worker_h Worker, ucs_status_ptr_t Request,
                              uint64_t DeadlineNs);
/// waitRequestUntil TimeoutNs from now, the clock read only if the request
/// did not complete at once (a frame's send: most do).
inline ucs_status_t waitRequestFor(ucp_worker_h Worker, ucs_status_ptr_t Request,
                                   uint64_t TimeoutNs) {
  if (Request == nullptr)
    return UCS_OK;
  return waitRequestUntil(Worker, Request, nowNs() + TimeoutNs);
}

/// Closes Ep by force (UCP_EP_CLOSE_FLAG_FORCE), which ends what UCX still
/// does on it; null is nothing to close.
void closeEndpointByForce(ucp_worker_h Worker, ucp_ep_h Ep);

} // namespace twochains::rt

#endif
