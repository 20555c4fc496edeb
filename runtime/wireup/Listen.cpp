//===- Listen.cpp - Listening, and who may start a connection here --------===//
//
// A connection that comes is accepted at once (UCX's listener), and takes
// one of the startup places until it authenticates (Handshake.cpp): at
// most MaxStartups in all and MaxStartupsPerAddress from one address that
// has not proved the key. Where they are taken, the oldest of the address,
// or of the most crowded one, gives way: a flood turns over its own places.
// Beyond loopback a context listens only with a key, or insecure when
// asked (docs/security.md).
//
//===----------------------------------------------------------------------===//
#include "wireup/Wireup.h"

#include "base/Interfaces.h"
#include "base/Log.h"
#include "control/ControlWorker.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Peers.h"
#include "core/Polled.h"
#include "core/Stats.h"
#include "ucx/Status.h"
#include "ucx/UcxAsyncGuard.h"

#include <arpa/inet.h>
#include <cstring>
#include <map>
#include <netdb.h>

using namespace twochains::rt;

static bool isLoopback(const char *Address) {
  // Names resolve later; only what certainly stays on this host counts.
  if (!Address || !*Address)
    return false;
  if (!std::strcmp(Address, "localhost"))
    return true;
  unsigned A, B, C, D;
  char Tail;
  return std::sscanf(Address, "%u.%u.%u.%u%c", &A, &B, &C, &D, &Tail) == 4 && A == 127 &&
         B < 256 && C < 256 && D < 256;
}

bool twochains::rt::listenAllowed(CoreContext *Ctx, const char *Address) {
  if (Ctx->Key.present() || (Ctx->Flags & TC_CONTEXT_INSECURE) || isLoopback(Address))
    return true;
  logError(std::string("refused to listen on ") + (Address && *Address ? Address : "*") +
           ": beyond loopback, a context needs a key (TC_KEY_FILE, TC_KEY or the key "
           "parameters), or TC_CONTEXT_INSECURE to let anyone who reaches the port run "
           "code here");
  return false;
}

void twochains::rt::onEndpointError(void *Arg, ucp_ep_h, ucs_status_t) {
  // A peer that vanishes only fails its own connection; the receiver keeps
  // serving the others.
  auto *Peer = static_cast<tc_peer *>(Arg);
  // Only a peer that was connected: a connect that is still trying is not
  // an event (tc_connect says how it ended).
  if (!Peer->Failed && Peer->Welcomed)
    postEvent(Peer->Ctx, TC_EVENT_PEER_GONE, Peer->Number, TC_ERR_IO);
  failPeer(Peer);
}

/// The host part of a client's address (IPv4 or IPv6), and its port.
static std::string hostOf(const sockaddr_storage &SA, unsigned &Port) {
  char Host[INET6_ADDRSTRLEN] = "?";
  Port = 0;
  if (SA.ss_family == AF_INET) {
    auto *In = reinterpret_cast<const sockaddr_in *>(&SA);
    inet_ntop(AF_INET, &In->sin_addr, Host, sizeof Host);
    Port = ntohs(In->sin_port);
  } else if (SA.ss_family == AF_INET6) {
    auto *In = reinterpret_cast<const sockaddr_in6 *>(&SA);
    inet_ntop(AF_INET6, &In->sin6_addr, Host, sizeof Host);
    Port = ntohs(In->sin6_port);
  }
  return Host;
}

namespace {
/// The startups at the moment a connection comes: in all, from its address
/// that have not proved the key (and the oldest of those), and from the
/// address that holds the most (and its oldest).
struct StartupCount {
  size_t Total = 0, FromAddress = 0, MostCrowded = 0;
  tc_peer *AddressOldest = nullptr, *CrowdedOldest = nullptr;
};
} // namespace

static bool isOlder(const tc_peer *P, const tc_peer *Than) {
  return !Than || P->Wireup->AcceptedNs < Than->Wireup->AcceptedNs;
}

static StartupCount countStartups(CoreContext *Ctx, const std::string &Address) {
  StartupCount C;
  std::map<std::string, std::pair<size_t, tc_peer *>> ByAddress;
  for (auto &Up : Ctx->Accepted) {
    tc_peer *P = Up.get();
    if (!isStartup(P))
      continue;
    ++C.Total;
    auto &[N, Oldest] = ByAddress[P->Address];
    ++N;
    if (isOlder(P, Oldest))
      Oldest = P;
    if (P->Address == Address && !P->Wireup->KeyProvedAtAuth) {
      ++C.FromAddress;
      if (isOlder(P, C.AddressOldest))
        C.AddressOldest = P;
    }
  }
  for (auto &[Where, Held] : ByAddress)
    if (Held.first > C.MostCrowded) {
      C.MostCrowded = Held.first;
      C.CrowdedOldest = Held.second;
    }
  return C;
}

