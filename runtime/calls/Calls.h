//===- Calls.h - Calls and what running jams may call ---------------------===//
#ifndef TWOCHAINS_RUNTIME_CALLS_CALLS_H
#define TWOCHAINS_RUNTIME_CALLS_CALLS_H

#include "calls/Context.h"

namespace twochains::rt {

/// Registers the answers' handler, the hooks the layers below call (answer
/// frames, abandoned frames, released peers) and the housekeeping of calls
/// and of jams' routes.
ucs_status_t setupCalls(CallsContext *Ctx);

/// Caller: the answers that came by message from this peer end their
/// calls; the caller holds the peer's channel.
void takeArrivedAnswers(tc_peer *Peer);

} // namespace twochains::rt

#endif
