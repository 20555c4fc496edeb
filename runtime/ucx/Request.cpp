//===- Request.cpp - Waiting for a UCX request ----------------------------===//
#include "ucx/Request.h"

namespace twochains::rt {

ucs_status_t waitRequest(ucp_worker_h Worker, ucs_status_ptr_t Request) {
  if (Request == nullptr)
    return UCS_OK;
  if (UCS_PTR_IS_ERR(Request))
    return UCS_PTR_STATUS(Request);
  ucs_status_t St;
  while ((St = ucp_request_check_status(Request)) == UCS_INPROGRESS)
    turnWorker(Worker);
  ucp_request_free(Request);
  return St;
}

ucs_status_t waitRequestUntil(ucp_worker_h Worker, ucs_status_ptr_t Request,
                              uint64_t DeadlineNs) {
  if (Request == nullptr)
    return UCS_OK;
  if (UCS_PTR_IS_ERR(Request))
    return UCS_PTR_STATUS(Request);
  ucs_status_t St;
  unsigned Polls = 0;
  while ((St = ucp_request_check_status(Request)) == UCS_INPROGRESS) {
    turnWorker(Worker);
    if ((++Polls & 63) == 0 && nowNs() > DeadlineNs) {
      // Not waited for any longer: UCX releases the request when it ends
      // (the endpoint's close ends it at the latest). The buffers it reads
      // must outlive it: callers pass memory the peer or context owns.
      ucp_request_cancel(Worker, Request);
      ucp_request_free(Request);
      return UCS_ERR_TIMED_OUT;
    }
  }
  ucp_request_free(Request);
  return St;
}

void closeEndpointByForce(ucp_worker_h Worker, ucp_ep_h Ep) {
  if (!Ep)
    return;
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_EP_CLOSE_FLAG_FORCE;
  waitRequest(Worker, ucp_ep_close_nbx(Ep, &P));
}

} // namespace twochains::rt