/// Closes a startup to make room for a newer connection (counted as
/// refused, logged within the budget); reaping releases it at the next
/// control turn.
static void evictStartup(CoreContext *Ctx, tc_peer *Oldest, const std::string &Why) {
  failPeer(Oldest);
  Oldest->Wireup->AuthState = PeerWireup::Auth::Refused;
  countHeld(Ctx, &tc_stats_t::connections_refused);
  logLimited(Ctx->Wireup->RefusedConnectionLog, TC_LOG_ERROR,
             "closed " + Oldest->Name + ", still authenticating, for a connection from " + Why);
}

/// Why a connection from Address cannot have a startup place ("" if it
/// can). An address at its limit of connections that have not proved the
/// key gives up its oldest of those: a flood from an address (which anyone
/// there can make) turns over its own places, and a peer there that
/// proves the key in its AUTH is out of their reach before they can take
/// its place. With every place taken, one from an address that holds
/// fewer than the most crowded one takes that address's oldest: a flood
/// from a few addresses does not lock out the others.
static std::string startupRefusal(CoreContext *Ctx, const std::string &Address) {
  StartupCount C = countStartups(Ctx, Address);
  if (C.FromAddress >= Ctx->Wireup->MaxStartupsPerAddress) {
    evictStartup(Ctx, C.AddressOldest,
                 Address + ": " + std::to_string(C.FromAddress) + " connections from " + Address +
                     " have not proved the key, the limit per address "
                     "(max_startups_per_address)");
    return "";
  }
  if (C.Total < Ctx->Wireup->MaxStartups)
    return "";
  if (C.MostCrowded > C.FromAddress + 1) {
    evictStartup(Ctx, C.CrowdedOldest,
                 Address +
                     ": every place for connections not yet authenticated "
                     "(max_startups) was taken, the most by its address");
    return "";
  }
  return std::to_string(C.Total) +
         " connections are still authenticating, the context's limit (max_startups)";
}

/// A connection from Address (From names it with its port): a peer, failed
/// from the start if no startup place is free (Refusal says why).
static std::unique_ptr<tc_peer> admitConnection(CoreContext *Ctx, const std::string &Address,
                                                const std::string &From, std::string &Refusal) {
  Refusal = startupRefusal(Ctx, Address);
  auto Peer = newPeer(Ctx);
  setPeerAddress(Peer.get(), Address);
  Peer->Wireup->AcceptedNs = nowNs();
  if (Refusal.empty()) {
    renamePeer(Peer.get(),
               "peer " + std::to_string(numberPeer(Ctx, Peer.get())) + " (" + From + ")");
  } else {
    renamePeer(Peer.get(), "the connection from " + From);
    failPeer(Peer.get());
    Peer->Wireup->AuthState = PeerWireup::Auth::Refused;
  }
  return Peer;
}

/// The admitted peer, its endpoint set, joins the accepted ones.
static tc_peer *takeConnection(CoreContext *Ctx, std::unique_ptr<tc_peer> Peer,
                               const std::string &From, const std::string &Refusal) {
  if (!Refusal.empty()) {
    countHeld(Ctx, &tc_stats_t::connections_refused);
    logLimited(Ctx->Wireup->RefusedConnectionLog, TC_LOG_ERROR,
               "refused a connection from " + From + ": " + Refusal);
  }
  startPolling(Ctx, Peer.get());
  Ctx->Accepted.push_back(std::move(Peer));
  return Ctx->Accepted.back().get();
}

