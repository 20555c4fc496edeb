//===- RawMessage.h - A control message sent as a crafting peer would -----===//
#ifndef TWOCHAINS_TEST_UNIT_RAWMESSAGE_H
#define TWOCHAINS_TEST_UNIT_RAWMESSAGE_H

#include "core/CoreContext.h"
#include "core/Peer.h"

#include <gtest/gtest.h>
#include <ucp/api/ucp.h>

/// Sends, eager, a control message of kind Id over From's endpoint as a
/// peer that crafts its own would, and waits until UCX has sent it. Call
/// under ASSERT_NO_FATAL_FAILURE.
inline void sendRawMessage(tc_peer *From, unsigned Id, const void *Header, size_t Size) {
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t R = ucp_am_send_nbx(From->Ep, Id, Header, Size, nullptr, 0, &P);
  ASSERT_FALSE(UCS_PTR_IS_ERR(R));
  while (R && ucp_request_check_status(R) == UCS_INPROGRESS)
    ucp_worker_progress(From->Ctx->Worker);
  if (R)
    ucp_request_free(R);
}

#endif
