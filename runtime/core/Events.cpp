//===- Events.cpp - What went wrong, for the application to poll ----------===//
#include "core/Events.h"

#include "core/Stats.h"

namespace twochains::rt {

void postEvent(CoreContext *Ctx, tc_event_kind_t Kind, unsigned Peer, tc_status_t Status,
               uint32_t Element, uint64_t Sequence, int32_t Signal) {
  std::lock_guard<std::mutex> G(Ctx->EventLock);
  if (Ctx->Events.size() >= MaxEvents || (Peer && Ctx->EventsOfPeer[Peer] >= MaxEventsPerPeer)) {
    count(Ctx, &tc_stats_t::events_lost);
    return;
  }
  if (Peer)
    ++Ctx->EventsOfPeer[Peer];
  tc_event_t E = {};
  E.kind = Kind;
  E.peer = Peer;
  E.status = Status;
  E.element = Element;
  E.signal = Signal;
  E.sequence = Sequence;
  Ctx->Events.push_back(E);
}

} // namespace twochains::rt

extern "C" int tc_poll_event(tc_context_t *Api, tc_event_t *Out) {
  auto *Ctx = twochains::rt::coreOf(Api);
  if (!Ctx || !Out)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::mutex> G(Ctx->EventLock);
  if (Ctx->Events.empty())
    return 0;
  *Out = Ctx->Events.front();
  Ctx->Events.pop_front();
  if (Out->peer) {
    auto It = Ctx->EventsOfPeer.find(Out->peer);
    if (It != Ctx->EventsOfPeer.end() && --It->second == 0)
      Ctx->EventsOfPeer.erase(It);
  }
  return 1;
}
