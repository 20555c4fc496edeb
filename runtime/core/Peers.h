//===- Peers.h - Finding a peer -------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_PEERS_H
#define TWOCHAINS_RUNTIME_CORE_PEERS_H

#include "core/CoreContext.h"

namespace twochains::rt {

/// The peer (accepted, connected or connecting) whose control endpoint is
/// Ep, or null.
tc_peer *peerOfEndpoint(CoreContext *Ctx, ucp_ep_h Ep);

/// Calls Fn on every connection that sends: those this side made
/// (Connected) and those it accepted, which send replies.
template <class Fn> void forEachSendingPeer(CoreContext *Ctx, Fn &&F) {
  for (tc_peer *Peer : Ctx->Connected)
    F(Peer);
  for (const auto &Peer : Ctx->Accepted)
    F(Peer.get());
}

} // namespace twochains::rt

#endif
