//===- JamCalls.cpp - What running jams can call --------------------------===//
//
// Jams import these by name; the receiver's import tables resolve them in
// libtwochains like any other symbol of the process.
//
//===----------------------------------------------------------------------===//
#include "Runtime.h"
#include "twochains/jam.h"

#include "Log.h"

#include <algorithm>
#include <string>

/// Frames jams may have waiting for one peer, and their payload bytes.
/// Past either the jam sees TC_ERR_NO_CREDIT.
static constexpr size_t MaxQueuedFrames = 4096;
static constexpr size_t MaxQueuedBytes = 4u << 20;

namespace twochains::rt {

void closeRetiredRoutes(tc_context *Ctx) {
  for (tc_peer *Route : Ctx->RetiredRoutes)
    tc_peer_close(Route);
  Ctx->RetiredRoutes.clear();
}

tc_status_t queueFrame(tc_peer *Peer, twochains::rt::PeerSendHalf::QueuedFrame F) {
  if (Peer->Tx.Queued.size() >= MaxQueuedFrames ||
      Peer->Tx.QueuedBytes + F.Payload.size() > MaxQueuedBytes)
    return TC_ERR_NO_CREDIT;
  Peer->Tx.QueuedBytes += F.Payload.size();
  Peer->Tx.Queued.push_back(std::move(F));
  return TC_OK;
}

void sendQueued(tc_peer *Peer) {
  while (!Peer->Tx.Queued.empty()) {
    twochains::rt::PeerSendHalf::QueuedFrame &F = Peer->Tx.Queued.front();
    tc_status_t St =
        F.Package ? tc_send(Peer, F.Package, F.Element, TC_SEND_LOCAL, F.Payload.data(),
                            F.Payload.size())
                  : sendAnswer(Peer, F.CallSequence, F.Payload.data(), F.Payload.size());
    if (St == TC_ERR_NO_CREDIT)
      return;
    Peer->Tx.QueuedBytes -= F.Payload.size();
    Peer->Tx.Queued.pop_front(); // sent, or failed for good (the peer is gone)
  }
}

} // namespace twochains::rt

/// Sends element Element of the running jam's package to Peer. Never
/// waits for the other side: a peer that does not drain its ring would
/// stall the executor for everyone. A full ring queues the frame (bounded);
/// a full queue is TC_ERR_NO_CREDIT, at once (docs/containment.md).
static int sendFromJam(tc_jam_ctx_t *Ctx, tc_peer *Peer, const char *Element,
                       const void *Payload, size_t PayloadSize) {
  uint32_t ID;
  if (tc_package_find(Ctx->Package, Element, &ID) != TC_OK)
    return TC_ERR_UNKNOWN_ELEMENT;
  if (Peer->Failed)
    return TC_ERR_IO;
  twochains::rt::sendQueued(Peer);
  if (Peer->Tx.Queued.empty()) {
    tc_status_t St = tc_send(Peer, Ctx->Package, ID, TC_SEND_LOCAL, Payload, PayloadSize);
    if (St != TC_ERR_NO_CREDIT)
      return St;
  }
  auto *P = static_cast<const uint8_t *>(Payload);
  return twochains::rt::queueFrame(Peer,
                                   {Ctx->Package, ID, std::vector<uint8_t>(P, P + PayloadSize)});
}

extern "C" int tc_jam_reply(tc_jam_ctx_t *Ctx, const char *Element, const void *Payload,
                            size_t PayloadSize) {
  if (!Ctx || !Element)
    return TC_ERR_INVALID_PARAM;
  return sendFromJam(Ctx, Ctx->Peer, Element, Payload, PayloadSize);
}

extern "C" int tc_jam_forward(tc_jam_ctx_t *Ctx, const char *Address, unsigned Port,
                              const char *Element, const void *Payload, size_t PayloadSize) {
  if (!Ctx || !Address || !Element || Port == 0 || Port > 65535)
    return TC_ERR_INVALID_PARAM;
  tc_context *C = Ctx->Peer->Ctx;
  std::string Key = std::string(Address) + ":" + std::to_string(Port);
  // Only where the receiver allows: otherwise any peer could make it
  // connect anywhere and believe the answer.
  if (std::find(C->ForwardAllow.begin(), C->ForwardAllow.end(), Key) == C->ForwardAllow.end()) {
    ++C->Stats.messages_refused;
    twochains::rt::logError("refused a forward to " + Key + " from " + Ctx->Peer->Name +
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
  if (!Route && tc_connect(C, Address, uint16_t(Port), 5000, &Route) != TC_OK) {
    Route = nullptr;
    return TC_ERR_IO;
  }
  return sendFromJam(Ctx, Route, Element, Payload, PayloadSize);
}

extern "C" unsigned tc_jam_sender(const tc_jam_ctx_t *Ctx) {
  return Ctx && Ctx->Peer ? Ctx->Peer->Number : 0;
}

extern "C" unsigned long long tc_jam_sequence(const tc_jam_ctx_t *Ctx) {
  return Ctx ? Ctx->Sequence : 0;
}
