//===- Events.h - What went wrong, for the application to poll ------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_EVENTS_H
#define TWOCHAINS_RUNTIME_CORE_EVENTS_H

#include "core/Context.h"

namespace twochains::rt {

/// Queues an event for tc_poll_event (bounded: past the bound, counted as
/// lost).
void postEvent(CoreContext *Ctx, tc_event_kind_t Kind, unsigned Peer, tc_status_t Status,
               uint32_t Element = 0, uint64_t Sequence = 0, int32_t Signal = 0);

} // namespace twochains::rt

#endif
