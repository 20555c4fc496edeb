//===- Handshake.cpp - Authentication, then offers ------------------------===//
//
// Four active messages on the endpoint that UCX's sockaddr connection
// establishment created (Auth.h has the MACs):
//
//   sender   -> receiver  AUTH       Nc
//   receiver -> sender    CHALLENGE  Ns, proof that it holds the key
//   sender   -> receiver  HELLO      MAC, offer: its ring, credit line
//   receiver -> sender    WELCOME    MAC, offer: the same for its side
//
// Nothing of an offer is parsed before its MAC is checked; a sender that
// finds the receiver's proof wrong still sends a HELLO, with no offer, so
// that the receiver sees, counts and logs the failure too. UCX callbacks
// only queue what arrived (bounded); it is answered off the callback.
//
//===----------------------------------------------------------------------===//
#include "wireup/Wireup.h"

#include "base/Log.h"
#include "base/Timeouts.h"
#include "base/StatusString.h"
#include "control/ControlMessage.h"
#include "core/Stats.h"
#include "receive/Quarantine.h"
#include "send/Context.h"
#include "ucx/Request.h"
#include "wire/Formats.h"
#include "wireup/Mailbox.h"

#include <algorithm>
#include <cstring>

using namespace twochains::rt;

static const char ServerLabel[] = "tc-auth-v1 server";
static const char HelloLabel[] = "tc-auth-v1 hello";
static const char WelcomeLabel[] = "tc-auth-v1 welcome";

/// Handshake messages queued at once, from every endpoint together: a flood
/// of them costs a bounded amount of memory until the next control turn.
static constexpr size_t MaxPendingHandshakes = 256;
/// Answers are sent without waiting (sendMessage with no deadline): a peer
/// that does not take our messages holds up nobody.

static void offerMac(const WireupContext *Ctx, const char *Label, size_t LabelSize,
                     const tc_peer *Peer, const Offer &O, const uint8_t *Body, size_t BodySize,
                     uint8_t Out[MacSize]) {
  const auto *Fields = reinterpret_cast<const uint8_t *>(&O) + MacSize;
  hmacSha256(Ctx->Key,
             {{Label, LabelSize},
              {Peer->ClientNonce, NonceSize},
              {Peer->ServerNonce, NonceSize},
              {Fields, sizeof O - MacSize},
              {Body, BodySize}},
             Out);
}

static void serverProof(const WireupContext *Ctx, const tc_peer *Peer, uint8_t Out[MacSize]) {
  hmacSha256(Ctx->Key,
             {{ServerLabel, sizeof ServerLabel},
              {Peer->ClientNonce, NonceSize},
              {Peer->ServerNonce, NonceSize}},
             Out);
}

/// Receiver: ends a handshake that failed. The sender is told the status;
/// reaping closes the endpoint once that message has left (or after
/// RefusedCloseTimeoutNs). Nothing here waits: a refusal, which anyone who
/// reaches the port can cause, costs no time of the peers being served.
static void refusePeer(WireupContext *Ctx, tc_peer *Peer, const std::string &Why,
                       tc_status_t Status = TC_ERR_BAD_OFFER, const std::string &Detail = "") {
  Peer->AuthState = tc_peer::Auth::Refused;
  Peer->Failed = true;
  logLimited(Ctx->RefusedConnectionLog, TC_LOG_ERROR, "refused " + Peer->Name + ": " + Why);
  if (Peer->Ep && !Peer->RefusalFlush) {
    Refusal R = {RefusalMagic, Status};
    sendMessage(Ctx, Peer, AmRefused, &R, sizeof R, Detail.data(), Detail.size(), 0);
    ucp_request_param_t P = {};
    ucs_status_ptr_t Flush = ucp_ep_flush_nbx(Peer->Ep, &P);
    Peer->RefusalFlush = UCS_PTR_IS_PTR(Flush) ? Flush : nullptr;
    Peer->RefusedNs = nowNs();
  }
}

