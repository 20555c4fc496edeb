//===- Peers.h - Finding a peer, and core's changes to one ----------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_PEERS_H
#define TWOCHAINS_RUNTIME_CORE_PEERS_H

#include "core/CoreContext.h"
#include "core/Peer.h"

#include <memory>
#include <string>

namespace twochains::rt {

/// The peer (accepted, connected or connecting) whose control or RMA
/// endpoint is Ep, or null.
tc_peer *peerOfEndpoint(CoreContext *Ctx, ucp_ep_h Ep);
/// The first connection (accepted, connected or connecting) Match takes.
template <class Fn> tc_peer *findConnection(CoreContext *Ctx, Fn Match) {
  for (auto &P : Ctx->Accepted)
    if (Match(P.get()))
      return P.get();
  for (tc_peer *P : Ctx->Connected)
    if (Match(P))
      return P;
  for (tc_peer *P : Ctx->Connecting)
    if (Match(P))
      return P;
  return nullptr;
}

/// Core's own state of a peer (core/Peer.h) changes only through these:
/// the layers that make, name, prove, hand out and cut off connections
/// call them.
/// A peer of Ctx, without the parts upper layers give it
/// (wireup/PeerWireup.h, newPeer, makes every peer).
std::unique_ptr<tc_peer> makePeer(CoreContext *Ctx);
/// Peer is the context's next one: numbered in connection order (the
/// number is returned).
unsigned numberPeer(CoreContext *Ctx, tc_peer *Peer);
/// What messages call Peer.
void renamePeer(tc_peer *Peer, std::string Name);
/// Who Peer is beyond this connection: what quarantine is kept by.
void identifyPeer(tc_peer *Peer, const PeerIdentity &Identity);
/// The rank of this side's job at the other end (NoJobRank: outside it).
void setJobRank(tc_peer *Peer, uint32_t JobRank);
/// The application was given Peer: it outlives its connection
/// (CoreContext::Gone).
void handOutPeer(tc_peer *Peer);
/// Peer has failed: nothing more is sent to it. Any thread may call this.
void failPeer(tc_peer *Peer);
/// The address Peer connected from, without the port (receiver).
void setPeerAddress(tc_peer *Peer, std::string Address);
/// Its control endpoint (null: closed, or cut off) and its RMA endpoint.
void setControlEndpoint(tc_peer *Peer, ucp_ep_h Ep);
void setDataEndpoint(tc_peer *Peer, ucp_ep_h Ep);
/// How frames and credits travel to and from Peer.
void setFramePath(tc_peer *Peer, FramePath Path);
/// The handshake is over (Channelled: calls on it hold its channel alone),
/// or the connection is released.
void markWelcomed(tc_peer *Peer, bool Channelled);
/// Peer and Other hold the same handshake nonces (tc_peer::Counterpart).
void pairCounterparts(tc_peer *Peer, tc_peer *Other);
void markReleased(tc_peer *Peer);
/// Peer is a handle, not a connection: bound to Connection once it is
/// made (frames sent meanwhile wait in its queue), lost once it will not
/// be (again).
void makeProxy(tc_peer *Handle);
void bindProxy(tc_peer *Handle, tc_peer *Connection);
void loseProxy(tc_peer *Handle);

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
