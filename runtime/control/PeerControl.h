//===- PeerControl.h - The control layer's part of a peer -----------------===//
//
// Control messages UCX has not finished sending on the peer's control
// endpoint, with the bytes it reads until then (ControlMessage.h): each
// freed once its request completes, the rest when the endpoint closes.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTROL_PEERCONTROL_H
#define TWOCHAINS_RUNTIME_CONTROL_PEERCONTROL_H

#include "core/Peer.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace twochains::rt {

/// A control message UCX has not finished sending: its request (null once
/// sent) and the bytes it reads until then.
struct KeptSend {
  void *Request = nullptr;
  std::vector<uint8_t> Header, Body;
};

struct PeerControl {
  std::deque<KeptSend> Sent;
};

/// Makes the control layer's part of a new peer.
inline void makePeerControl(tc_peer *Peer) {
  Peer->Control.reset(new PeerControl, [](PeerControl *Part) { delete Part; });
}

} // namespace twochains::rt

#endif
