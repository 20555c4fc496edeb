//===- Peers.cpp - Finding a peer -----------------------------------------===//
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

} // namespace twochains::rt
