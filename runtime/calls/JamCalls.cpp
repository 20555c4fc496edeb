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
#include "wireup/Wireup.h"

#include <algorithm>
#include <string>

using namespace twochains::rt;

/// Sends element Element of the running jam's package to Peer. Never
/// waits for the other side: a peer that does not drain its ring would
/// stall the executor for everyone. A full ring, or an image being shipped
/// ahead, queues the frame (bounded); a full queue is TC_ERR_NO_CREDIT, at
/// once (docs/containment.md).
int twochains::rt::sendFromJam(tc_jam_ctx_t *Ctx, tc_peer *Peer, const char *Element,
                               tc_send_mode_t Mode, const void *Payload, size_t PayloadSize) {
  uint32_t ID;
  if (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED && Mode != TC_SEND_INJECTED_FULL)
    return TC_ERR_INVALID_PARAM;
  if ((PayloadSize && !Payload) || PayloadSize > UINT32_MAX)
    return TC_ERR_INVALID_PARAM;
  if (findElement(Ctx->Package, Element, &ID) != TC_OK)
    return TC_ERR_UNKNOWN_ELEMENT;
  if (Peer->Failed)
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
  auto *C = contextOf<CallsContext>(Ctx->Peer);
  std::string Key = std::string(Address) + ":" + std::to_string(Port);
  // Only where the receiver allows: otherwise any peer could make it
  // connect anywhere and believe the answer.
  if (std::find(C->ForwardAllow.begin(), C->ForwardAllow.end(), Key) == C->ForwardAllow.end()) {
    countHeld(C, &tc_stats_t::messages_refused);
    logLimited(Ctx->Peer->RefusedMessageLog, TC_LOG_ERROR,
               "refused a forward to " + Key + " from " + Ctx->Peer->Name +
                   ": not in the context's forward_allow list");
    return TC_ERR_INVALID_PARAM;
  }
  tc_peer *&Route = C->Routes[Key];
  if (Route && Route->Failed) {
    // Not closed here: a frame from it may be the one running. Closed at
    // the executor's next control turn, when no jam runs.
    C->RetiredRoutes.push_back(Route);
    Route = nullptr;
  }
  // On the executor, which never waits on a peer: one attempt only.
  sockaddr_in SA;
  if (!Route && (!resolve(Address, uint16_t(Port), SA) ||
                 connectUntil(C, SA, Key, nowNs() + ForwardConnectTimeoutNs, true, &Route,
                              /*Retry=*/false) != TC_OK)) {
    Route = nullptr;
    return TC_ERR_IO;
  }
  return sendFromJam(Ctx, Route, Element, TC_SEND_LOCAL, Payload, PayloadSize);
}

extern "C" unsigned tc_jam_sender(const tc_jam_ctx_t *Ctx) {
  return Ctx && Ctx->Peer ? Ctx->Peer->Number : 0;
}

extern "C" unsigned long long tc_jam_sequence(const tc_jam_ctx_t *Ctx) {
  return Ctx ? Ctx->Sequence : 0;
}
