//===- Peers.cpp - Finding a peer, and core's changes to one --------------===//
#include "core/Peers.h"

namespace twochains::rt {

tc_peer *peerOfEndpoint(CoreContext *Ctx, ucp_ep_h Ep) {
  if (!Ep)
    return nullptr;
  return findConnection(Ctx, [&](tc_peer *P) { return P->Ep == Ep || P->DataEp == Ep; });
}

std::unique_ptr<tc_peer> makePeer(CoreContext *Ctx) {
  auto Peer = std::make_unique<tc_peer>();
  Peer->Ctx = Ctx;
  return Peer;
}

unsigned numberPeer(CoreContext *Ctx, tc_peer *Peer) { return Peer->Number = ++Ctx->PeersSeen; }

void renamePeer(tc_peer *Peer, std::string Name) { Peer->Name = std::move(Name); }

void identifyPeer(tc_peer *Peer, const PeerIdentity &Identity) { Peer->Identity = Identity; }

void setJobRank(tc_peer *Peer, uint32_t JobRank) { Peer->JobRank = JobRank; }

void handOutPeer(tc_peer *Peer) { Peer->HandedOut = true; }

void failPeer(tc_peer *Peer) { Peer->Failed = true; }

void setPeerAddress(tc_peer *Peer, std::string Address) { Peer->Address = std::move(Address); }

void setControlEndpoint(tc_peer *Peer, ucp_ep_h Ep) { Peer->Ep = Ep; }

void setDataEndpoint(tc_peer *Peer, ucp_ep_h Ep) { Peer->DataEp = Ep; }

void setFramePath(tc_peer *Peer, FramePath Path) { Peer->Path = Path; }

void pairCounterparts(tc_peer *Peer, tc_peer *Other) {
  Peer->Counterpart = Other->Number;
  Other->Counterpart = Peer->Number;
}

void markWelcomed(tc_peer *Peer, bool Channelled) {
  Peer->Channelled = Channelled;
  Peer->Welcomed = true;
}

void markReleased(tc_peer *Peer) { Peer->Welcomed = false; }

void makeProxy(tc_peer *Handle) { Handle->Proxy = true; }

void bindProxy(tc_peer *Handle, tc_peer *Connection) {
  Handle->ProxyGone = false;
  __atomic_store_n(&Handle->Bound, Connection, __ATOMIC_RELEASE);
}

void loseProxy(tc_peer *Handle) { Handle->ProxyGone = true; }

} // namespace twochains::rt
