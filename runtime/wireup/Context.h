//===- Context.h - The wire-up layer's part of a context ------------------===//
#ifndef TWOCHAINS_RUNTIME_WIREUP_CONTEXT_H
#define TWOCHAINS_RUNTIME_WIREUP_CONTEXT_H

#include "base/Log.h"
#include "base/Timeouts.h"
#include "receive/Context.h"

#include <vector>

namespace twochains::rt {

struct WireupContext : ReceiveContext {
  ucp_listener_h Listener = nullptr;
  uint16_t ListenPort = 0;    // the port it got (tc_listen with port 0: any)
  uint32_t ListenAddress = 0; // network order; INADDR_ANY for every interface
  /// Handshake messages that arrived, answered off the UCX callback.
  struct PendingMessage {
    unsigned Id;
    ucp_ep_h Ep;
    std::vector<uint8_t> Header, Body;
  };
  std::vector<PendingMessage> Handshakes;
  /// Connections refused (limits, failed handshakes), which anyone who
  /// reaches the port can cause: logged within a budget (base/Log.h).
  LogLimit RefusedConnectionLog;
  /// Connections that have not authenticated yet ("startups", as sshd's
  /// MaxStartups): at most MaxStartups at once, MaxStartupsPerAddress of
  /// them from one address, each for HandshakeTimeoutNs at most. They take
  /// none of the MaxPeers places of authenticated peers.
  uint32_t MaxStartups = 32, MaxStartupsPerAddress = 4;
  uint64_t HandshakeTimeoutNs = DefaultHandshakeTimeoutMs * NsPerMs;
  /// Called as a peer is released, before its endpoints close: the calls
  /// layer ends the calls made to it and forgets its answers.
  void (*PeerReleased)(WireupContext *Ctx, tc_peer *Peer) = nullptr;
};

} // namespace twochains::rt

#endif
