//===- ControlMessage.cpp - Messages on the control worker ----------------===//
#include "control/ControlMessage.h"

#include "base/Log.h"
#include "control/ControlWorker.h"
#include "control/PeerControl.h"
#include "core/Peers.h"
#include "core/Stats.h"
#include "ucx/Request.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

namespace twochains::rt {

ReceiveDataFn ReceiveData = ucp_am_recv_data_nbx;

ucs_status_t setControlHandlers(CoreContext *Ctx, std::initializer_list<ControlHandler> Handlers) {
  for (const ControlHandler &C : Handlers) {
    if (ucs_status_t St = setHandler(Ctx->Worker, C.Id, C.Callback, Ctx); St != UCS_OK)
      return St;
    Ctx->Control->Handlers.emplace_back(C.Id, C.Callback);
  }
  return UCS_OK;
}

tc_peer *senderOf(CoreContext *Ctx, const ucp_am_recv_param_t *Param) {
  return (Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
             ? peerOfEndpoint(Ctx, Param->reply_ep)
             : nullptr;
}

/// Frees what UCX has finished sending; the oldest first, as they complete.
static void sweepKeptSends(tc_peer *Peer) {
  auto &Sent = Peer->Control->Sent;
  for (auto It = Sent.begin(); It != Sent.end();) {
    if (It->Request && ucp_request_check_status(It->Request) == UCS_INPROGRESS) {
      ++It;
      continue;
    }
    if (It->Request)
      ucp_request_free(It->Request);
    It = Sent.erase(It);
  }
}

void releaseKeptSends(tc_peer *Peer) {
  for (KeptSend &K : Peer->Control->Sent)
    if (K.Request)
      ucp_request_free(K.Request);
  Peer->Control->Sent.clear();
}

ucs_status_t sendKeptMessage(tc_peer *Peer, unsigned Id, std::vector<uint8_t> Header,
                             std::vector<uint8_t> Body, uint32_t Flags) {
  if (!Peer->Ep) // cut off: failed already
    return UCS_ERR_NOT_CONNECTED;
  sweepKeptSends(Peer);
  // UCX reads the bytes until the request completes: they move into the
  // peer's list, freed by a later sweep once it has, never kept longer.
  Peer->Control->Sent.push_back({nullptr, std::move(Header), std::move(Body)});
  KeptSend &K = Peer->Control->Sent.back();
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = Flags;
  ucs_status_ptr_t R = ucp_am_send_nbx(Peer->Ep, Id, K.Header.data(), K.Header.size(),
                                       K.Body.data(), K.Body.size(), &P);
  if (UCS_PTR_IS_PTR(R)) {
    K.Request = R;
    return UCS_OK;
  }
  Peer->Control->Sent.pop_back();
  return UCS_PTR_IS_ERR(R) ? UCS_PTR_STATUS(R) : UCS_OK;
}

ucs_status_t sendMessage(CoreContext *, tc_peer *Peer, unsigned Id, const void *Header,
                         size_t HeaderSize, const void *Body, size_t BodySize) {
  auto *H = static_cast<const uint8_t *>(Header), *B = static_cast<const uint8_t *>(Body);
  return sendKeptMessage(Peer, Id, std::vector<uint8_t>(H, H + HeaderSize),
                         std::vector<uint8_t>(B, B + BodySize),
                         UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER);
}

void refuseMessage(CoreContext *Ctx, tc_peer *Peer, const std::string &Why,
                   const ucp_am_recv_param_t *From) {
  if (!Peer) {
    if (Ctx->Closing)
      return;
    if (From && (From->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
      for (ucp_ep_h Ep : Ctx->Control->ReleasedEndpoints)
        if (Ep && Ep == From->reply_ep)
          return;
  }
  countHeld(Ctx, &tc_stats_t::messages_refused);
  logOnce(Peer ? Peer->RefusalLogged : Ctx->Control->UnknownRefusalLogged, TC_LOG_ERROR,
          "refused a message from " + (Peer ? Peer->Name : std::string("an unknown endpoint")) +
              ": " + Why + " (further refusals of it are counted, not logged)");
}

void forgetEndpoint(CoreContext *Ctx, ucp_ep_h Ep) {
  if (!Ep)
    return;
  Ctx->Control->ReleasedEndpoints[Ctx->Control->ReleasedNext] = Ep;
  Ctx->Control->ReleasedNext = (Ctx->Control->ReleasedNext + 1) %
                               std::size(Ctx->Control->ReleasedEndpoints);
}

namespace {
/// A body UCX fetches: whom to tell when it has, and its entry among the
/// bodies in flight.
struct BodyReceipt {
  BodyDone Done;
  void *Arg;
  CoreContext *Ctx;
  std::list<ControlContext::BodyInFlight>::iterator InFlight;
};

void onBodyReceived(void *Request, ucs_status_t St, size_t, void *Arg) {
  auto *R = static_cast<BodyReceipt *>(Arg);
  R->Ctx->Control->BodiesInFlight.erase(R->InFlight);
  R->Done(R->Arg, St == UCS_OK ? TC_OK : TC_ERR_IO);
  delete R;
  ucp_request_free(Request);
}

/// Housekeeping: bodies that did not arrive in time. UCX's way to stop a
/// receive is ucp_request_cancel, but UCX (1.13.1, and upstream to date)
/// cancels only tag receives: an active message's rendezvous receive is
/// ended only by its endpoint's end, which completes it as cancelled. So
/// the peer that held it up is cut off, and its places are freed as the
/// receives complete.
void cancelOverdueBodies(CoreContext *Ctx) {
  if (Ctx->Control->BodiesInFlight.empty())
    return;
  uint64_t Now = nowNs();
  std::vector<ucp_ep_h> Overdue;
  for (const ControlContext::BodyInFlight &B : Ctx->Control->BodiesInFlight)
    if (Now - B.StartedNs > Ctx->Control->BodyTimeoutNs) {
      ucp_request_cancel(B.Worker, B.Request);
      if (std::find(Overdue.begin(), Overdue.end(), B.From) == Overdue.end())
        Overdue.push_back(B.From);
    }
  // Not while iterating: a cut-off completes receives, which leave the list.
  for (ucp_ep_h Ep : Overdue)
    if (tc_peer *Peer = Ep ? peerOfEndpoint(Ctx, Ep) : nullptr)
      cutOffPeer(Ctx, Peer,
                 "the bytes of a message it sent by rendezvous did not come in " +
                     std::to_string(Ctx->Control->BodyTimeoutNs / NsPerMs) + " ms");
}

uint64_t bodiesDue(CoreContext *Ctx) {
  uint64_t Due = NoDueTime;
  for (const ControlContext::BodyInFlight &B : Ctx->Control->BodiesInFlight)
    Due = std::min(Due, B.StartedNs + Ctx->Control->BodyTimeoutNs + 1);
  return Due;
}
} // namespace

void setupControl(CoreContext *Ctx) {
  addHousekeeping(Ctx, cancelOverdueBodies);
  addDueTime(Ctx, bodiesDue);
}

void cutOffPeer(CoreContext *Ctx, tc_peer *Peer, const std::string &Why) {
  countHeld(Ctx, &tc_stats_t::rendezvous_cancelled);
  logLimited(Ctx->Control->CutOffLog, TC_LOG_ERROR, "cut off " + Peer->Name + ": " + Why);
  if (Ctx->Control->CutOff.empty())
    failPeer(Peer);
  else
    Ctx->Control->CutOff.notify(Ctx, Peer);
}

void receiveBody(CoreContext *Ctx, void *Data, size_t Length, const ucp_am_recv_param_t *Param,
                 void *Dest, BodyDone Done, void *Arg, ucp_worker_h Worker) {
  if (!(Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    if (Length)
      std::memcpy(Dest, Data, Length);
    Done(Arg, TC_OK);
    return;
  }
  // Listed before UCX may complete it: the callback takes it off.
  ucp_ep_h From = (Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? Param->reply_ep : nullptr;
  if (!Worker)
    Worker = Ctx->Worker;
  auto InFlight = Ctx->Control->BodiesInFlight.insert(Ctx->Control->BodiesInFlight.end(),
                                                      {nullptr, From, nowNs(), Worker});
  auto *Receipt = new BodyReceipt{Done, Arg, Ctx, InFlight};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  P.cb.recv_am = onBodyReceived;
  P.user_data = Receipt;
  ucs_status_ptr_t R = ReceiveData(Worker, Data, Dest, Length, &P);
  if (UCS_PTR_IS_PTR(R)) {
    InFlight->Request = R;
    return; // onBodyReceived tells
  }
  Ctx->Control->BodiesInFlight.erase(InFlight);
  delete Receipt;
  Done(Arg, UCS_PTR_IS_ERR(R) ? TC_ERR_IO : TC_OK);
}

} // namespace twochains::rt
