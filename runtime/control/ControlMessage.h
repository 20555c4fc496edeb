//===- ControlMessage.h - Messages on the control worker ------------------===//
//
// The handshake, calls' answers, code shipped ahead and ried pushes are
// active messages on the control worker (wire/Wire.h has their formats).
// One set of helpers serves all of them: register a handler, send from
// copies the peer keeps, refuse (counted, logged once), receive a body
// with one error path, and wait (bounded) for an answer.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTROL_CONTROLMESSAGE_H
#define TWOCHAINS_RUNTIME_CONTROL_CONTROLMESSAGE_H

#include "base/Clock.h"
#include "control/ControlContext.h"
#include "core/Peers.h"
#include "core/Stats.h"

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace twochains::rt {

/// Registers active-message handlers on the control worker, argument Ctx.
struct ControlHandler {
  unsigned Id;
  ucp_am_recv_callback_t Callback;
};
ucs_status_t setControlHandlers(CoreContext *Ctx, std::initializer_list<ControlHandler> Handlers);

/// The peer a control message came from (its reply endpoint), or null.
tc_peer *senderOf(CoreContext *Ctx, const ucp_am_recv_param_t *Param);

/// The opening of a message only a welcomed peer may send, with a header
/// of fixed size: its sender, the header copied into Out. Null if it is
/// not from a welcomed peer or its header is not Out's size: counted as
/// refused, and not answered (nobody authenticated to answer).
template <class Header>
tc_peer *acceptMessage(CoreContext *Ctx, const void *Bytes, size_t Size,
                       const ucp_am_recv_param_t *Param, Header &Out) {
  tc_peer *Peer = senderOf(Ctx, Param);
  if (!Peer || !Peer->Welcomed || Size != sizeof Out) {
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return nullptr;
  }
  std::memcpy(&Out, Bytes, sizeof Out);
  return Peer;
}

/// The opening of an answer to something this side asked a peer for (a
/// shipment, a deployment, a ried push): its sender, the header copied
/// into Out. Only the answer the peer is awaited for (Awaited(Peer, Out)),
/// and one at a time per peer (none of Queued, the answers taken and not
/// yet handled, is From its endpoint): anything else would sit in the
/// queue and crowd out real ones. Null otherwise, counted as refused; a
/// header not Out's size, or no endpoint to tell the sender by, is
/// dropped at once.
template <class Ack, class Answers, class AwaitedFn>
tc_peer *acceptAnswer(CoreContext *Ctx, const void *Header, size_t HeaderLength,
                      const ucp_am_recv_param_t *Param, const Answers &Queued, Ack &Out,
                      AwaitedFn Awaited) {
  if (HeaderLength != sizeof Out || !(Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
    return nullptr;
  std::memcpy(&Out, Header, sizeof Out);
  tc_peer *Peer = peerOfEndpoint(Ctx, Param->reply_ep);
  bool Answered = false;
  for (const auto &A : Queued)
    Answered = Answered || A.From == Param->reply_ep;
  if (!Peer || Answered || !Awaited(Peer, Out)) {
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return nullptr;
  }
  return Peer;
}

/// Sends a control message on Peer->Ep, eagerly, never waited for: the
/// peer keeps copies of its bytes until UCX has sent them (KeptSend).
ucs_status_t sendMessage(CoreContext *Ctx, tc_peer *Peer, unsigned Id, const void *Header,
                         size_t HeaderSize, const void *Body, size_t BodySize);
/// The same from bytes given up to it, with UCX's send Flags.
ucs_status_t sendKeptMessage(tc_peer *Peer, unsigned Id, std::vector<uint8_t> Header,
                             std::vector<uint8_t> Body, uint32_t Flags);
/// The endpoint has closed: no send reads the kept copies any more.
void releaseKeptSends(tc_peer *Peer);

/// Counts a message refused outright, and logs it once per peer (once per
/// context for endpoints no peer has). From, if given, is the message's
/// receive parameters: a message on the endpoint of a peer this side
/// released, or while the context closes, is the peer's last word, dropped
/// without a refusal.
void refuseMessage(CoreContext *Ctx, tc_peer *Peer, const std::string &Why,
                   const ucp_am_recv_param_t *From = nullptr);

/// Remembers a released peer's endpoint (refuseMessage).
void forgetEndpoint(CoreContext *Ctx, ucp_ep_h Ep);

/// Registers the control layer's housekeeping: bodies overdue.
void setupControl(CoreContext *Ctx);

/// Receives a message's Length-byte body into Dest, which must stay put
/// until Done: copied at once, or fetched by UCX (rendezvous). Done(Arg,
/// status) runs exactly once, here or from a later progress of the control
/// worker: TC_ERR_IO if the body could not be received, or did not arrive
/// within the context's BodyTimeoutNs (its sender is then cut off).
using BodyDone = void (*)(void *Arg, tc_status_t Status);
/// Worker: the one the message came on (null: the control worker).
void receiveBody(CoreContext *Ctx, void *Data, size_t Length, const ucp_am_recv_param_t *Param,
                 void *Dest, BodyDone Done, void *Arg, ucp_worker_h Worker = nullptr);
/// The UCX call receiveBody fetches bodies with (ucp_am_recv_data_nbx; unit
/// tests put another in its place).
using ReceiveDataFn = ucs_status_ptr_t (*)(ucp_worker_h, void *, void *, size_t,
                                            const ucp_request_param_t *);
extern ReceiveDataFn ReceiveData;

/// Ends a peer that held up a transfer past its time, or otherwise broke
/// the protocol: counted (rendezvous_cancelled), logged within a budget,
/// then failed and its control endpoint closed at once (Ctx->Control->CutOff), which
/// completes what UCX still does for it (a receive waiting for its bytes
/// ends as cancelled, an answer sent to it as failed), so that what those
/// hold is freed now rather than when the peer is released.
void cutOffPeer(CoreContext *Ctx, tc_peer *Peer, const std::string &Why);

/// Progresses the control worker until Answered() says the awaited answer
/// has come (true), Peer fails or DeadlineNs passes (false).
template <class Predicate>
bool awaitAnswer(CoreContext *Ctx, tc_peer *Peer, uint64_t DeadlineNs, Predicate Answered) {
  unsigned Polls = 0;
  for (;;) {
    if (Answered())
      return true;
    if (Peer->Failed || ((++Polls & 63) == 0 && nowNs() > DeadlineNs))
      return false;
    progressControl(Ctx);
  }
}

} // namespace twochains::rt

#endif