/// A connection is always accepted, even one refused at once: UCX 1.13
/// aborts in its TCP connection manager when a connection it rejected
/// (ucp_listener_reject) is opened again and again (tcp_sockcm_ep.c:416,
/// an assertion on the endpoint's state; openucx/ucx#11235 is another
/// crash on that path). A refused one is a failed peer from the start:
/// reaping closes it at the next control turn, by force.
static void onConnectionRequest(ucp_conn_request_h Request, void *Arg) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  ucp_conn_request_attr_t A = {};
  A.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
  unsigned Port = 0;
  bool Known = ucp_conn_request_query(Request, &A) == UCS_OK;
  std::string Address = Known ? hostOf(A.client_address, Port) : "an unknown address";
  std::string From = Known ? Address + ":" + std::to_string(Port) : Address;
  std::string Refusal;
  auto Peer = admitConnection(Ctx, Address, From, Refusal);
  if (Known)
    identifyPeer(Peer.get(), PeerIdentity::of(A.client_address));
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  P.conn_request = Request;
  P.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  P.err_handler.cb = onEndpointError;
  P.err_handler.arg = Peer.get();
  ucp_ep_h Ep = nullptr;
  ucs_status_t St = ucp_ep_create(Ctx->Worker, &P, &Ep);
  setControlEndpoint(Peer.get(), Ep);
  if (St != UCS_OK) {
    logLimited(Ctx->Wireup->RefusedConnectionLog, TC_LOG_ERROR,
               "cannot accept a connection from " + From);
    return;
  }
  takeConnection(Ctx, std::move(Peer), From, Refusal);
}

tc_peer *twochains::rt::acceptOnEndpoint(CoreContext *Ctx, ucp_ep_h Ep, const sockaddr_in &SA,
                                         const std::string &From) {
  char Text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &SA.sin_addr, Text, sizeof Text);
  std::string Refusal;
  auto Peer = admitConnection(Ctx, Text, From, Refusal);
  identifyPeer(Peer.get(), PeerIdentity::of(SA));
  setControlEndpoint(Peer.get(), Ep);
  return takeConnection(Ctx, std::move(Peer), From, Refusal);
}

bool twochains::rt::resolve(const char *Address, uint16_t Port, sockaddr_in &Out) {
  std::memset(&Out, 0, sizeof Out);
  Out.sin_family = AF_INET;
  Out.sin_port = htons(Port);
  if (!Address || !*Address) {
    Out.sin_addr.s_addr = htonl(INADDR_ANY);
    return true;
  }
  if (inet_pton(AF_INET, Address, &Out.sin_addr) == 1)
    return true;
  addrinfo Hints = {}, *Res = nullptr;
  Hints.ai_family = AF_INET;
  if (getaddrinfo(Address, nullptr, &Hints, &Res) != 0 || !Res)
    return false;
  Out.sin_addr = reinterpret_cast<sockaddr_in *>(Res->ai_addr)->sin_addr;
  freeaddrinfo(Res);
  return true;
}

extern "C" tc_status_t tc_listen(tc_context_t *Api, const char *Address, uint16_t Port) {
  auto *Ctx = coreOf(Api);
  sockaddr_in SA;
  if (!Ctx || Ctx->Wireup->Listener || !resolve(Address, Port, SA))
    return TC_ERR_INVALID_PARAM;
  if (!listenAllowed(Ctx, Address))
    return TC_ERR_INSECURE;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  std::string Where = std::string(Address ? Address : "*") + ":" + std::to_string(Port);
  // TCP on the interface that holds the address; on every one for any (an
  // address no interface holds fails to listen below).
  bool Any = SA.sin_addr.s_addr == htonl(INADDR_ANY);
  std::string Interface = Any ? std::string() : interfaceHolding(SA.sin_addr);
  if (Any || !Interface.empty())
    if (tc_status_t U = useTcpInterface(Ctx, Interface, "listen on " + Where); U != TC_OK)
      return U;
  ucp_listener_params_t L = {};
  L.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  L.sockaddr.addr = reinterpret_cast<sockaddr *>(&SA);
  L.sockaddr.addrlen = sizeof SA;
  L.conn_handler.cb = onConnectionRequest;
  L.conn_handler.arg = Ctx;
  ucs_status_t St;
  {
    ClaimedHandlers Claim(Ctx->EmbeddedWorker ? nullptr : Ctx->Worker);
    St = ucp_listener_create(Ctx->Worker, &L, &Ctx->Wireup->Listener);
  }
  if (St != UCS_OK) {
    logError(std::string("cannot listen on ") + (Address ? Address : "*") + ":" +
             std::to_string(Port) + ": " + ucs_status_string(St));
    return statusOfUcs(St);
  }
  // Port 0 asks for any free port: read back the one it got.
  ucp_listener_attr_t A = {};
  A.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  if (ucp_listener_query(Ctx->Wireup->Listener, &A) == UCS_OK && A.sockaddr.ss_family == AF_INET)
    Ctx->Wireup->ListenPort = ntohs(reinterpret_cast<const sockaddr_in *>(&A.sockaddr)->sin_port);
  else
    Ctx->Wireup->ListenPort = Port;
  Ctx->Wireup->ListenAddress = SA.sin_addr.s_addr;
  return TC_OK;
}
