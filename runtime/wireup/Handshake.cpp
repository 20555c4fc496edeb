//===- Handshake.cpp - Authentication, then offers ------------------------===//
//
// Four active messages on the endpoint that UCX's sockaddr connection
// establishment created (Auth.h has the MACs):
//
//   sender   -> receiver  AUTH       Nc, its time, proof that it holds the key
//   receiver -> sender    CHALLENGE  Ns, proof that it holds the key
//   sender   -> receiver  HELLO      MAC, offer: its ring, credit line
//   receiver -> sender    WELCOME    MAC, offer: the same for its side
//
// A job's HELLO and WELCOME also prove the offering side's rank, by the
// key its address blob published, over the job, the rank and both nonces
// (a rank is proved, not claimed: RankProof.cpp).
//
// Nothing of an offer is parsed before its MAC is checked; a sender that
// finds the receiver's proof wrong still sends a HELLO, with no offer, so
// that the receiver sees, counts and logs the failure too. UCX callbacks
// only queue what arrived (bounded); it is answered off the callback.
//
//===----------------------------------------------------------------------===//
#include "wireup/Wireup.h"

#include "base/Log.h"
#include "code/Deploy.h"
#include "base/Timeouts.h"
#include "base/StatusString.h"
#include "control/ControlMessage.h"
#include "core/Peers.h"
#include "core/Stats.h"
#include "receive/Quarantine.h"
#include "path/PathContext.h"
#include "ucx/Request.h"
#include "wire/Formats.h"
#include "path/Mailbox.h"
#include "wireup/RankProof.h"

#include <algorithm>
#include <cstring>

using namespace twochains::rt;

static const char ClientLabel[] = "tc-auth-v1 client";
static const char ServerLabel[] = "tc-auth-v1 server";
static const char HelloLabel[] = "tc-auth-v1 hello";
static const char WelcomeLabel[] = "tc-auth-v1 welcome";
static const char HelloProofLabel[] = "tc-rank-v1 hello";
static const char WelcomeProofLabel[] = "tc-rank-v1 welcome";

/// Handshake messages queued at once, from every endpoint together: a flood
/// of them costs a bounded amount of memory until the next control turn.
static constexpr size_t MaxPendingHandshakes = 256;
/// How far an AUTH's time may be from the receiver's clock for its proof
/// to count, and how many proved nonces are remembered meanwhile.
static constexpr uint64_t AuthProofWindowNs = 120'000'000'000ull;
static constexpr size_t MaxProvedNonces = 1024;
/// Answers are sent without waiting (sendMessage with no deadline): a peer
/// that does not take our messages holds up nobody.

static void offerMac(const CoreContext *Ctx, const char *Label, size_t LabelSize,
                     const tc_peer *Peer, const Offer &O, const uint8_t *Body, size_t BodySize,
                     uint8_t Out[MacSize]) {
  const auto *Fields = reinterpret_cast<const uint8_t *>(&O) + MacSize;
  hmacSha256(Ctx->Key,
             {{Label, LabelSize},
              {Peer->Wireup->ClientNonce, NonceSize},
              {Peer->Wireup->ServerNonce, NonceSize},
              {Fields, sizeof O - MacSize},
              {Body, BodySize}},
             Out);
}

static void clientProof(const CoreContext *Ctx, const AuthRequest &R, uint8_t Out[MacSize]) {
  hmacSha256(Ctx->Key,
             {{ClientLabel, sizeof ClientLabel},
              {R.ClientNonce, NonceSize},
              {&R.SentNs, sizeof R.SentNs}},
             Out);
}

/// Receiver, as an AUTH arrives: whether it proves the key, fresh and not
/// seen before. Only an exemption from the limits on connections of one
/// address rests on it (Connection.cpp); the handshake itself still
/// proves the key both ways. Without a key nothing is proved.
static bool authProvesKey(CoreContext *Ctx, const void *Header, size_t HeaderLength) {
  AuthRequest R;
  if (!Ctx->Key.present() || HeaderLength != sizeof R)
    return false;
  std::memcpy(&R, Header, sizeof R);
  uint64_t Now = wallNs();
  if (R.Magic != AuthMagic || R.Version != HandshakeVersion ||
      (R.SentNs > Now ? R.SentNs - Now : Now - R.SentNs) > AuthProofWindowNs)
    return false;
  uint8_t Want[MacSize];
  clientProof(Ctx, R, Want);
  if (!equalMacs(Want, R.Proof))
    return false;
  auto &Seen = Ctx->Wireup->ProvedNonces;
  while (!Seen.empty() && Seen.front().first + 2 * AuthProofWindowNs < Now)
    Seen.pop_front();
  std::array<uint8_t, NonceSize> Nonce;
  std::memcpy(Nonce.data(), R.ClientNonce, NonceSize);
  if (Seen.size() >= MaxProvedNonces ||
      std::any_of(Seen.begin(), Seen.end(), [&](const auto &S) { return S.second == Nonce; }))
    return false;
  Seen.emplace_back(Now, Nonce);
  return true;
}

