//===- PeerWireup.h - Wireup's part of a peer: its handshake --------------===//
//
// How a connection is made and proved, from its first message to its
// welcome or refusal, and how it ends: read and written by wireup/ alone
// (job/ reads how a connect in the background ended). Every peer has one,
// made with it (newPeer, Wireup.h).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_WIREUP_PEERWIREUP_H
#define TWOCHAINS_RUNTIME_WIREUP_PEERWIREUP_H

#include "core/Peer.h"
#include "core/Peers.h"
#include "code/PeerCode.h"
#include "control/PeerControl.h"
#include "package/PeerPackage.h"
#include "path/PeerPath.h"
#include "receive/PeerReceive.h"
#include "send/PeerSend.h"

#include <memory>

namespace twochains::rt {

struct PeerWireup {
  /// tc_connect, while it may still try again: the connection was refused
  /// or broke before the receiver answered (nothing listens yet), which is
  /// not logged but noted here.
  bool RetryIfUnreachable = false, Unreachable = false;
  /// Its handshake is taken on the control turn (startConnect).
  bool Background = false;

  // Receiver.
  enum class Auth { None, Challenged, Authenticated, Refused } AuthState = Auth::None;
  /// Its AUTH proved it holds the key (a fresh MAC, not seen before): it
  /// no longer counts against its address's startups, and a newer
  /// connection from there never takes its place (Connection.cpp).
  bool KeyProvedAtAuth = false;
  uint64_t AcceptedNs = 0;    // when the connection came (handshake deadline)
  /// A refused handshake: the flush that lets its REFUSED message leave,
  /// and when it was refused; released once that is done (or after a
  /// bounded while), never waited for.
  ucs_status_ptr_t RefusalFlush = nullptr;
  uint64_t RefusedNs = 0;
  uint64_t FailedSeenNs = 0;  // when reaping first found it failed, frames left

  // Sender.
  /// Where its handshake stands. Every step is taken when the receiver's
  /// message arrives, on the control turn (a connect in the background) or
  /// in tc_connect's own loop, which answers other peers' handshakes
  /// meanwhile: no side waits for another to answer first.
  enum class Connect { None, AuthSent, HelloSent, Done } ConnectState = Connect::None;
  tc_status_t ConnectResult = TC_ERR_IO;
  uint64_t ConnectDeadlineNs = 0;
  /// It ended because the receiver kept a connection the other way
  /// (RefusalCrossed): no failure.
  bool Crossed = false;
  /// The rank the job's addresses say listens where this connects (a job
  /// connection), or NoJobRank: a welcome from any other is refused.
  uint32_t ExpectJobRank = NoJobRank;
  bool Challenged = false;    // the receiver proved it holds the key

  // Both.
  uint8_t ClientNonce[NonceSize] = {};
  uint8_t ServerNonce[NonceSize] = {};
};

/// A peer of Ctx with the parts every peer has (wireup's, control's, the
/// frame path's, send's, receive's, code's, package's): every peer,
/// connection or handle, is made here.
inline std::unique_ptr<tc_peer> newPeer(CoreContext *Ctx) {
  auto Peer = makePeer(Ctx);
  Peer->Wireup.reset(new PeerWireup, [](PeerWireup *Part) { delete Part; });
  makePeerControl(Peer.get());
  makePeerPath(Peer.get());
  makePeerReceive(Peer.get());
  makePeerCode(Peer.get());
  makePeerPackage(Peer.get());
  makePeerSend(Peer.get());
  return Peer;
}

/// Wireup's part of Peer (every peer has one).
inline PeerWireup &wireupOf(tc_peer *Peer) { return *Peer->Wireup; }
inline const PeerWireup &wireupOf(const tc_peer *Peer) { return *Peer->Wireup; }

} // namespace twochains::rt

#endif