static ucs_status_t onHandshake(WireupContext *Ctx, unsigned Id, const void *Header,
                                size_t HeaderLength, void *Data, size_t Length,
                                const ucp_am_recv_param_t *Param) {
  tc_peer *Peer = senderOf(Ctx, Param);
  if (Peer && Peer->AuthState == tc_peer::Auth::Refused) {
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
      Ctx->Handshakes.size() >= MaxPendingHandshakes) {
    refuseMessage(Ctx, Peer,
                  "a handshake message out of place or out of bounds (" +
                      std::to_string(HeaderLength) + " + " + std::to_string(Length) + " bytes)",
                  Param);
    return UCS_OK;
  }
  WireupContext::PendingMessage M;
  M.Id = Id;
  M.Ep = Param->reply_ep;
  auto *H = static_cast<const uint8_t *>(Header);
  auto *D = static_cast<const uint8_t *>(Data);
  M.Header.assign(H, H + HeaderLength);
  M.Body.assign(D, D + Length);
  Ctx->Handshakes.push_back(std::move(M));
  return UCS_OK;
}

template <unsigned Id>
static ucs_status_t onMessage(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                              size_t Length, const ucp_am_recv_param_t *Param) {
  return onHandshake(static_cast<WireupContext *>(Arg), Id, Header, HeaderLength, Data, Length,
                     Param);
}

/// Receiver: AUTH. Answers with a fresh nonce and the proof of the key.
static void answerAuth(WireupContext *Ctx, tc_peer *Peer, const WireupContext::PendingMessage &M) {
  AuthRequest R;
  if (Peer->AuthState != tc_peer::Auth::None || M.Header.size() != sizeof R || !M.Body.empty())
    return refusePeer(Ctx, Peer, "a handshake that does not start with AUTH");
  std::memcpy(&R, M.Header.data(), sizeof R);
  if (R.Magic != AuthMagic || R.Version != HandshakeVersion)
    return refusePeer(Ctx, Peer, "not a Two-Chains handshake of version " +
                                     std::to_string(HandshakeVersion) + " (it sent version " +
                                     std::to_string(R.Version) + ")");
  std::memcpy(Peer->ClientNonce, R.ClientNonce, NonceSize);
  AuthChallenge C = {ChallengeMagic, HandshakeVersion, {}, {}};
  if (!randomNonce(Peer->ServerNonce))
    return refusePeer(Ctx, Peer, "this host gives no random bytes for a nonce");
  std::memcpy(C.ServerNonce, Peer->ServerNonce, NonceSize);
  serverProof(Ctx, Peer, C.Proof);
  Peer->AuthState = tc_peer::Auth::Challenged;
  if (sendMessage(Ctx, Peer, AmChallenge, &C, sizeof C, nullptr, 0, 0) != UCS_OK)
    refusePeer(Ctx, Peer, "it does not take the challenge");
}

/// Receiver: HELLO. Its MAC first, then its offer; then WELCOME.
static void answerHello(WireupContext *Ctx, tc_peer *Peer, const WireupContext::PendingMessage &M) {
  if (Peer->AuthState != tc_peer::Auth::Challenged || M.Header.size() != sizeof(Offer))
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
  Peer->AuthState = tc_peer::Auth::Authenticated;
  // A reconnect does not reset its address's quarantine.
  if (uint64_t Until = addressRefusedUntil(Ctx, Peer->Identity)) {
    countHeld(Ctx, &tc_stats_t::peers_quarantined);
    return refusePeer(Ctx, Peer,
                      "its address is quarantined for " +
                          std::to_string((Until - std::min(Until, nowNs())) / NsPerMs) +
                          " ms more (its abandoned frames took more than their budget)",
                      TC_ERR_QUARANTINED);
  }
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
  // Agreement: a package both sides have must be the same build, or every
  // frame of it would be dropped as unknown.
  for (const auto &[Name, Identity] : Hello.Packages)
    for (const tc_package *P : Ctx->Packages)
      if (P->Name == Name && P->Identity != Identity)
        return refusePeer(Ctx, Peer,
                          "package '" + Name + "' differs: this receiver has identity " +
                              P->Identity + ", the sender " + Identity,
                          TC_ERR_PACKAGE_MISMATCH, Name + " " + P->Identity);
  Peer->Path = rmaReaches(Ctx, Peer, Hello) ? PathRma : PathAm;
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
  offerMac(Ctx, WelcomeLabel, sizeof WelcomeLabel, Peer, W, Body.data(), Body.size(), W.Mac);
  if (sendMessage(Ctx, Peer, AmWelcome, &W, sizeof W, Body.data(), Body.size(), 0) != UCS_OK)
    return refusePeer(Ctx, Peer, "it does not take the welcome");
  countHeld(Ctx, &tc_stats_t::peers);
  welcomePeer(Ctx, Peer);
}

