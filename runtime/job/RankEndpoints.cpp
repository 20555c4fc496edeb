//===- RankEndpoints.cpp - A job's connections from worker addresses ------===//
//
// Every rank's address blob carries its control worker's UCX address. Two
// ranks connect from those, not through UCX's connection manager: each
// side makes at most one endpoint to the other (RankEndpoint), and UCX
// pairs the two into one connection (its endpoints to the same worker are
// matched in the order they are made, so one made once a side always
// matches the other side's one). A connection by sockaddr costs two TCP
// connections and the connection manager's sockets; this one costs one
// (and is made on shared memory where UCX can). At 64 ranks on two cores
// that made the difference between an all-to-all's first round within
// two seconds and not.
//
// The lower rank of the pair always connects (the handshake's sender,
// Handshake.cpp); the higher one asks it to by a KNOCK. The connecting
// side sends a KNOCK too, ahead of its AUTH, so that the other side makes
// its endpoint (taking UCX's, which would otherwise be UCX's alone and
// gone when the rank fails) before the AUTH arrives on it. A KNOCK proves
// nothing and asks for nothing but what the job's blobs already allow:
// the endpoint a side makes goes to the address the rank published, and
// the rank is proved in the handshake as on any connection. A KNOCK that
// did not come on the endpoint this side made to that rank is refused.
//
// Each side makes its endpoint once: a connection that fails or is
// refused is made again by sockaddr (job/Route.cpp), as before.
//
//===----------------------------------------------------------------------===//
#include "job/Job.h"
#include "job/PeerJob.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "control/ControlMessage.h"
#include "core/Events.h"
#include "core/Stats.h"
#include "ucx/Request.h"
#include "wireup/Wireup.h"

#include <arpa/inet.h>
#include <cstring>

using namespace twochains::rt;

using State = RankEndpoint::State;

/// UCX's error callback of every endpoint made here: the peer that owns
/// it fails; one that no peer owns yet is closed at the next control turn.
static void onRankEndpointError(void *Arg, ucp_ep_h Ep, ucs_status_t Status) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  if (tc_peer *Peer = peerOfEndpoint(Ctx, Ep))
    return onEndpointError(Peer, Ep, Status);
  for (RouteTarget &T : Ctx->Job->Ranks)
    if (T.Pair.Ep == Ep && T.Pair.At == State::Made)
      T.Pair.At = State::Broken;
}

/// This side's endpoint to T's rank, made now if it was not: null if it
/// cannot be (none was published, or UCX made none: the rank is then
/// reached by sockaddr).
static ucp_ep_h rankEndpoint(CoreContext *Ctx, RouteTarget &T) {
  if (T.Pair.At == State::None) {
    ucp_ep_h Ep = connectToControlWorker(Ctx, T.WorkerAddress, onRankEndpointError, Ctx);
    T.Pair.At = Ep ? State::Made : State::Spent;
    T.Pair.Ep = Ep;
  }
  return T.Pair.At == State::Made ? T.Pair.Ep : nullptr;
}

/// Sends this rank's KNOCK on T's endpoint (one at a time).
static void knock(CoreContext *Ctx, RouteTarget &T) {
  RankEndpoint &E = T.Pair;
  if (E.Knock) {
    if (ucp_request_check_status(E.Knock) == UCS_INPROGRESS)
      return;
    ucp_request_free(E.Knock);
    E.Knock = nullptr;
  }
  E.Said = {KnockMagic, Ctx->Wireup->Job.Rank, Ctx->Wireup->Job.Id};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t R = ucp_am_send_nbx(E.Ep, AmKnock, &E.Said, sizeof E.Said, nullptr, 0, &P);
  if (UCS_PTR_IS_PTR(R))
    E.Knock = R;
}

namespace twochains::rt {

bool connectsFromWorkerAddress(const CoreContext *Ctx, const RouteTarget &T) {
  uint32_t Me = Ctx->Wireup->Job.Rank;
  // Ranks of this host only (their blobs name the same addresses): UCX
  // 1.13 finds no transport between the worker addresses of two network
  // namespaces, and says so as an error; between hosts the connection
  // manager's extra connection costs little beside the network.
  return T.Rank != NoJobRank && T.Rank != Me && Me < Ctx->Job->Ranks.size() &&
         T.Addresses == Ctx->Job->Ranks[Me].Addresses && !T.WorkerAddress.empty() &&
         (T.Pair.At == State::None || T.Pair.At == State::Made);
}

bool askRankToConnect(CoreContext *Ctx, RouteTarget &T) {
  if (!rankEndpoint(Ctx, T))
    return false;
  knock(Ctx, T);
  return true;
}

tc_peer *startRankConnect(CoreContext *Ctx, RouteTarget &T, const sockaddr_in &SA,
                          const std::string &Where, uint64_t DeadlineNs) {
  ucp_ep_h Ep = rankEndpoint(Ctx, T);
  if (!Ep)
    return nullptr;
  knock(Ctx, T);
  tc_peer *P = startConnectOn(Ctx, Ep, SA, Where, T.Rank, DeadlineNs);
  T.Pair.At = State::Owned;
  T.Pair.Owner = P;
  return P;
}

void closeRankEndpoints(CoreContext *Ctx) {
  for (RouteTarget &T : Ctx->Job->Ranks) {
    RankEndpoint &E = T.Pair;
    if (E.Knock) {
      ucp_request_free(E.Knock);
      E.Knock = nullptr;
    }
    if (E.At == State::Made || E.At == State::Broken)
      closeEndpointByForce(Ctx->Worker, E.Ep);
    if (E.At != State::None)
      E.At = State::Spent;
    E.Ep = nullptr;
    E.Owner = nullptr;
  }
}

} // namespace twochains::rt

