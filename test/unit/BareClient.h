//===- BareClient.h - A UCX client that is no Two-Chains context -----------===//
//
// For tests of what reaches a receiver before (or without) a handshake: a
// UCX client of its own that connects to 127.0.0.1:Port and sends the
// control messages the test makes, as a peer that crafts its own would.
// What the receiver answers is read and dropped.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_TEST_UNIT_BARECLIENT_H
#define TWOCHAINS_TEST_UNIT_BARECLIENT_H

#include "wire/Wire.h"
#include "LoopbackEndpoint.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cstdint>
#include <deque>
#include <netinet/in.h>
#include <ucp/api/ucp.h>
#include <vector>

class BareClient {
public:
  ~BareClient() {
    ucp_request_param_t C = {};
    C.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    C.flags = UCP_EP_CLOSE_FLAG_FORCE;
    for (ucp_ep_h Ep : Eps) {
      ucs_status_ptr_t Closing = ucp_ep_close_nbx(Ep, &C);
      while (UCS_PTR_IS_PTR(Closing) && ucp_request_check_status(Closing) == UCS_INPROGRESS)
        ucp_worker_progress(Worker);
      if (UCS_PTR_IS_PTR(Closing))
        ucp_request_free(Closing);
    }
    if (Worker)
      ucp_worker_destroy(Worker);
    if (Ucp)
      ucp_cleanup(Ucp);
  }

  /// A new connection, the next index. Call under ASSERT_NO_FATAL_FAILURE.
  void connect(uint16_t Port) {
    ASSERT_NO_FATAL_FAILURE(open());
    ucp_ep_h Ep = nullptr;
    ASSERT_EQ(connectLoopback(
                  Worker, Port, [](void *, ucp_ep_h, ucs_status_t) {}, // closed by the receiver
                  nullptr, &Ep),
              UCS_OK);
    Eps.push_back(Ep);
  }
  /// A new endpoint to a worker's address (no handshake, no listener), the
  /// next index. Call under ASSERT_NO_FATAL_FAILURE.
  void connectToWorker(const ucp_address_t *Address) {
    ASSERT_NO_FATAL_FAILURE(open());
    ucp_ep_params_t P = {};
    P.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    P.address = Address;
    ucp_ep_h Ep = nullptr;
    ASSERT_EQ(ucp_ep_create(Worker, &P, &Ep), UCS_OK);
    Eps.push_back(Ep);
  }

  /// Sends a message of kind Id, eager, over connection I without waiting
  /// for it to leave (its header kept until the client goes: UCX reads it
  /// until then).
  void send(size_t I, unsigned Id, const void *Header, size_t Size) {
    sendWithBody(I, Id, Header, Size, {}, UCP_AM_SEND_FLAG_EAGER);
  }
  /// The same with a body, by the protocol UCX chooses (Flags: more than
  /// a reply endpoint).
  void sendWithBody(size_t I, unsigned Id, const void *Header, size_t Size,
                    const std::vector<uint8_t> &Body, uint32_t Flags = 0) {
    ucp_request_param_t Q = {};
    Q.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    Q.flags = UCP_AM_SEND_FLAG_REPLY | Flags;
    auto *Bytes = static_cast<const uint8_t *>(Header);
    const std::vector<uint8_t> &Kept = Headers.emplace_back(Bytes, Bytes + Size);
    const std::vector<uint8_t> &KeptBody = Headers.emplace_back(Body);
    ucs_status_ptr_t R = ucp_am_send_nbx(Eps[I], Id, Size ? Kept.data() : nullptr, Size,
                                         KeptBody.empty() ? nullptr : KeptBody.data(),
                                         KeptBody.size(), &Q);
    ASSERT_FALSE(UCS_PTR_IS_ERR(R));
    if (R)
      Pending.push_back(R);
  }
  void sendAuth(size_t I, const twochains::rt::AuthRequest &A) {
    send(I, twochains::rt::AmAuth, &A, sizeof A);
  }

  void progress() {
    ucp_worker_progress(Worker);
    for (size_t I = 0; I < Pending.size();)
      if (ucp_request_check_status(Pending[I]) != UCS_INPROGRESS) {
        ucp_request_free(Pending[I]);
        Pending.erase(Pending.begin() + I);
      } else
        ++I;
  }
  /// Whether every message sent has left.
  bool idle() const { return Pending.empty(); }
  /// Progresses until every message sent has left.
  void flush() {
    while (!Pending.empty())
      progress();
  }

private:
  /// Its UCX context and worker, made once.
  void open() {
    if (Ucp)
      return;
    ucp_params_t P = {};
    P.field_mask = UCP_PARAM_FIELD_FEATURES;
    P.features = UCP_FEATURE_AM;
    ASSERT_EQ(ucp_init(&P, nullptr, &Ucp), UCS_OK);
    ucp_worker_params_t W = {};
    ASSERT_EQ(ucp_worker_create(Ucp, &W, &Worker), UCS_OK);
    // UCX 1.13 crashes on a message with a reply endpoint and no
    // handler for its id.
    for (unsigned Id : {unsigned(twochains::rt::AmChallenge), unsigned(twochains::rt::AmRefused)}) {
      ucp_am_handler_param_t H = {};
      H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
      H.id = Id;
      H.cb = [](void *, const void *, size_t, void *, size_t, const ucp_am_recv_param_t *) {
        return UCS_OK;
      };
      ASSERT_EQ(ucp_worker_set_am_recv_handler(Worker, &H), UCS_OK);
    }
  }

  ucp_context_h Ucp = nullptr;
  ucp_worker_h Worker = nullptr;
  std::vector<ucp_ep_h> Eps;
  std::vector<ucs_status_ptr_t> Pending;
  std::deque<std::vector<uint8_t>> Headers;
};

#endif
