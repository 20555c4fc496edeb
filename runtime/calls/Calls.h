//===- Calls.h - Calls and what running jams may call ---------------------===//
#ifndef TWOCHAINS_RUNTIME_CALLS_CALLS_H
#define TWOCHAINS_RUNTIME_CALLS_CALLS_H

#include "calls/CallsContext.h"
#include "twochains/jam.h"

namespace twochains::rt {

/// Registers the answers' handler, the hooks the layers below call (answer
/// frames, abandoned frames, released peers) and the housekeeping of calls
/// and of jams' routes.
ucs_status_t setupCalls(CoreContext *Ctx);
/// Serves the jam API (tc_jam_return, tc_jam_reply, ...) to sandboxed jams
/// (calls/SandboxServices.cpp), once per process; false if the sandbox's
/// call table has no room for them.
bool addJamSandboxServices();

/// Caller: the answers that came by message from this peer end their
/// calls; the caller holds the peer's channel.
void takeArrivedAnswers(tc_peer *Peer);

/// A running jam's frame: element Element (by name) of its own package to
/// Peer, in Mode, never waiting (queued, bounded, while Peer's ring is full
/// or the element's image is being shipped ahead). 0 or a negative
/// tc_status_t, as tc_jam_reply returns.
int sendFromJam(tc_jam_ctx_t *Ctx, tc_peer *Peer, const char *Element, tc_send_mode_t Mode,
                const void *Payload, size_t PayloadSize);

} // namespace twochains::rt

#endif
