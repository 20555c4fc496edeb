//===- JamCalls.cpp - What running jams can call --------------------------===//
//
// Jams import these by name; the receiver's import tables resolve them in
// libtwochains like any other symbol of the process.
//
//===----------------------------------------------------------------------===//
#include "calls/Calls.h"

#include "base/Clock.h"
#include "base/Timeouts.h"
#include "base/Log.h"
#include "core/Stats.h"
#include "send/Send.h"
#include "twochains/jam.h"
#include "job/Job.h"
#include "wireup/Wireup.h"

#include <algorithm>
#include <string>

using namespace twochains::rt;

/// Sends element Element of the running jam's package to Peer (a
/// connection or a handle, core/Peer.h). Never waits for the other side: a
/// peer that does not drain its ring would stall the executor for
/// everyone. A full ring, an image being shipped ahead, or a handle whose
/// connection is still being made, queues the frame (bounded); a full
/// queue is TC_ERR_NO_CREDIT, at once (docs/containment.md).
int twochains::rt::sendFromJam(tc_jam_ctx_t *Ctx, tc_peer *Peer, const char *Element,
                               tc_send_mode_t Mode, const void *Payload, size_t PayloadSize) {
  uint32_t ID;
  if (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED && Mode != TC_SEND_INJECTED_FULL)
    return TC_ERR_INVALID_PARAM;
  if ((PayloadSize && !Payload) || PayloadSize > UINT32_MAX)
    return TC_ERR_INVALID_PARAM;
  if (findElement(Ctx->Package, Element, &ID) != TC_OK)
    return TC_ERR_UNKNOWN_ELEMENT;
  // The frame's origin, which has a share of a route's queue: a forward's
  // (to a handle) is the peer whose frame runs; a reply is the peer's own.
  tc_peer *Origin = Peer->Proxy ? Ctx->Peer : nullptr;
  if (Peer->Proxy) {
    tc_peer *Bound = connectionOf(Peer);
    if (!Bound)
      return queueOnHandle(Peer, Ctx->Package, ID, Mode, Payload, PayloadSize, Origin);
    if (Peer->ProxyGone)
      return TC_ERR_IO;
    Peer = Bound;
  }
  if (Peer->Failed || !Peer->Welcomed)
    return TC_ERR_IO;
  return sendFromJamLocked(Peer, Ctx->Package, ID, Mode, Payload, PayloadSize, Ctx->Peer);
}

extern "C" int tc_jam_reply(tc_jam_ctx_t *Ctx, const char *Element, const void *Payload,
                            size_t PayloadSize) {
  if (!Ctx || !Element)
    return TC_ERR_INVALID_PARAM;
  return sendFromJam(Ctx, Ctx->Peer, Element, TC_SEND_LOCAL, Payload, PayloadSize);
}

static_assert(int(TC_JAM_SEND_LOCAL) == int(TC_SEND_LOCAL) &&
                  int(TC_JAM_SEND_INJECTED) == int(TC_SEND_INJECTED) &&
                  int(TC_JAM_SEND_INJECTED_FULL) == int(TC_SEND_INJECTED_FULL),
              "jam.h names tc_send_mode_t's values");

extern "C" int tc_jam_reply_mode(tc_jam_ctx_t *Ctx, const char *Element, int Mode,
                                 const void *Payload, size_t PayloadSize) {
  if (!Ctx || !Element)
    return TC_ERR_INVALID_PARAM;
  return sendFromJam(Ctx, Ctx->Peer, Element, tc_send_mode_t(Mode), Payload, PayloadSize);
}

extern "C" int tc_jam_forward(tc_jam_ctx_t *Ctx, const char *Address, unsigned Port,
                              const char *Element, const void *Payload, size_t PayloadSize) {
  if (!Ctx || !Address || !Element || Port == 0 || Port > 65535)
    return TC_ERR_INVALID_PARAM;
  auto *C = Ctx->Peer->Ctx;
  std::string Key = std::string(Address) + ":" + std::to_string(Port);
  // Only where the receiver allows: otherwise any peer could make it
  // connect anywhere and believe the answer.
  if (std::find(C->Job->ForwardAllow.begin(), C->Job->ForwardAllow.end(), Key) ==
      C->Job->ForwardAllow.end()) {
    countHeld(C, &tc_stats_t::messages_refused);
    logLimited(Ctx->Peer->RefusedMessageLog, TC_LOG_ERROR,
               "refused a forward to " + Key + " from " + Ctx->Peer->Name +
                   ": not in the context's forward_allow list");
    return TC_ERR_INVALID_PARAM;
  }
  sockaddr_in SA;
  if (!resolve(Address, uint16_t(Port), SA))
    return TC_ERR_IO;
  // Made in the background: the executor never waits on a peer.
  tc_peer *Route = addressRoute(C, Key, SA);
  int St = Route->ProxyGone ? TC_ERR_IO
                            : sendFromJam(Ctx, Route, Element, TC_SEND_LOCAL, Payload, PayloadSize);
  if (St == TC_ERR_IO)
    logOnce(Route->RefusalLogged, TC_LOG_ERROR,
            "a forward to " + Key + " failed: the route's connection has gone (further "
            "forwards there fail with TC_ERR_IO, not logged)");
  return St;
}

extern "C" int tc_jam_forward_rank(tc_jam_ctx_t *Ctx, unsigned Rank, const char *Element, int Mode,
                                   const void *Payload, size_t PayloadSize) {
  if (!Ctx || !Element || (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED))
    return TC_ERR_INVALID_PARAM;
  auto *C = Ctx->Peer->Ctx;
  if (!C->Job->Joined || Rank >= C->Job->JobSize)
    return TC_ERR_INVALID_PARAM;
  return sendFromJam(Ctx, rankHandle(C, Rank), Element, tc_send_mode_t(Mode), Payload, PayloadSize);
}

extern "C" unsigned tc_jam_sender_rank(const tc_jam_ctx_t *Ctx) {
  return Ctx && Ctx->Peer ? Ctx->Peer->JobRank : TC_JAM_NO_RANK;
}

extern "C" unsigned tc_jam_job_rank(const tc_jam_ctx_t *Ctx) {
  auto *C = Ctx && Ctx->Peer ? Ctx->Peer->Ctx : nullptr;
  return C && C->Job->Joined ? C->Wireup->Job.Rank : TC_JAM_NO_RANK;
}

extern "C" unsigned tc_jam_job_size(const tc_jam_ctx_t *Ctx) {
  auto *C = Ctx && Ctx->Peer ? Ctx->Peer->Ctx : nullptr;
  return C && C->Job->Joined ? C->Job->JobSize : 0;
}

extern "C" unsigned tc_jam_sender(const tc_jam_ctx_t *Ctx) {
  return Ctx && Ctx->Peer ? Ctx->Peer->Number : 0;
}

extern "C" unsigned long long tc_jam_sequence(const tc_jam_ctx_t *Ctx) {
  return Ctx ? Ctx->Frame : 0;
}