/// Housekeeping (receiver): answers the AUTH and HELLO messages that
/// arrived since the last turn.
static void processHandshakes(CoreContext *Core) {
  auto *Ctx = static_cast<WireupContext *>(Core);
  if (Ctx->Handshakes.empty())
    return;
  std::vector<WireupContext::PendingMessage> Client;
  auto Messages = std::move(Ctx->Handshakes);
  Ctx->Handshakes.clear();
  for (WireupContext::PendingMessage &M : Messages) {
    // A connect in progress takes these (onHandshake let no others in).
    if (M.Id != AmAuth && M.Id != AmHello) {
      Client.push_back(std::move(M));
      continue;
    }
    tc_peer *Peer = peerOfEndpoint(Ctx, M.Ep);
    if (!Peer || Peer->AuthState == tc_peer::Auth::Refused || Peer->Welcomed)
      continue;
    if (M.Id == AmAuth)
      answerAuth(Ctx, Peer, M);
    else
      answerHello(Ctx, Peer, M);
  }
  for (auto &M : Client)
    Ctx->Handshakes.push_back(std::move(M));
}

/// Sender: waits for the receiver's next message of kind Id, or its
/// refusal (Out.Id says which).
static bool awaitMessage(WireupContext *Ctx, tc_peer *Peer, unsigned Id, uint64_t DeadlineNs,
                         WireupContext::PendingMessage &Out) {
  return awaitAnswer(Ctx, Peer, DeadlineNs, [&] {
    for (size_t I = 0; I < Ctx->Handshakes.size(); ++I)
      if (Ctx->Handshakes[I].Ep == Peer->Ep &&
          (Ctx->Handshakes[I].Id == Id || Ctx->Handshakes[I].Id == AmRefused)) {
        Out = std::move(Ctx->Handshakes[I]);
        Ctx->Handshakes.erase(Ctx->Handshakes.begin() + I);
        return true;
      }
    return false;
  });
}

/// Sender: a connect that failed, logged once where it is found.
static tc_status_t connectFailed(tc_peer *Peer, tc_status_t St, const std::string &Why) {
  logError("connecting to " + Peer->Name.substr(Peer->Name.find(' ') + 1) + " failed: " + Why);
  return St;
}

/// Sender, step 1: AUTH, then the receiver's CHALLENGE; Proved says whether
/// it proved it holds the key. TC_ERR_IO with Peer->Unreachable: nothing
/// answered (tc_connect tries again, and logs if it gives up).
static tc_status_t exchangeChallenge(WireupContext *Ctx, tc_peer *Peer, uint64_t DeadlineNs,
                                     bool &Proved) {
  AuthRequest R = {AuthMagic, HandshakeVersion, {}};
  if (!randomNonce(Peer->ClientNonce))
    return connectFailed(Peer, TC_ERR_IO, "this host gives no random bytes for a nonce");
  std::memcpy(R.ClientNonce, Peer->ClientNonce, NonceSize);
  ucs_status_t St = sendMessage(Ctx, Peer, AmAuth, &R, sizeof R, nullptr, 0, DeadlineNs);
  WireupContext::PendingMessage M;
  bool Answered = St == UCS_OK && awaitMessage(Ctx, Peer, AmChallenge, DeadlineNs, M);
  // Nothing listening shows as a refused connection, or, when the last
  // attempt starts just before the deadline, as an AUTH that had not left
  // by then: either way nothing answered.
  if (!Answered && Peer->RetryIfUnreachable &&
      (Peer->Failed || St == UCS_ERR_UNREACHABLE || St == UCS_ERR_NOT_CONNECTED ||
       St == UCS_ERR_CONNECTION_RESET || St == UCS_ERR_REJECTED || St == UCS_ERR_TIMED_OUT)) {
    Peer->Unreachable = true;
    return TC_ERR_IO;
  }
  if (!Answered || M.Id == AmRefused)
    return connectFailed(Peer, TC_ERR_IO,
                         St != UCS_OK        ? std::string(ucs_status_string(St))
                         : Peer->Failed      ? "the connection was refused or broke"
                         : M.Id == AmRefused ? "the receiver refused the handshake"
                                             : "no answer before the timeout");
  AuthChallenge C;
  Proved = false;
  if (M.Header.size() == sizeof C && M.Body.empty()) {
    std::memcpy(&C, M.Header.data(), sizeof C);
    std::memcpy(Peer->ServerNonce, C.ServerNonce, NonceSize);
    uint8_t Expected[MacSize];
    serverProof(Ctx, Peer, Expected);
    Proved = C.Magic == ChallengeMagic && C.Version == HandshakeVersion &&
             equalMacs(Expected, C.Proof);
  }
  return TC_OK;
}

