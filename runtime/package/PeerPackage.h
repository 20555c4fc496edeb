//===- PeerPackage.h - The package layer's part of a peer -----------------===//
//
// What the package layer keeps per peer: whether a ried push to it awaits
// its answer (RiedPush.cpp, which alone writes it; only then is an answer
// taken). context/ reads it: such a peer's ring may not go cold. Every
// peer has one (wireup's newPeer).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_PACKAGE_PEERPACKAGE_H
#define TWOCHAINS_RUNTIME_PACKAGE_PEERPACKAGE_H

#include "core/Peer.h"

namespace twochains::rt {

struct PeerPackage {
  bool PushingRied = false;
};

/// Makes the package layer's part of a new peer.
inline void makePeerPackage(tc_peer *Peer) {
  Peer->Package.reset(new PeerPackage, [](PeerPackage *Part) { delete Part; });
}

} // namespace twochains::rt

#endif
