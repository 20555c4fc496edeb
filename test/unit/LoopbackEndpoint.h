//===- LoopbackEndpoint.h - A raw UCX connection to a test listener -------===//
//
// The endpoint tc_connect makes to a listener on 127.0.0.1: UCX's sockaddr
// connection establishment, peer-failure handling, an error callback. The
// raw clients of the unit tests (BareClient.h, RawPeer.h, GoneKeyTest.cpp)
// connect with it and then speak the protocol, or break it, themselves.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_TEST_UNIT_LOOPBACKENDPOINT_H
#define TWOCHAINS_TEST_UNIT_LOOPBACKENDPOINT_H

#include <arpa/inet.h>
#include <cstdint>
#include <netinet/in.h>
#include <ucp/api/ucp.h>

/// An endpoint on Worker to 127.0.0.1:Port; OnError(Arg, ...) is told if
/// it fails.
inline ucs_status_t connectLoopback(ucp_worker_h Worker, uint16_t Port,
                                    ucp_err_handler_cb_t OnError, void *Arg, ucp_ep_h *Out) {
  sockaddr_in SA = {};
  SA.sin_family = AF_INET;
  SA.sin_port = htons(Port);
  SA.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
  P.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  P.err_handler.cb = OnError;
  P.err_handler.arg = Arg;
  P.sockaddr.addr = reinterpret_cast<sockaddr *>(&SA);
  P.sockaddr.addrlen = sizeof SA;
  P.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  return ucp_ep_create(Worker, &P, Out);
}

#endif