/// Sender, step 2: HELLO, with this side's offer if the receiver proved the
/// key; without one otherwise, so that the receiver learns that this side's
/// key differs (and the connect fails with TC_ERR_AUTH).
static tc_status_t sendHello(WireupContext *Ctx, tc_peer *Peer, uint64_t DeadlineNs,
                             bool Proved) {
  Offer O = {};
  std::vector<uint8_t> Body;
  if (Proved) {
    Peer->Path = Ctx->DataWorker ? PathRma : PathAm; // what this side can do
    if (setupLocalSide(Ctx, Peer) != TC_OK || makeOffer(Ctx, Peer, O, Body) != TC_OK)
      return connectFailed(Peer, TC_ERR_NO_MEMORY, "cannot set up this side's ring");
  } else {
    O.Magic = HandshakeMagic;
    O.Version = HandshakeVersion;
  }
  offerMac(Ctx, HelloLabel, sizeof HelloLabel, Peer, O, Body.data(), Body.size(), O.Mac);
  ucs_status_t St =
      sendMessage(Ctx, Peer, AmHello, &O, sizeof O, Body.data(), Body.size(), DeadlineNs);
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

/// Sender: the receiver refused the handshake (REFUSED): why, as it says
/// (only the statuses a refusal may carry), and the package that differs.
static tc_status_t takeRefusal(WireupContext *Ctx, tc_peer *Peer,
                               const WireupContext::PendingMessage &M) {
  Refusal R = {RefusalMagic, TC_ERR_IO};
  if (M.Header.size() == sizeof R)
    std::memcpy(&R, M.Header.data(), sizeof R);
  if (R.Magic != RefusalMagic)
    R.Status = TC_ERR_IO;
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
    for (const tc_package *P : Ctx->Packages)
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

/// Sender, step 3: the WELCOME (or a refusal): its MAC first, then its
/// offer, which this side takes.
static tc_status_t takeWelcome(WireupContext *Ctx, tc_peer *Peer, uint64_t DeadlineNs) {
  WireupContext::PendingMessage M;
  if (!awaitMessage(Ctx, Peer, AmWelcome, DeadlineNs, M))
    return connectFailed(Peer, TC_ERR_IO,
                         Peer->Failed ? "the connection broke" : "no welcome before the timeout");
  if (M.Id == AmRefused)
    return takeRefusal(Ctx, Peer, M);
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
  if (Welcome.Header.Path == PathRma && Peer->Path != PathRma)
    return connectFailed(Peer, TC_ERR_BAD_OFFER,
                         "the receiver chose RMA, which this side did not offer");
  Peer->Path = FramePath(Welcome.Header.Path);
  if (tc_status_t S = acceptOffer(Ctx, Peer, Welcome, Why); S != TC_OK)
    return connectFailed(Peer, S, Why);
  return TC_OK;
}

tc_status_t twochains::rt::clientHandshake(WireupContext *Ctx, tc_peer *Peer,
                                           uint64_t DeadlineNs) {
  bool Proved = false;
  tc_status_t St;
  if ((St = exchangeChallenge(Ctx, Peer, DeadlineNs, Proved)) != TC_OK ||
      (St = sendHello(Ctx, Peer, DeadlineNs, Proved)) != TC_OK ||
      (St = takeWelcome(Ctx, Peer, DeadlineNs)) != TC_OK)
    return St;
  welcomePeer(Ctx, Peer);
  return TC_OK;
}

void twochains::rt::welcomePeer(WireupContext *Ctx, tc_peer *Peer) {
  Peer->Channelled = Ctx->Channels && Peer->Path == PathRma;
  Peer->Welcomed = true;
  if (Peer->Path == PathAm) {
    countHeld(Ctx, &tc_stats_t::peers_am);
    ++Ctx->AmPeers;
  } else {
    countRmaPeer(Ctx, Peer);
  }
}

ucs_status_t twochains::rt::setupHandshake(WireupContext *Ctx) {
  addHousekeeping(Ctx, processHandshakes);
  return setControlHandlers(Ctx, {{AmAuth, &onMessage<AmAuth>},
                                  {AmChallenge, &onMessage<AmChallenge>},
                                  {AmHello, &onMessage<AmHello>},
                                  {AmWelcome, &onMessage<AmWelcome>},
                                  {AmRefused, &onMessage<AmRefused>}});
}
