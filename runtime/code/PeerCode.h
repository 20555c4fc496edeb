//===- PeerCode.h - The code layer's part of a peer -----------------------===//
//
// The package builds a peer holds and the code on its way to it: the
// builds its offer named and those deployed to it since, whether it takes
// deployments, how it runs injected code and as which instruction set, the deployment and the image shipment in flight. Written by
// code/ alone (wireup hands it the offer's part, takeOffered*); send/,
// job/ and context/ read it. Every peer has one (wireup's newPeer).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_PEERCODE_H
#define TWOCHAINS_RUNTIME_CODE_PEERCODE_H

#include "code/Deployment.h"
#include "code/Shipment.h"
#include "core/Peer.h"

#include <vector>

namespace twochains::rt {

struct PeerCode {
  /// The receiver takes deployments, so a frame of a package build it does
  /// not hold waits for its deployment; HeldTag: the last package found
  /// held (the hot path's one compare, Deploy.h peerHolds).
  bool DeployCheck = false;
  uint64_t HeldTag = 0;
  /// The package builds (identity tags) the other side holds: its offer's,
  /// then each one deployed to it (Deploy.cpp).
  std::vector<uint64_t> RemotePackages;
  /// How the receiver runs injected code, and the instruction set it runs
  /// it as (enum Isa): injected frames carry, and name, the images built
  /// for it.
  tc_mailbox_mode_t RemoteMode = TC_MAILBOX_CODE_CACHE;
  uint32_t RemoteIsa = 0;
  /// The deployment to this peer (Deploy.cpp), how the last one ended, and
  /// the packages it refused for good; one at a time per peer.
  Deployment Deploying;
  /// The image shipped to this peer and not yet answered (CodeTransfer.cpp,
  /// startShipment): only its answer is taken.
  Shipment Shipping;
};

/// Makes the code layer's part of a new peer.
inline void makePeerCode(tc_peer *Peer) {
  Peer->Code.reset(new PeerCode, [](PeerCode *Part) { delete Part; });
}

} // namespace twochains::rt

#endif