/// KNOCK: rank K.Rank made its endpoint to this side. This side makes its
/// own (UCX pairs them); the lower of the two then connects.
static ucs_status_t onKnock(void *Arg, const void *Header, size_t HeaderLength, void *,
                            size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  RankKnock K = {};
  if (HeaderLength == sizeof K)
    std::memcpy(&K, Header, sizeof K);
  if (!Ctx->Job->Joined || HeaderLength != sizeof K || Length || K.Magic != KnockMagic ||
      K.Job != Ctx->Wireup->Job.Id || K.Rank >= Ctx->Job->Ranks.size() ||
      K.Rank == Ctx->Wireup->Job.Rank || !(Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) {
    refuseMessage(Ctx, senderOf(Ctx, Param), "a KNOCK out of place", Param);
    return UCS_OK;
  }
  RouteTarget &T = Ctx->Job->Ranks[K.Rank];
  if (T.Pair.At == State::Spent || T.Pair.At == State::Broken) {
    // A KNOCK sent before this side's endpoint went: the rank is reached
    // by sockaddr now.
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return UCS_OK;
  }
  if (!connectsFromWorkerAddress(Ctx, T) && T.Pair.At != State::Owned) {
    refuseMessage(Ctx, senderOf(Ctx, Param), "a KNOCK from a rank reached by sockaddr", Param);
    return UCS_OK;
  }
  // Made once a side, in the order they come: the first KNOCK from a rank
  // comes on the endpoint UCX paired with this side's first endpoint to
  // it. Anything else did not come from that rank.
  ucp_ep_h Mine = rankEndpoint(Ctx, T);
  if (T.Pair.Ep != Param->reply_ep) {
    countHeld(Ctx, &tc_stats_t::messages_refused);
    logLimited(Ctx->Job->KnockLog, TC_LOG_ERROR,
               "refused a KNOCK claiming rank " + std::to_string(K.Rank) +
                   ": it did not come from that rank's worker");
    return UCS_OK;
  }
  if (Mine && Ctx->Wireup->Job.Rank < K.Rank)
    T.Knocked = true;
  return UCS_OK;
}

/// Wireup's hook: an AUTH on an endpoint no peer owns. On this side's
/// endpoint to a lower rank, it starts that rank's connection.
static tc_peer *acceptOnRankEndpoint(CoreContext *Ctx, ucp_ep_h Ep) {
  if (!Ctx->Job->Joined)
    return nullptr;
  for (RouteTarget &T : Ctx->Job->Ranks) {
    if (T.Pair.Ep != Ep || T.Pair.At != State::Made || T.Rank > Ctx->Wireup->Job.Rank)
      continue;
    sockaddr_in SA = {};
    SA.sin_family = AF_INET;
    SA.sin_port = htons(T.Port);
    SA.sin_addr.s_addr = T.Addresses.empty() ? htonl(INADDR_LOOPBACK) : T.Addresses[0];
    char Text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &SA.sin_addr, Text, sizeof Text);
    tc_peer *P = acceptOnEndpoint(Ctx, Ep, SA,
                                  "rank " + std::to_string(T.Rank) + " at " + Text + ":" +
                                      std::to_string(T.Port));
    T.Pair.At = State::Owned;
    T.Pair.Owner = P;
    return P;
  }
  return nullptr;
}

/// Wireup's hook: the peer that owns an endpoint made here is released
/// (and closes it): the rank is reached by sockaddr from now on.
static void onRankPeerReleased(CoreContext *Ctx, tc_peer *Peer) {
  for (RouteTarget &T : Ctx->Job->Ranks)
    if (T.Pair.At == State::Owned && T.Pair.Owner == Peer) {
      T.Pair.At = State::Spent;
      T.Pair.Owner = nullptr;
      T.Pair.Ep = nullptr;
    }
}

/// Housekeeping: endpoints that failed before any peer owned them close
/// (ranks that knocked are connected to by job/Route.cpp's).
static void closeBrokenRankEndpoints(CoreContext *Ctx) {
  for (RouteTarget &T : Ctx->Job->Ranks) {
    if (T.Pair.At != State::Broken)
      continue;
    if (T.Pair.Knock) {
      ucp_request_free(T.Pair.Knock);
      T.Pair.Knock = nullptr;
    }
    closeEndpointByForce(Ctx->Worker, T.Pair.Ep);
    T.Pair.At = State::Spent;
    T.Pair.Ep = nullptr;
  }
}

static uint64_t rankEndpointsDue(CoreContext *Ctx) {
  for (const RouteTarget &T : Ctx->Job->Ranks)
    if (T.Pair.At == State::Broken)
      return 0;
  return NoDueTime;
}

ucs_status_t twochains::rt::setupRankEndpoints(CoreContext *Ctx) {
  Ctx->Wireup->AcceptOnEndpoint = acceptOnRankEndpoint;
  Ctx->Wireup->PeerReleased.subscribe(onRankPeerReleased);
  addHousekeeping(Ctx, closeBrokenRankEndpoints);
  addDueTime(Ctx, rankEndpointsDue);
  return setControlHandlers(Ctx, {{AmKnock, &onKnock}});
}
