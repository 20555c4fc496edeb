//===- JamCalls.cpp - What running jams can call --------------------------===//
//
// Jams import these by name; the receiver's import tables resolve them in
// libtwochains like any other symbol of the process.
//
//===----------------------------------------------------------------------===//
#include "Runtime.h"
#include "twochains/jam.h"

extern "C" int tc_jam_reply(tc_jam_ctx_t *Ctx, const char *Element, const void *Payload,
                            size_t PayloadSize) {
  if (!Ctx || !Element)
    return TC_ERR_INVALID_PARAM;
  uint32_t ID;
  if (tc_package_find(Ctx->Package, Element, &ID) != TC_OK)
    return TC_ERR_UNKNOWN_ELEMENT;
  // The other side frees slots as it progresses; wait a bounded while, not
  // for ever: both sides may be waiting on each other's credits.
  for (int Try = 0; Try < 100000; ++Try) {
    tc_status_t St = tc_send(Ctx->Peer, Ctx->Package, ID, TC_SEND_LOCAL, Payload, PayloadSize);
    if (St != TC_ERR_NO_CREDIT)
      return St;
  }
  return TC_ERR_NO_CREDIT;
}

extern "C" unsigned long long tc_jam_sequence(const tc_jam_ctx_t *Ctx) {
  return Ctx ? Ctx->Sequence : 0;
}
