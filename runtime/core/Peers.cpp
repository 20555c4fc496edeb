//===- Peers.cpp - Finding a peer, and core's changes to one --------------===//
#include "core/Peers.h"

namespace twochains::rt {

tc_peer *peerOfEndpoint(CoreContext *Ctx, ucp_ep_h Ep) {
  if (!Ep)
    return nullptr;
  for (auto &P : Ctx->Accepted)
    if (P->Ep == Ep)
      return P.get();
  for (tc_peer *P : Ctx->Connected)
    if (P->Ep == Ep)
      return P;
  for (tc_peer *P : Ctx->Connecting)
    if (P->Ep == Ep)
      return P;
  return nullptr;
}

unsigned numberPeer(CoreContext *Ctx, tc_peer *Peer) { return Peer->Number = ++Ctx->PeersSeen; }

void renamePeer(tc_peer *Peer, std::string Name) { Peer->Name = std::move(Name); }

void identifyPeer(tc_peer *Peer, const PeerIdentity &Identity) { Peer->Identity = Identity; }

void setJobRank(tc_peer *Peer, uint32_t JobRank) { Peer->JobRank = JobRank; }

void handOutPeer(tc_peer *Peer) { Peer->HandedOut = true; }

void failPeer(tc_peer *Peer) { Peer->Failed = true; }

} // namespace twochains::rt
