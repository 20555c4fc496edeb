//===- Wireup.h - Listening, connecting, the handshake, releasing ---------===//
#ifndef TWOCHAINS_RUNTIME_WIREUP_WIREUP_H
#define TWOCHAINS_RUNTIME_WIREUP_WIREUP_H

#include "wireup/WireupContext.h"
#include "wireup/PeerWireup.h"

#include <netinet/in.h>
#include <string>
#include <vector>

namespace twochains::rt {

/// Registers the handshake's handlers and the housekeeping of wire-up
/// (answering handshakes, reaping peers).
ucs_status_t setupWireup(CoreContext *Ctx);

/// Registers the handshake's handlers and its housekeeping (Handshake.cpp).
ucs_status_t setupHandshake(CoreContext *Ctx);
/// Sender: authenticates and exchanges offers on Peer->Ep, until Deadline,
/// answering other peers' handshakes meanwhile.
tc_status_t clientHandshake(CoreContext *Ctx, tc_peer *Peer, uint64_t DeadlineNs);
/// Sender, in the background: sends AUTH; the rest of the handshake is
/// taken as the receiver's messages arrive (housekeeping). TC_OK if it
/// started (else it has ended: ConnectResult).
tc_status_t startClientHandshake(CoreContext *Ctx, tc_peer *Peer, uint64_t DeadlineNs);
/// Ends a handshake whose endpoint failed or whose deadline passed (Now 0:
/// the clock was not read). True once it has ended (ConnectResult).
bool checkClientHandshake(CoreContext *Ctx, tc_peer *Peer, uint64_t Now);
/// A connect in the background to SA (Where names it in messages): the
/// peer, in Connecting until its handshake ends, when ConnectEnded is
/// called and the job layer takes it; null if not even that could start.
tc_peer *startConnect(CoreContext *Ctx, const sockaddr_in &SA, const std::string &Where,
                      uint32_t ExpectJobRank, uint64_t DeadlineNs);
/// The same on an endpoint made already (connectToControlWorker): the
/// peer owns it from now on, closing it when released; SA and Where name
/// the receiver, a rank of this host, whose ring and credit line are
/// offered as memory of this host (path/Mailbox.h, shareMemoryWith).
tc_peer *startConnectOn(CoreContext *Ctx, ucp_ep_h Ep, const sockaddr_in &SA,
                        const std::string &Where, uint32_t ExpectJobRank, uint64_t DeadlineNs);
/// An endpoint to a control worker from its UCX address, failures to
/// OnError(Arg); null if UCX made none (logged as information: the caller
/// has another way, the port). A job's ranks connect so
/// (job/RankEndpoints.cpp): no connection manager, one connection a pair.
ucp_ep_h connectToControlWorker(CoreContext *Ctx, const std::vector<uint8_t> &Address,
                                ucp_err_handler_cb_t OnError, void *Arg);
/// Receiver: a connection whose first message came on Ep, an endpoint of
/// this side's (made by connectToControlWorker): a peer in Accepted, its
/// handshake to come, as for a connection request from SA (its startup
/// counted against the same limits: failed at once, and logged, if none
/// is free).
tc_peer *acceptOnEndpoint(CoreContext *Ctx, ucp_ep_h Ep, const sockaddr_in &SA,
                          const std::string &From);
/// A peer whose handshake has ended well: counted, its path's way of
/// sending set up, ready for frames.
void welcomePeer(CoreContext *Ctx, tc_peer *Peer);

/// A connection still authenticating: it holds one of the startup places,
/// none of the peers'.
inline bool isStartup(const tc_peer *P) {
  return !P->Welcomed && !P->Failed && P->Wireup->AuthState != PeerWireup::Auth::Authenticated;
}
/// UCX's error callback of a peer's control endpoint (Listen.cpp): the
/// peer fails, and the application hears of a connected one going.
void onEndpointError(void *Arg, ucp_ep_h Ep, ucs_status_t Status);
/// An IPv4 address (numeric or a name) and port; NULL or "" is every
/// interface.
bool resolve(const char *Address, uint16_t Port, sockaddr_in &Out);
/// Whether this context may listen on Address (a key, or loopback, or
/// TC_CONTEXT_INSECURE); logs why not.
bool listenAllowed(CoreContext *Ctx, const char *Address);
/// tc_connect's loop, trying again (if Retry) while nothing answers, until
/// RetryUntil (0: Deadline); a handshake that has begun has until Deadline.
tc_status_t connectUntil(CoreContext *Ctx, const sockaddr_in &SA, const std::string &Where,
                         uint64_t Deadline, bool LogUnreachable, tc_peer **Out, bool Retry = true,
                         uint64_t RetryUntil = 0);
/// The offer describing Peer's side (MAC not set), made from each layer's
/// part; and the other side's checked offer, taken by each part
/// (Offer.cpp).
tc_status_t makeOffer(CoreContext *Ctx, tc_peer *Peer, Offer &Header, std::vector<uint8_t> &Body);
tc_status_t acceptOffer(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &O, std::string &Why);
/// Releases everything a peer holds, in both directions.
void releasePeer(CoreContext *Ctx, tc_peer *Peer);
/// tc_peer_close's work: a connected peer released and deleted.
void closePeer(CoreContext *Ctx, tc_peer *Peer);

} // namespace twochains::rt

#endif
