//===- Peers.h - Finding a peer -------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_PEERS_H
#define TWOCHAINS_RUNTIME_CORE_PEERS_H

#include "core/Context.h"

namespace twochains::rt {

/// The peer (accepted, connected or connecting) whose control endpoint is
/// Ep, or null.
tc_peer *peerOfEndpoint(CoreContext *Ctx, ucp_ep_h Ep);

} // namespace twochains::rt

#endif