static void serverProof(const CoreContext *Ctx, const tc_peer *Peer, uint8_t Out[MacSize]) {
  hmacSha256(Ctx->Key,
             {{ServerLabel, sizeof ServerLabel},
              {Peer->Wireup->ClientNonce, NonceSize},
              {Peer->Wireup->ServerNonce, NonceSize}},
             Out);
}

/// Receiver: ends a handshake that failed. The sender is told the status;
/// reaping closes the endpoint once that message has left (or after
/// RefusedCloseTimeoutNs). Nothing here waits: a refusal, which anyone who
/// reaches the port can cause, costs no time of the peers being served.
static void refusePeer(CoreContext *Ctx, tc_peer *Peer, const std::string &Why,
                       int32_t Status = TC_ERR_BAD_OFFER, const std::string &Detail = "") {
  Peer->Wireup->AuthState = PeerWireup::Auth::Refused;
  failPeer(Peer);
  // A crossing is no failure: nothing to log.
  if (Status != RefusalCrossed)
    logLimited(Ctx->Wireup->RefusedConnectionLog, TC_LOG_ERROR,
               "refused " + Peer->Name + ": " + Why);
  if (Peer->Ep && !Peer->Wireup->RefusalFlush) {
    Refusal R = {RefusalMagic, Status};
    sendMessage(Ctx, Peer, AmRefused, &R, sizeof R, Detail.data(), Detail.size());
    ucp_request_param_t P = {};
    ucs_status_ptr_t Flush = ucp_ep_flush_nbx(Peer->Ep, &P);
    Peer->Wireup->RefusalFlush = UCS_PTR_IS_PTR(Flush) ? Flush : nullptr;
    Peer->Wireup->RefusedNs = nowNs();
  }
}

