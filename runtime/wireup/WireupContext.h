//===- WireupContext.h - The wire-up layer's part of a context ------------===//
#ifndef TWOCHAINS_RUNTIME_WIREUP_WIREUPCONTEXT_H
#define TWOCHAINS_RUNTIME_WIREUP_WIREUPCONTEXT_H

#include "base/Log.h"
#include "base/Timeouts.h"
#include "core/JobIdentity.h"
#include "receive/ReceiveContext.h"

#include "Signature.h"

#include <array>
#include <deque>
#include <vector>

namespace twochains::rt {

struct WireupContext {
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
  /// MaxStartupsPerAddress was set (parameter or environment); if not, a
  /// job on one host raises it to its ranks (job/Job.cpp).
  bool StartupsPerAddressChosen = false;
  uint64_t HandshakeTimeoutNs = DefaultHandshakeTimeoutMs * NsPerMs;
  /// The nonces of AUTHs that proved the key within the last
  /// AuthProofWindowNs, oldest first, with when each was sent: a proof
  /// replayed does not count twice. At most MaxProvedNonces; beyond that
  /// no AUTH counts as proved until the oldest age out (Handshake.cpp).
  std::deque<std::pair<uint64_t, std::array<uint8_t, NonceSize>>> ProvedNonces;
  /// A peer is being released, before its endpoints close: the job layer
  /// lets the handles bound to it come loose, the calls layer ends the
  /// calls made to it and forgets its answers.
  Subscribers<CoreContext *, tc_peer *> PeerReleased;
  /// Who this context is in a job (core/JobIdentity.h): filled in by the
  /// job layer, carried by every offer.
  JobIdentity Job;
  /// Who decides on an authenticated HELLO from a rank of this side's job
  /// (Peer->JobRank; the job layer, job/Route.cpp): 0 to take it,
  /// RefusalCrossed to refuse it quietly (a connection the other way is
  /// kept), or a negative status to refuse it, Why saying why. One
  /// decides; none: every rank's HELLO is taken.
  int (*DecideRankHello)(CoreContext *Ctx, tc_peer *Peer, std::string &Why) = nullptr;
  /// Who takes an AUTH on an endpoint no peer has (the job layer,
  /// job/RankEndpoints.cpp: its endpoint to a rank, made from the rank's
  /// worker address): the accepted peer (acceptOnEndpoint), or null to
  /// refuse the message.
  tc_peer *(*AcceptOnEndpoint)(CoreContext *Ctx, ucp_ep_h Ep) = nullptr;
  /// A connection welcomed, in either role.
  Subscribers<CoreContext *, tc_peer *> PeerWelcomed;
  /// A connect in the background ended (ConnectResult; Crossed), welcomed
  /// or not: whoever started it owns it from then on.
  Subscribers<CoreContext *, tc_peer *> ConnectEnded;
};

} // namespace twochains::rt

#endif
