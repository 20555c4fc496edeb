//===- JamCalls.cpp - What running jams can call --------------------------===//
//
// Jams import these by name; the receiver's import tables resolve them in
// libtwochains like any other symbol of the process.
//
//===----------------------------------------------------------------------===//
#include "Runtime.h"
#include "twochains/jam.h"

#include <chrono>
#include <string>

/// Sends element Element of the running jam's package to Peer.
static int sendFromJam(tc_jam_ctx_t *Ctx, tc_peer *Peer, const char *Element,
                       const void *Payload, size_t PayloadSize) {
  uint32_t ID;
  if (tc_package_find(Ctx->Package, Element, &ID) != TC_OK)
    return TC_ERR_UNKNOWN_ELEMENT;
  // The other side frees slots as it progresses; wait a bounded while (two
  // seconds), not for ever: both sides may be waiting on each other's
  // credits.
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  for (;;) {
    tc_status_t St = tc_send(Peer, Ctx->Package, ID, TC_SEND_LOCAL, Payload, PayloadSize);
    if (St != TC_ERR_NO_CREDIT || std::chrono::steady_clock::now() > Deadline)
      return St;
  }
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
  tc_peer *&Route = C->Routes[Key];
  if (Route && Route->Failed) {
    tc_peer_close(Route);
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
