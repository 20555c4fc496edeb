//===- Events.cpp - What went wrong, for the application to poll ----------===//
#include "core/Events.h"

#include "core/Stats.h"

namespace twochains::rt {

/// Enough for every frame of a full ring of every peer to be rejected
/// before the application looks; beyond it events are counted, not kept.
constexpr size_t MaxEvents = 4096;

void postEvent(CoreContext *Ctx, tc_event_kind_t Kind, unsigned Peer, tc_status_t Status,
               uint32_t Element, uint64_t Sequence, int32_t Signal) {
  std::lock_guard<std::mutex> G(Ctx->EventLock);
  if (Ctx->Events.size() >= MaxEvents) {
    count(Ctx, &tc_stats_t::events_lost);
    return;
  }
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
  auto *Ctx = twochains::rt::partOf<twochains::rt::CoreContext>(Api);
  if (!Ctx || !Out)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::mutex> G(Ctx->EventLock);
  if (Ctx->Events.empty())
    return 0;
  *Out = Ctx->Events.front();
  Ctx->Events.pop_front();
  return 1;
}