static ucs_status_t onHandshake(CoreContext *Ctx, unsigned Id, const void *Header,
                                size_t HeaderLength, void *Data, size_t Length,
                                const ucp_am_recv_param_t *Param) {
  tc_peer *Peer = senderOf(Ctx, Param);
  // A rank's connection made from worker addresses has no connection
  // request: its AUTH, on this side's endpoint to that rank, is its start.
  if (!Peer && Id == AmAuth && Ctx->Wireup->AcceptOnEndpoint &&
      (Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
    Peer = Ctx->Wireup->AcceptOnEndpoint(Ctx, Param->reply_ep);
  if (Peer && Peer->Wireup->AuthState == PeerWireup::Auth::Refused) {
    // Refused and logged already: what it says until its endpoint closes
    // is counted, not logged again.
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return UCS_OK;
  }
  // Only a connect in progress takes the messages a receiver sends; sent to
  // anything else (an accepted peer playing the other role), they are
  // refused on arrival, never queued to crowd out real handshakes.
  bool ForServer = Id == AmAuth || Id == AmHello;
  if (Peer && !Peer->Welcomed && !ForServer &&
      std::none_of(Ctx->Connecting.begin(), Ctx->Connecting.end(),
                   [&](tc_peer *P) { return P->Ep == Param->reply_ep; })) {
    refuseMessage(Ctx, Peer, "a handshake message of the other role", Param);
    return UCS_OK;
  }
  if (!Peer || Peer->Welcomed || (Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
      HeaderLength > sizeof(Offer) || Length > MaxOfferBody ||
      Ctx->Wireup->Handshakes.size() >= MaxPendingHandshakes) {
    refuseMessage(Ctx, Peer,
                  "a handshake message out of place or out of bounds (" +
                      std::to_string(HeaderLength) + " + " + std::to_string(Length) + " bytes)",
                  Param);
    return UCS_OK;
  }
  if (Id == AmAuth && Peer->Wireup->AuthState == PeerWireup::Auth::None && !Peer->Wireup->KeyProvedAtAuth)
    Peer->Wireup->KeyProvedAtAuth = authProvesKey(Ctx, Header, HeaderLength);
  WireupContext::PendingMessage M;
  M.Id = Id;
  M.Ep = Param->reply_ep;
  auto *H = static_cast<const uint8_t *>(Header);
  auto *D = static_cast<const uint8_t *>(Data);
  M.Header.assign(H, H + HeaderLength);
  M.Body.assign(D, D + Length);
  Ctx->Wireup->Handshakes.push_back(std::move(M));
  return UCS_OK;
}

template <unsigned Id>
static ucs_status_t onMessage(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                              size_t Length, const ucp_am_recv_param_t *Param) {
  return onHandshake(static_cast<CoreContext *>(Arg), Id, Header, HeaderLength, Data, Length,
                     Param);
}

/// Receiver: AUTH. Answers with a fresh nonce and the proof of the key.
/// Pairs Peer with the connection of this context at its other end, if
/// there is one: both ends hold the same two nonces, one drawn by each
/// side. Known once the CHALLENGE has been sent (server) or taken
/// (client). A peer can make two of its own connections hold the same
/// nonces (relaying each one's into the other): it then gains only the
/// right to name its own ring (tc_peer::Counterpart).
static void noteConnectionToItself(CoreContext *Ctx, tc_peer *Peer) {
  const PeerWireup &W = *Peer->Wireup;
  if (std::all_of(W.ServerNonce, W.ServerNonce + NonceSize, [](uint8_t B) { return B == 0; }))
    return;
  tc_peer *Other = findConnection(Ctx, [&](tc_peer *P) {
    return P != Peer && P->Wireup &&
           !std::memcmp(P->Wireup->ClientNonce, W.ClientNonce, NonceSize) &&
           !std::memcmp(P->Wireup->ServerNonce, W.ServerNonce, NonceSize);
  });
  if (Other)
    pairCounterparts(Peer, Other);
}

static void answerAuth(CoreContext *Ctx, tc_peer *Peer, const WireupContext::PendingMessage &M) {
  AuthRequest R;
  if (Peer->Wireup->AuthState != PeerWireup::Auth::None || M.Header.size() != sizeof R || !M.Body.empty())
    return refusePeer(Ctx, Peer, "a handshake that does not start with AUTH");
  std::memcpy(&R, M.Header.data(), sizeof R);
  if (R.Magic != AuthMagic || R.Version != HandshakeVersion)
    return refusePeer(Ctx, Peer, "not a Two-Chains handshake of version " +
                                     std::to_string(HandshakeVersion) + " (it sent version " +
                                     std::to_string(R.Version) + ")");
  std::memcpy(Peer->Wireup->ClientNonce, R.ClientNonce, NonceSize);
  AuthChallenge C = {ChallengeMagic, HandshakeVersion, {}, {}};
  if (!randomNonce(Peer->Wireup->ServerNonce))
    return refusePeer(Ctx, Peer, "this host gives no random bytes for a nonce");
  std::memcpy(C.ServerNonce, Peer->Wireup->ServerNonce, NonceSize);
  serverProof(Ctx, Peer, C.Proof);
  Peer->Wireup->AuthState = PeerWireup::Auth::Challenged;
  if (sendMessage(Ctx, Peer, AmChallenge, &C, sizeof C, nullptr, 0) != UCS_OK)
    refusePeer(Ctx, Peer, "it does not take the challenge");
}

/// Receiver: HELLO. Its MAC first, then its offer; then WELCOME.
static void answerHello(CoreContext *Ctx, tc_peer *Peer, const WireupContext::PendingMessage &M) {
  if (Peer->Wireup->AuthState != PeerWireup::Auth::Challenged || M.Header.size() != sizeof(Offer))
    return refusePeer(Ctx, Peer, "a HELLO out of place");
  Offer O;
  std::memcpy(&O, M.Header.data(), sizeof O);
  uint8_t Mac[MacSize];
  offerMac(Ctx, HelloLabel, sizeof HelloLabel, Peer, O, M.Body.data(), M.Body.size(), Mac);
  if (!equalMacs(Mac, O.Mac)) {
    countHeld(Ctx, &tc_stats_t::auth_failures);
    return refusePeer(Ctx, Peer,
                      "authentication failed: it does not hold this job's key" +
                          std::string(Ctx->Key.present() ? " (" + Ctx->Key.Source + ")"
                                                         : " (this side has none)"),
                      TC_ERR_AUTH);
  }
  Peer->Wireup->AuthState = PeerWireup::Auth::Authenticated;
  noteConnectionToItself(Ctx, Peer);
  // Places for authenticated peers are theirs alone (a connection still
  // authenticating took one of max_startups instead).
  size_t Peers = 0;
  for (auto &P : Ctx->Accepted)
    Peers += P->Welcomed && !P->Failed;
  if (Peers >= Ctx->MaxPeers) {
    countHeld(Ctx, &tc_stats_t::connections_refused);
    return refusePeer(Ctx, Peer,
                      std::to_string(Peers) + " peers are connected, the context's limit "
                                              "(max_peers)",
                      TC_ERR_TOO_MANY_PEERS);
  }
  ParsedOffer Hello;
  std::string Why;
  if (parseOffer(M.Header.data(), M.Header.size(), M.Body.data(), M.Body.size(), Hello, Why) !=
      TC_OK) {
    countHeld(Ctx, &tc_stats_t::offers_refused);
    return refusePeer(Ctx, Peer, "its offer is out of bounds: " + Why);
  }
  // Agreement: a package both sides have must have the same rieds (its
  // interface): they hold state both sides' jams share. Builds that differ
  // in jams only connect; the sender deploys its build (code/Deploy.cpp).
  for (size_t I = 0; I < Hello.Packages.size(); ++I) {
    const auto &[Name, Identity] = Hello.Packages[I];
    for (const tc_package *P : Ctx->Package->Packages)
      if (P->Name == Name && P->Identity != Identity && P->Interface != Hello.Interfaces[I])
        return refusePeer(Ctx, Peer,
                          "package '" + Name + "' differs: this receiver has identity " +
                              P->Identity + ", the sender " + Identity +
                              " (and their rieds differ: a build that changes only jams "
                              "may be deployed, not one that changes rieds)",
                          TC_ERR_PACKAGE_MISMATCH, Name + " " + P->Identity);
  }
  std::vector<uint64_t> Held;
  for (size_t I = 0; I < Hello.Packages.size(); ++I)
    if (Hello.Receives[I])
      Held.push_back(identityTag(Hello.Packages[I].second));
  takeOfferedPackages(Peer, std::move(Held));
  // A rank of this side's job proves it is that rank (its proof meant for
  // this rank, or for whoever it reached); then the job layer says whether
  // this connection is the one the pair keeps.
  setJobRank(Peer, Ctx->Wireup->Job.Id && Hello.Header.Job == Ctx->Wireup->Job.Id
                       ? Hello.Header.JobRank
                       : NoJobRank);
  if (Peer->JobRank != NoJobRank) {
    std::string ProofWhy;
    uint32_t For = Hello.Header.ProofFor;
    if (For != NoJobRank && For != Ctx->Wireup->Job.Rank) {
      countHeld(Ctx, &tc_stats_t::auth_failures);
      return refusePeer(Ctx, Peer,
                        "its proof of rank " + std::to_string(Peer->JobRank) +
                            " is meant for rank " + std::to_string(For) + ", not this one (" +
                            std::to_string(Ctx->Wireup->Job.Rank) + ")",
                        TC_ERR_AUTH);
    }
    if (!rankProved(Ctx, HelloProofLabel, sizeof HelloProofLabel, Peer, Hello.Header, For,
                    ProofWhy)) {
      countHeld(Ctx, &tc_stats_t::auth_failures);
      return refusePeer(Ctx, Peer, "it " + ProofWhy, TC_ERR_AUTH);
    }
    // Charged and refused as its rank from now on, not as its address,
    // which the job's other ranks on its node share.
    identifyPeer(Peer, PeerIdentity::ofRank(Peer->JobRank));
  }
  // A reconnect does not reset its quarantine (its address's, or its
  // rank's).
  if (uint64_t Until = addressRefusedUntil(Ctx, Peer->Identity)) {
    countHeld(Ctx, &tc_stats_t::peers_quarantined);
    return refusePeer(Ctx, Peer,
                      (Peer->Identity.Family == PeerIdentity::FamilyJobRank ? "its rank"
                                                                             : "its address") +
                          std::string(" is quarantined for ") +
                          std::to_string((Until - std::min(Until, nowNs())) / NsPerMs) +
                          " ms more (its abandoned frames took more than their budget)",
                      TC_ERR_QUARANTINED);
  }
  if (Peer->JobRank != NoJobRank && Ctx->Wireup->DecideRankHello) {
    std::string JobWhy;
    if (int Verdict = Ctx->Wireup->DecideRankHello(Ctx, Peer, JobWhy); Verdict != 0)
      return refusePeer(Ctx, Peer, JobWhy, Verdict);
  }
  setFramePath(Peer, rmaReaches(Ctx, Peer, Hello) ? PathRma : PathAm);
  Offer W;
  std::vector<uint8_t> Body;
  // A sender already gone has unmapped what its keys name, and UCX 1.13
  // crashes unpacking a key of a removed SysV segment: never for a peer
  // known to have failed (this narrows that window; it cannot close it).
  if (Peer->Failed)
    return;
  tc_status_t St = setupLocalSide(Ctx, Peer);
  if (St == TC_OK)
    St = acceptOffer(Ctx, Peer, Hello, Why);
  if (St != TC_OK) {
    countHeld(Ctx, &tc_stats_t::offers_refused);
    return refusePeer(Ctx, Peer, "cannot take its offer: " + Why);
  }
  if ((St = makeOffer(Ctx, Peer, W, Body)) != TC_OK)
    return refusePeer(Ctx, Peer, "cannot describe this side's ring");
  // A rank proves its rank to the connecting side too: meant for the rank
  // the HELLO proved (or for whoever connected, outside the job).
  if (W.Job && !proveRank(Ctx, WelcomeProofLabel, sizeof WelcomeProofLabel, Peer, Peer->JobRank, W))
    return refusePeer(Ctx, Peer, "cannot sign this rank's proof (libcrypto failed)", TC_ERR_IO);
  offerMac(Ctx, WelcomeLabel, sizeof WelcomeLabel, Peer, W, Body.data(), Body.size(), W.Mac);
  if (sendMessage(Ctx, Peer, AmWelcome, &W, sizeof W, Body.data(), Body.size()) != UCS_OK)
    return refusePeer(Ctx, Peer, "it does not take the welcome");
  countHeld(Ctx, &tc_stats_t::peers);
  welcomePeer(Ctx, Peer);
}

/// Sender: a connect that failed, logged once where it is found (a
/// crossing, or nothing answering while tc_connect may try again, is not).
static tc_status_t connectFailed(tc_peer *Peer, tc_status_t St, const std::string &Why) {
  if (Peer->Wireup->Crossed || Peer->Wireup->Unreachable)
    return St;
  // A connect in the background that broke is tried again (job/Route.cpp),
  // which says so if it gives up: a race that recovers (the other side
  // closed a crossing connect first) is no error of the user's.
  std::string Line =
      "connecting to " + Peer->Name.substr(Peer->Name.find(' ') + 1) + " failed: " + Why;
  if (Peer->Wireup->Background && St == TC_ERR_IO)
    logDebug(Line + " (tried again)");
  else
    logError(Line);
  return St;
}

/// Sender: the handshake has ended, with St.
static void endConnect(CoreContext *Ctx, tc_peer *Peer, tc_status_t St) {
  Peer->Wireup->ConnectState = PeerWireup::Connect::Done;
  Peer->Wireup->ConnectResult = St;
  if (St != TC_OK)
    return;
  welcomePeer(Ctx, Peer);
  // A job's receiver sends nothing on the connection until this side has
  // taken its welcome: before, what it sent would come before the welcome
  // this side takes on its control turn (job/Route.cpp). (To itself, this
  // side is both.)
  if (Peer->Wireup->ExpectJobRank != NoJobRank &&
      Peer->Wireup->ExpectJobRank != Ctx->Wireup->Job.Rank) {
    uint32_t Ready = ReadyMagic;
    sendMessage(Ctx, Peer, AmReady, &Ready, sizeof Ready, nullptr, 0);
  }
}

/// Sender, step 2: HELLO, with this side's offer if the receiver proved the
/// key; without one otherwise, so that the receiver learns that this side's
/// key differs (and the connect fails with TC_ERR_AUTH). Not waited for.
static tc_status_t sendHello(CoreContext *Ctx, tc_peer *Peer, bool Proved) {
  Offer O = {};
  std::vector<uint8_t> Body;
  if (Proved) {
    setFramePath(Peer, Ctx->DataWorker ? PathRma : PathAm); // what this side can do
    if (setupLocalSide(Ctx, Peer) != TC_OK || makeOffer(Ctx, Peer, O, Body) != TC_OK)
      return connectFailed(Peer, TC_ERR_NO_MEMORY, "cannot set up this side's ring");
    // A rank's HELLO proves its rank, for the rank whose address this is
    // (none: an address the application named).
    if (O.Job && !proveRank(Ctx, HelloProofLabel, sizeof HelloProofLabel, Peer,
                            Peer->Wireup->ExpectJobRank, O))
      return connectFailed(Peer, TC_ERR_IO, "cannot sign this rank's proof (libcrypto failed)");
  } else {
    O.Magic = HandshakeMagic;
    O.Version = HandshakeVersion;
  }
  offerMac(Ctx, HelloLabel, sizeof HelloLabel, Peer, O, Body.data(), Body.size(), O.Mac);
  ucs_status_t St = sendMessage(Ctx, Peer, AmHello, &O, sizeof O, Body.data(), Body.size());
  if (!Proved) {
    countHeld(Ctx, &tc_stats_t::auth_failures);
    return connectFailed(Peer, TC_ERR_AUTH,
                         "the receiver does not prove it holds this job's key" +
                             std::string(Ctx->Key.present() ? " (" + Ctx->Key.Source + ")"
                                                            : " (this side has none)"));
  }
  if (St != UCS_OK)
    return connectFailed(Peer, TC_ERR_IO, ucs_status_string(St));
  return TC_OK;
}

/// Sender, step 1's answer: the receiver's CHALLENGE, whose proof says
/// whether it holds the key; then HELLO.
static tc_status_t takeChallenge(CoreContext *Ctx, tc_peer *Peer,
                                 const WireupContext::PendingMessage &M) {
  AuthChallenge C;
  bool Proved = false;
  if (M.Header.size() == sizeof C && M.Body.empty()) {
    std::memcpy(&C, M.Header.data(), sizeof C);
    std::memcpy(Peer->Wireup->ServerNonce, C.ServerNonce, NonceSize);
    uint8_t Expected[MacSize];
    serverProof(Ctx, Peer, Expected);
    Proved = C.Magic == ChallengeMagic && C.Version == HandshakeVersion &&
             equalMacs(Expected, C.Proof);
  }
  return sendHello(Ctx, Peer, Proved);
}

/// Sender: the receiver refused the handshake (REFUSED): why, as it says
/// (only the statuses a refusal may carry), and the package that differs.
static tc_status_t takeRefusal(CoreContext *Ctx, tc_peer *Peer,
                               const WireupContext::PendingMessage &M) {
  Refusal R = {RefusalMagic, TC_ERR_IO};
  if (M.Header.size() == sizeof R)
    std::memcpy(&R, M.Header.data(), sizeof R);
  if (R.Magic != RefusalMagic)
    R.Status = TC_ERR_IO;
  // Kept the other way: only a receiver of this side's job says so, and
  // only once the handshake has authenticated it (after HELLO).
  if (R.Status == RefusalCrossed && Peer->Wireup->ExpectJobRank != NoJobRank &&
      Peer->Wireup->ConnectState == PeerWireup::Connect::HelloSent) {
    Peer->Wireup->Crossed = true;
    return TC_ERR_IO;
  }
  tc_status_t Why = R.Status == TC_ERR_AUTH || R.Status == TC_ERR_BAD_OFFER ||
                            R.Status == TC_ERR_TOO_MANY_PEERS ||
                            R.Status == TC_ERR_PACKAGE_MISMATCH || R.Status == TC_ERR_QUARANTINED
                        ? tc_status_t(R.Status)
                        : TC_ERR_IO;
  if (Why == TC_ERR_AUTH)
    countHeld(Ctx, &tc_stats_t::auth_failures);
  if (Why == TC_ERR_PACKAGE_MISMATCH) {
    // "<package> <identity>": shown only if it is exactly that.
    std::string Detail(M.Body.begin(), M.Body.end());
    size_t Space = Detail.find(' ');
    std::string Name = Space == std::string::npos ? "" : Detail.substr(0, Space);
    std::string Theirs = Space == std::string::npos ? "" : Detail.substr(Space + 1);
    for (const tc_package *P : Ctx->Package->Packages)
      if (P->Name == Name && twochains::format::isValidName(Name) &&
          Theirs.size() == PackageIdentitySize &&
          Theirs.find_first_not_of("0123456789abcdef") == std::string::npos)
        return connectFailed(Peer, Why,
                             "package '" + Name + "' differs: this sender has identity " +
                                 P->Identity + ", the receiver " + Theirs +
                                 " (build both from the same sources)");
  }
  return connectFailed(Peer, Why,
                       std::string("the receiver refused it: ") + statusString(Why) +
                           " (its log says more)");
}

/// Sender, step 2's answer: the WELCOME: its MAC first, then its offer,
/// which this side takes.
static tc_status_t takeWelcome(CoreContext *Ctx, tc_peer *Peer,
                               const WireupContext::PendingMessage &M) {
  Offer W;
  if (M.Header.size() != sizeof W)
    return connectFailed(Peer, TC_ERR_BAD_OFFER,
                         "a welcome of " + std::to_string(M.Header.size()) + " bytes");
  std::memcpy(&W, M.Header.data(), sizeof W);
  uint8_t Mac[MacSize];
  offerMac(Ctx, WelcomeLabel, sizeof WelcomeLabel, Peer, W, M.Body.data(), M.Body.size(), Mac);
  if (!equalMacs(Mac, W.Mac)) {
    countHeld(Ctx, &tc_stats_t::auth_failures);
    return connectFailed(Peer, TC_ERR_AUTH, "the welcome does not carry the job's MAC");
  }
  ParsedOffer Welcome;
  std::string Why;
  if (parseOffer(M.Header.data(), M.Header.size(), M.Body.data(), M.Body.size(), Welcome, Why) !=
      TC_OK) {
    countHeld(Ctx, &tc_stats_t::offers_refused);
    return connectFailed(Peer, TC_ERR_BAD_OFFER, "its welcome is out of bounds: " + Why);
  }
  noteConnectionToItself(Ctx, Peer);
  if (Welcome.Header.Path == PathRma && Peer->Path != PathRma)
    return connectFailed(Peer, TC_ERR_BAD_OFFER,
                         "the receiver chose RMA, which this side did not offer");
  // A job's connection reaches the rank the job's addresses name, of the
  // same job, or none.
  uint32_t Rank = Welcome.Header.Job ? Welcome.Header.JobRank : NoJobRank;
  if (Peer->Wireup->ExpectJobRank != NoJobRank &&
      (Welcome.Header.Job != Ctx->Wireup->Job.Id || Rank != Peer->Wireup->ExpectJobRank))
    return connectFailed(
        Peer, TC_ERR_BAD_OFFER,
        "it is not rank " + std::to_string(Peer->Wireup->ExpectJobRank) + " of this job (it says " +
            (Welcome.Header.Job != Ctx->Wireup->Job.Id ? std::string("another job")
                                                       : "rank " + std::to_string(Rank)) +
            ")");
  setJobRank(Peer,
             Ctx->Wireup->Job.Id && Welcome.Header.Job == Ctx->Wireup->Job.Id ? Rank : NoJobRank);
  // ... and proves it, to this rank.
  if (std::string ProofWhy; Peer->JobRank != NoJobRank &&
                            !rankProved(Ctx, WelcomeProofLabel, sizeof WelcomeProofLabel, Peer,
                                        Welcome.Header, Ctx->Wireup->Job.Rank, ProofWhy)) {
    countHeld(Ctx, &tc_stats_t::auth_failures);
    return connectFailed(Peer, TC_ERR_AUTH, "the receiver " + ProofWhy);
  }
  if (Peer->JobRank != NoJobRank)
    identifyPeer(Peer, PeerIdentity::ofRank(Peer->JobRank));
  // The receiver may decline the RMA this side offered (its worker cannot
  // reach this one: another host without RDMA): frames then come by
  // message into the ring already mapped, and credits by message, into a
  // line of this side's own rather than the RMA-mapped one nobody writes.
  if (Peer->Path == PathRma && Welcome.Header.Path == PathAm) {
    if (!useOwnCreditLine(Peer))
      return connectFailed(Peer, TC_ERR_NO_MEMORY, "cannot allocate a credit line");
  }
  setFramePath(Peer, FramePath(Welcome.Header.Path));
  std::vector<uint64_t> Held;
  for (size_t I = 0; I < Welcome.Packages.size(); ++I)
    if (Welcome.Receives[I])
      Held.push_back(identityTag(Welcome.Packages[I].second));
  takeOfferedPackages(Peer, std::move(Held));
  if (tc_status_t S = acceptOffer(Ctx, Peer, Welcome, Why); S != TC_OK)
    return connectFailed(Peer, S, Why);
  // The receiver mapped this side's memory file before it welcomed it.
  closeMailboxFile(Peer);
  return TC_OK;
}

/// Sender: a message the receiver sent this connect, taken in the order
/// of the handshake; anything out of it ends the connect.
static void takeClientMessage(CoreContext *Ctx, tc_peer *Peer,
                              const WireupContext::PendingMessage &M) {
  using C = PeerWireup::Connect;
  if (Peer->Wireup->ConnectState != C::AuthSent && Peer->Wireup->ConnectState != C::HelloSent)
    return;
  if (M.Id == AmRefused)
    return endConnect(Ctx, Peer,
                      Peer->Wireup->ConnectState == C::AuthSent
                          ? connectFailed(Peer, TC_ERR_IO, "the receiver refused the handshake")
                          : takeRefusal(Ctx, Peer, M));
  if (Peer->Wireup->ConnectState == C::AuthSent && M.Id == AmChallenge) {
    if (tc_status_t St = takeChallenge(Ctx, Peer, M); St != TC_OK)
      return endConnect(Ctx, Peer, St);
    Peer->Wireup->ConnectState = C::HelloSent;
    return;
  }
  if (Peer->Wireup->ConnectState == C::HelloSent && M.Id == AmWelcome)
    return endConnect(Ctx, Peer, takeWelcome(Ctx, Peer, M));
  endConnect(Ctx, Peer,
             connectFailed(Peer, TC_ERR_BAD_OFFER, "a handshake message out of its order"));
}

/// Housekeeping: answers the AUTH and HELLO messages that arrived since the
/// last turn, and takes the receivers' answers to this side's connects.
static void processHandshakes(CoreContext *Ctx) {
  if (Ctx->Wireup->Handshakes.empty())
    return;
  auto Messages = std::move(Ctx->Wireup->Handshakes);
  Ctx->Wireup->Handshakes.clear();
  for (WireupContext::PendingMessage &M : Messages) {
    tc_peer *Peer = peerOfEndpoint(Ctx, M.Ep);
    // A connect in progress takes these (onHandshake let no others in).
    if (M.Id != AmAuth && M.Id != AmHello) {
      if (Peer &&
          std::find(Ctx->Connecting.begin(), Ctx->Connecting.end(), Peer) != Ctx->Connecting.end())
        takeClientMessage(Ctx, Peer, M);
      continue;
    }
    if (!Peer || Peer->Wireup->AuthState == PeerWireup::Auth::Refused || Peer->Welcomed)
      continue;
    if (M.Id == AmAuth)
      answerAuth(Ctx, Peer, M);
    else
      answerHello(Ctx, Peer, M);
  }
}

tc_status_t twochains::rt::startClientHandshake(CoreContext *Ctx, tc_peer *Peer,
                                                uint64_t DeadlineNs) {
  Peer->Wireup->ConnectDeadlineNs = DeadlineNs;
  AuthRequest R = {AuthMagic, HandshakeVersion, {}, 0, {}};
  if (!randomNonce(Peer->Wireup->ClientNonce)) {
    endConnect(Ctx, Peer,
               connectFailed(Peer, TC_ERR_IO, "this host gives no random bytes for a nonce"));
    return TC_ERR_IO;
  }
  std::memcpy(R.ClientNonce, Peer->Wireup->ClientNonce, NonceSize);
  if (Ctx->Key.present()) {
    R.SentNs = wallNs();
    clientProof(Ctx, R, R.Proof);
  }
  Peer->Wireup->ConnectState = PeerWireup::Connect::AuthSent;
  if (ucs_status_t St = sendMessage(Ctx, Peer, AmAuth, &R, sizeof R, nullptr, 0); St != UCS_OK) {
    Peer->Wireup->Unreachable = Peer->Wireup->RetryIfUnreachable;
    endConnect(Ctx, Peer, connectFailed(Peer, TC_ERR_IO, ucs_status_string(St)));
    return TC_ERR_IO;
  }
  return TC_OK;
}

bool twochains::rt::checkClientHandshake(CoreContext *Ctx, tc_peer *Peer, uint64_t Now) {
  using C = PeerWireup::Connect;
  if (Peer->Wireup->ConnectState == C::Done)
    return true;
  bool Late = Now > Peer->Wireup->ConnectDeadlineNs;
  if (!Peer->Failed && !Late)
    return false;
  // Nothing answered: a refused connection, or an AUTH unanswered at the
  // deadline. tc_connect tries again, and logs if it gives up.
  if (Peer->Wireup->ConnectState == C::AuthSent && Peer->Wireup->RetryIfUnreachable)
    Peer->Wireup->Unreachable = true;
  endConnect(Ctx, Peer,
             connectFailed(
                 Peer, TC_ERR_IO,
                 Peer->Wireup->ConnectState == C::AuthSent
                     ? (Peer->Failed ? "the connection was refused or broke"
                                     : "no answer before the timeout")
                     : (Peer->Failed ? "the connection broke" : "no welcome before the timeout")));
  return true;
}

tc_status_t twochains::rt::clientHandshake(CoreContext *Ctx, tc_peer *Peer, uint64_t DeadlineNs) {
  if (startClientHandshake(Ctx, Peer, DeadlineNs) != TC_OK)
    return Peer->Wireup->ConnectResult;
  // Answers this side's handshakes with others too, and takes their
  // welcomes: two processes connecting to each other both finish.
  for (unsigned Polls = 0;; ++Polls) {
    progressControl(Ctx);
    processHandshakes(Ctx);
    if (checkClientHandshake(Ctx, Peer, (Polls & 63) == 0 || Peer->Failed ? nowNs() : 0))
      return Peer->Wireup->ConnectResult;
  }
}

void twochains::rt::welcomePeer(CoreContext *Ctx, tc_peer *Peer) {
  markWelcomed(Peer, Ctx->Channels && Peer->Path == PathRma);
  if (Peer->Path == PathAm) {
    countHeld(Ctx, &tc_stats_t::peers_am);
    ++Ctx->AmPeers;
  } else {
    countRmaPeer(Ctx, Peer);
  }
  Ctx->Wireup->PeerWelcomed.notify(Ctx, Peer);
}

ucs_status_t twochains::rt::setupHandshake(CoreContext *Ctx) {
  // Without one (libcrypto failed) the context still connects; it cannot
  // join a job (job/Job.cpp says so).
  if (!Ctx->Wireup->Job.RankKey.generate())
    logDebug("no rank key: libcrypto could not make an Ed25519 key pair");
  addHousekeeping(Ctx, processHandshakes);
  return setControlHandlers(Ctx, {{AmAuth, &onMessage<AmAuth>},
                                  {AmChallenge, &onMessage<AmChallenge>},
                                  {AmHello, &onMessage<AmHello>},
                                  {AmWelcome, &onMessage<AmWelcome>},
                                  {AmRefused, &onMessage<AmRefused>}});
}
