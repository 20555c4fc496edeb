//===- Events.h - What went wrong, for the application to poll ------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_EVENTS_H
#define TWOCHAINS_RUNTIME_CORE_EVENTS_H

#include "core/CoreContext.h"

namespace twochains::rt {

/// Enough for every frame of a full ring of every peer to be rejected
/// before the application looks; beyond it events are counted, not kept.
constexpr size_t MaxEvents = 4096;
/// One peer's share: a peer whose every frame is rejected fills no more,
/// and the others' events (one that went, say) are still kept.
constexpr size_t MaxEventsPerPeer = MaxEvents / 4;

/// Queues an event for tc_poll_event (bounded: past the bound, counted as
/// lost).
void postEvent(CoreContext *Ctx, tc_event_kind_t Kind, unsigned Peer, tc_status_t Status,
               uint32_t Element = 0, uint64_t Sequence = 0, int32_t Signal = 0);

} // namespace twochains::rt

#endif
