//===- Connection.cpp - Connecting, closing, reaping ----------------------===//
//
// Connections use UCX's sockaddr connection establishment on the control
// worker (Listen.cpp takes the ones that come); the handshake on top of it
// (Handshake.cpp) authenticates both sides before either parses the
// other's offer.
//
//===----------------------------------------------------------------------===//
#include "wireup/Wireup.h"
#include "send/Bundle.h"
#include "send/PayloadAhead.h"

#include "base/Interfaces.h"
#include "base/Log.h"
#include "base/Timeouts.h"
#include "containment/PeerMappings.h"
#include "control/ControlMessage.h"
#include "control/ControlWorker.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Peers.h"
#include "core/Polled.h"
#include "core/Stats.h"
#include "receive/PayloadAhead.h"
#include "receive/Receive.h"
#include "path/FramePath.h"
#include "path/Mailbox.h"
#include "ucx/Request.h"
#include "ucx/Status.h"
#include "ucx/UcxAsyncGuard.h"
#include "path/Mailbox.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <thread>
#include <arpa/inet.h>
#include <cstring>
#include <sys/mman.h>

using namespace twochains::rt;

/// A live peer's last words: a corked peer's waiting frames leave (nothing
/// sent is lost on close), and frames finished since the last report are
/// reported, so that the sender's tc_flush ends rather than seeing the peer
/// close first.
static void sayLastWords(tc_peer *Peer) {
  if (!Peer->Welcomed || Peer->Failed)
    return;
  if (Peer->Ep)
    flushFrameBatch(Peer);
  sealOpenBundle(Peer);
  finishBundleAtClose(Peer->Ctx, Peer);
  reportLastCredits(Peer);
}

/// The control endpoint, its last messages (credits, answers by message)
/// flushed first: a forced close drops what UCX still holds for the socket.
static void closeControlEndpoint(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->Ep && !Peer->Failed) {
    ucp_request_param_t P = {};
    waitRequestUntil(Ctx->Worker, ucp_ep_flush_nbx(Peer->Ep, &P),
                     nowNs() + ReleaseFlushTimeoutNs);
  }
  closeEndpointByForce(Ctx->Worker, Peer->Ep);
  setControlEndpoint(Peer, nullptr);
  controlTurnedByWait(Ctx);
  releaseKeptSends(Peer); // no send on the endpoint reads them any more
}

/// The peer's endpoint is no longer the peer's: messages that come on it
/// from now on are nobody's, and its handshake messages still queued
/// for the control turn (Handshake.cpp) are dropped. UCX may give the next
/// endpoint the same address, and they would be taken for that one's: a
/// stale CHALLENGE fails a new connect's proof (TC_ERR_AUTH), a stale
/// HELLO is out of place. Under load, with handshakes dropped for time and
/// tried again, ranks of a job failed so.
static void forgetPeerEndpoint(CoreContext *Ctx, tc_peer *Peer) {
  if (!Peer->Ep)
    return;
  auto Stale = [&](const WireupContext::PendingMessage &M) { return M.Ep == Peer->Ep; };
  Ctx->Wireup->Handshakes.erase(
      std::remove_if(Ctx->Wireup->Handshakes.begin(), Ctx->Wireup->Handshakes.end(), Stale),
      Ctx->Wireup->Handshakes.end());
  forgetEndpoint(Ctx, Peer->Ep);
}

/// The control layer's cut-off (cutOffPeer): the peer fails now, and its
/// control endpoint closes by force, which ends what UCX still does on it
/// (a receive waiting for its bytes completes as cancelled). Its other
/// resources go when it is released, as a failed peer's: reaped here, or
/// closed by the application.
static void cutOff(CoreContext *Ctx, tc_peer *Peer) {
  if (!Peer->Failed && Peer->Welcomed)
    postEvent(Ctx, TC_EVENT_PEER_GONE, Peer->Number, TC_ERR_IO);
  failPeer(Peer);
  forgetPeerEndpoint(Ctx, Peer);
  closeEndpointByForce(Ctx->Worker, Peer->Ep);
  setControlEndpoint(Peer, nullptr);
  releaseKeptSends(Peer); // no send on the endpoint reads them any more
}

void twochains::rt::releasePeer(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->Wireup->RefusalFlush) { // released by UCX as the endpoint closes
    ucp_request_free(Peer->Wireup->RefusalFlush);
    Peer->Wireup->RefusalFlush = nullptr;
  }
  // No longer found by its endpoint, which the flushes below still
  // progress: what the peer says meanwhile is its last word, not a stranger's.
  forgetPeerEndpoint(Ctx, Peer);
  Ctx->Wireup->PeerReleased.notify(Ctx, Peer);
  forgetPayloadsAhead(Ctx, Peer);
  sayLastWords(Peer);
  finishPayloadsAhead(Peer);
  bool GaveUp = endRequestsInFlight(Peer);
  detachRemoteSide(Ctx, Peer);
  closeDataEndpoint(Ctx, Peer, GaveUp);
  closeControlEndpoint(Ctx, Peer);
  releaseLocalSide(Ctx, Peer);
  if (Peer->Welcomed && Peer->Path == PathAm && Ctx->AmPeers)
    --Ctx->AmPeers;
  markReleased(Peer);
}

namespace twochains::rt {


/// A peer that shrank its segment under this side's accesses (now private
/// pages here, containment/PeerMappings.h) has failed.
static void failShrunkPeer(tc_peer *P) {
  if (P->Failed || (!peerMappingBroken(P->Tx->RingGuard) && !peerMappingBroken(P->Rx->CreditGuard)))
    return;
  failPeer(P);
  logError(P->Name + " shrank its shared memory under this side's stores: it is ended");
}

/// What a released peer keeps of its buffers: nothing a call on a gone
/// peer reads (each returns TC_ERR_IO first).
static void shedBuffers(tc_peer *P) {
  shedSendSide(P);
  shedPathBuffers(P);
}

/// Accepted[I], released, leaves the list: freed, or kept in Gone if the
/// application holds its handle (tc_context_peer).
static void retireAccepted(CoreContext *Ctx, size_t I) {
  if (Ctx->Accepted[I]->HandedOut) {
    shedBuffers(Ctx->Accepted[I].get());
    Ctx->Gone.push_back(std::move(Ctx->Accepted[I]));
  }
  Ctx->Accepted.erase(Ctx->Accepted.begin() + I);
}

/// Housekeeping (receiver): releases peers that failed, closed, were
/// refused or never finished their handshake, once no frame of theirs is
/// left to run. (And ends peers on either side that shrank their memory.)
static void reapPeers(CoreContext *Ctx) {
  for (tc_peer *P : Ctx->Connected)
    failShrunkPeer(P);
  for (auto &P : Ctx->Accepted)
    failShrunkPeer(P.get());
  uint64_t Now = nowNs();
  for (size_t I = 0; I < Ctx->Accepted.size();) {
    tc_peer *P = Ctx->Accepted[I].get();
    // A peer an application thread is using (its channel) waits a turn.
    std::unique_lock<std::recursive_mutex> Channel(P->Channel, std::defer_lock);
    if (P->Channelled && !Channel.try_lock()) {
      ++I;
      continue;
    }
    // A refused handshake's REFUSED message leaves first (bounded).
    if (P->Wireup->RefusalFlush) {
      if (ucp_request_check_status(P->Wireup->RefusalFlush) == UCS_INPROGRESS &&
          Now - P->Wireup->RefusedNs < RefusedCloseTimeoutNs) {
        ++I;
        continue;
      }
      ucp_request_free(P->Wireup->RefusalFlush);
      P->Wireup->RefusalFlush = nullptr;
    }
    if (isStartup(P) && Now - P->Wireup->AcceptedNs > Ctx->Wireup->HandshakeTimeoutNs) {
      // Failed: closed by force, nothing of it waited for.
      failPeer(P);
      P->Wireup->AuthState = PeerWireup::Auth::Refused;
      countHeld(Ctx, &tc_stats_t::handshakes_timed_out);
      logLimited(Ctx->Wireup->RefusedConnectionLog, TC_LOG_ERROR,
                 "dropped " + P->Name + ": no handshake within " +
                     std::to_string(Ctx->Wireup->HandshakeTimeoutNs / NsPerMs) +
                     " ms (handshake_timeout_ms)");
    }
    // A peer that went away may have left complete frames behind: they run
    // first (nothing sent is lost), then the peer is released.
    bool Drained = !P->Rx->Ring || !P->Rx->Receive || !P->Welcomed ||
                   !frameTrailerShows(
                       ringSlot(P->Rx->Ring, Ctx->SlotSize, P->Rx->Receive->expectedSlot()),
                       Ctx->SlotSize, P->Rx->Receive->expected());
    // One whose last frame never completes (it died mid-write) is given
    // up on after a while, its frame with it.
    if (P->Failed && !Drained && !P->Wireup->FailedSeenNs)
      P->Wireup->FailedSeenNs = Now;
    bool GivenUp = P->Failed && !Drained && Now - P->Wireup->FailedSeenNs > IncompleteFrameGiveUpNs;
    if (GivenUp)
      logError("released " + P->Name + ", gone with an incomplete frame in its ring");
    if ((P->Failed && Drained) || GivenUp) {
      releasePeer(Ctx, P);
      if (Channel.owns_lock())
        Channel.unlock();
      retireAccepted(Ctx, I);
      continue;
    }
    ++I;
  }
}

} // namespace twochains::rt

/// A sender's end of a connection to SA, before its endpoint.
static std::unique_ptr<tc_peer> newClient(CoreContext *Ctx, const sockaddr_in &SA,
                                          const std::string &Where, bool Retry) {
  auto Peer = newPeer(Ctx);
  numberPeer(Ctx, Peer.get());
  renamePeer(Peer.get(), "receiver " + Where);
  identifyPeer(Peer.get(), PeerIdentity::of(SA));
  Peer->Wireup->RetryIfUnreachable = Retry;
  return Peer;
}

/// A sender's end of a connection to SA: its endpoint, TCP on the
/// interface the route leaves by. Null (Result says why, logged) if none.
static std::unique_ptr<tc_peer> openClient(CoreContext *Ctx, const sockaddr_in &SA,
                                           const std::string &Where, bool Retry,
                                           tc_status_t &Result) {
  auto Peer = newClient(Ctx, SA, Where, Retry);
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                 UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  P.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  P.sockaddr.addr = reinterpret_cast<const sockaddr *>(&SA);
  P.sockaddr.addrlen = sizeof SA;
  P.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  P.err_handler.cb = onEndpointError;
  P.err_handler.arg = Peer.get();
  // TCP on the interface the route leaves by (none: unreachable below).
  std::string Interface = interfaceTowards(SA);
  if (tc_status_t U = Interface.empty() ? TC_OK
                                        : useTcpInterface(Ctx, Interface, "connect to " + Where);
      U != TC_OK) {
    Result = U;
    return nullptr;
  }
  ucp_ep_h Ep = nullptr;
  ucs_status_t St;
  {
    ClaimedHandlers Claim(Ctx->EmbeddedWorker ? nullptr : Ctx->Worker);
    St = ucp_ep_create(Ctx->Worker, &P, &Ep);
  }
  setControlEndpoint(Peer.get(), Ep);
  if (St != UCS_OK) {
    logError("cannot connect to " + Where + ": " + ucs_status_string(St));
    Result = TC_ERR_IO;
    return nullptr;
  }
  return Peer;
}

ucp_ep_h twochains::rt::connectToControlWorker(CoreContext *Ctx,
                                               const std::vector<uint8_t> &Address,
                                               ucp_err_handler_cb_t OnError, void *Arg) {
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  P.address = reinterpret_cast<const ucp_address_t *>(Address.data());
  P.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  P.err_handler.cb = OnError;
  P.err_handler.arg = Arg;
  ucp_ep_h Ep = nullptr;
  ucs_status_t St;
  {
    ClaimedHandlers Claim(Ctx->EmbeddedWorker ? nullptr : Ctx->Worker);
    St = ucp_ep_create(Ctx->Worker, &P, &Ep);
  }
  if (St != UCS_OK) {
    logInfo(std::string("cannot connect to a control worker's address: ") + ucs_status_string(St));
    return nullptr;
  }
  return Ep;
}

/// One attempt: an endpoint and the handshake. Null if it failed; Unreachable
/// then says whether nothing answered (worth trying again).
static tc_peer *connectOnce(CoreContext *Ctx, const sockaddr_in &SA, const std::string &Where,
                            uint64_t Deadline, bool Retry, bool &Unreachable, tc_status_t &Result) {
  Unreachable = false;
  std::unique_ptr<tc_peer> Peer = openClient(Ctx, SA, Where, Retry, Result);
  if (!Peer)
    return nullptr;
  Ctx->Connecting.push_back(Peer.get());
  Result = clientHandshake(Ctx, Peer.get(), Deadline);
  Ctx->Connecting.erase(std::remove(Ctx->Connecting.begin(), Ctx->Connecting.end(), Peer.get()),
                        Ctx->Connecting.end());
  Unreachable = Peer->Wireup->Unreachable;
  if (Result != TC_OK) {
    releasePeer(Ctx, Peer.get());
    return nullptr;
  }
  Ctx->Connected.push_back(Peer.get());
  startPolling(Ctx, Peer.get());
  return Peer.release();
}

/// A connect in the background of Peer (its endpoint set), as startConnect.
static tc_peer *startBackground(CoreContext *Ctx, std::unique_ptr<tc_peer> Peer,
                                uint32_t ExpectJobRank, uint64_t DeadlineNs) {
  Peer->Wireup->Background = true;
  Peer->Wireup->ExpectJobRank = ExpectJobRank;
  Ctx->Connecting.push_back(Peer.get());
  // Ended at once (no nonce, the AUTH not sent): still ended by the
  // housekeeping below, like any other.
  startClientHandshake(Ctx, Peer.get(), DeadlineNs);
  return Peer.release();
}

tc_peer *twochains::rt::startConnect(CoreContext *Ctx, const sockaddr_in &SA,
                                     const std::string &Where, uint32_t ExpectJobRank,
                                     uint64_t DeadlineNs) {
  tc_status_t Result = TC_ERR_IO;
  std::unique_ptr<tc_peer> Peer = openClient(Ctx, SA, Where, /*Retry=*/true, Result);
  if (!Peer)
    return nullptr;
  return startBackground(Ctx, std::move(Peer), ExpectJobRank, DeadlineNs);
}

tc_peer *twochains::rt::startConnectOn(CoreContext *Ctx, ucp_ep_h Ep, const sockaddr_in &SA,
                                       const std::string &Where, uint32_t ExpectJobRank,
                                       uint64_t DeadlineNs) {
  std::unique_ptr<tc_peer> Peer = newClient(Ctx, SA, Where, /*Retry=*/true);
  setControlEndpoint(Peer.get(), Ep);
  // A worker address reaches ranks of this host only (job/RankEndpoints.cpp):
  // their rings are each other's memory, shared as files.
  shareMemoryWith(Peer.get());
  return startBackground(Ctx, std::move(Peer), ExpectJobRank, DeadlineNs);
}

/// Housekeeping: connects in the background whose handshake has ended (or
/// whose time is up) leave Connecting: welcomed ones are polled from then
/// on (Connected), failed ones are released; the job layer takes each.
static void advanceConnects(CoreContext *Ctx) {
  uint64_t Now = nowNs();
  for (size_t I = 0; I < Ctx->Connecting.size();) {
    tc_peer *P = Ctx->Connecting[I];
    if (!P->Wireup->Background || !checkClientHandshake(Ctx, P, Now)) {
      ++I;
      continue;
    }
    Ctx->Connecting.erase(Ctx->Connecting.begin() + I);
    if (P->Wireup->ConnectResult == TC_OK) {
      Ctx->Connected.push_back(P);
      startPolling(Ctx, P);
    } else
      releasePeer(Ctx, P);
    Ctx->Wireup->ConnectEnded.notify(Ctx, P);
  }
}

/// When the housekeeping above next has work on the clock: a connect in
/// the background at its deadline, a startup out of time, a refusal's
/// message given up on.
static uint64_t connectionsDue(CoreContext *Ctx) {
  uint64_t Due = NoDueTime;
  for (tc_peer *P : Ctx->Connecting)
    if (P->Wireup->Background && P->Wireup->ConnectState != PeerWireup::Connect::Done)
      Due = std::min(Due, P->Wireup->ConnectDeadlineNs + 1);
  for (auto &P : Ctx->Accepted) {
    if (P->Wireup->RefusalFlush)
      Due = std::min(Due, P->Wireup->RefusedNs + RefusedCloseTimeoutNs);
    if (isStartup(P.get()))
      Due = std::min(Due, P->Wireup->AcceptedNs + Ctx->Wireup->HandshakeTimeoutNs + 1);
  }
  return Due;
}

namespace twochains::rt {

/// Connects to SA, trying again while nothing listens there yet (processes
/// launched together race their receivers), until Deadline; logs once if
/// it gives up.
tc_status_t connectUntil(CoreContext *Ctx, const sockaddr_in &SA, const std::string &Where,
                         uint64_t Deadline, bool LogUnreachable, tc_peer **Out, bool Retry,
                         uint64_t RetryUntil) {
  // Attempts stop at RetryUntil; a handshake under way always has until
  // Deadline (cut short, it would leave the receiver a half-made peer).
  if (!RetryUntil || RetryUntil > Deadline)
    RetryUntil = Deadline;
  if (!Retry) {
    bool Unreachable = false;
    tc_status_t Result = TC_ERR_IO;
    std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
    tc_peer *Peer = connectOnce(Ctx, SA, Where, Deadline, false, Unreachable, Result);
    if (Peer)
      *Out = Peer;
    return Peer ? TC_OK : Result;
  }
  unsigned Attempts = 0;
  uint64_t Start = nowNs(), BackoffNs = ConnectBackoffFirstNs;
  for (;;) {
    ++Attempts;
    bool Unreachable = false;
    tc_status_t Result = TC_ERR_IO;
    bool MayRetry = nowNs() + BackoffNs < RetryUntil;
    std::unique_lock<std::recursive_mutex> Guard(Ctx->Lock);
    if (tc_peer *Peer = connectOnce(Ctx, SA, Where, Deadline, true, Unreachable, Result)) {
      *Out = Peer;
      return TC_OK;
    }
    Guard.unlock();
    if (!Unreachable)
      return Result; // refused, or failed after it answered: logged
    if (!MayRetry || nowNs() + BackoffNs >= RetryUntil) {
      if (LogUnreachable)
        logError("cannot connect to " + Where + ": nothing answered in " +
                 std::to_string((nowNs() - Start) / NsPerMs) + " ms (" +
                 std::to_string(Attempts) + " attempts)");
      return TC_ERR_IO;
    }
    // Not holding the lock: the executor and other threads go on.
    std::this_thread::sleep_for(std::chrono::nanoseconds(BackoffNs));
    BackoffNs = std::min<uint64_t>(BackoffNs * 2, ConnectBackoffMaxNs);
  }
}

} // namespace twochains::rt

extern "C" tc_status_t tc_connect(tc_context_t *Api, const char *Address, uint16_t Port,
                                  int TimeoutMs, tc_peer_t **Out) {
  auto *Ctx = coreOf(Api);
  sockaddr_in SA;
  if (!Ctx || !Out || !resolve(Address, Port, SA) || Port == 0)
    return TC_ERR_INVALID_PARAM;
  uint64_t Deadline = nowNs() + msToNs(uint64_t(TimeoutMs > 0 ? TimeoutMs : 0));
  std::string Where = std::string(Address ? Address : "") + ":" + std::to_string(Port);
  // A jam's onward connection (tc_jam_forward) runs on the executor, which
  // never waits on a peer: one attempt only.
  bool FromJam = ThreadRunningJamOf == Ctx;
  return connectUntil(Ctx, SA, Where, Deadline, true, Out, !FromJam);
}

void twochains::rt::closePeer(CoreContext *Ctx, tc_peer *Peer) {
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  // A handle the receiver was given (tc_context_peer) is the context's:
  // released now, kept until the context ends. From inside a jam (whose
  // frame may be this peer's, in its ring), only marked: reaping releases
  // it at the next control turn.
  for (size_t I = 0; I < Ctx->Accepted.size(); ++I)
    if (Ctx->Accepted[I].get() == Peer) {
      handOutPeer(Peer);
      if (ThreadRunningJamOf == Ctx) {
        failPeer(Peer);
        return;
      }
      releasePeer(Ctx, Peer);
      retireAccepted(Ctx, I);
      return;
    }
  for (auto &P : Ctx->Gone)
    if (P.get() == Peer)
      return; // released already
  Ctx->Connected.erase(std::remove(Ctx->Connected.begin(), Ctx->Connected.end(), Peer),
                       Ctx->Connected.end());
  releasePeer(Ctx, Peer);
  delete Peer;
}

extern "C" void tc_peer_close(tc_peer_t *Peer) {
  // A job's handles live as long as the context.
  if (!Peer || Peer->Proxy)
    return;
  closePeer(Peer->Ctx, Peer);
}

extern "C" tc_status_t tc_context_peer(tc_context_t *Api, unsigned Number, tc_peer_t **Out) {
  auto *Ctx = coreOf(Api);
  if (!Ctx || !Out)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  for (auto &P : Ctx->Accepted)
    if (P->Number == Number && P->Welcomed && !P->Failed) {
      handOutPeer(P.get());
      *Out = P.get();
      return TC_OK;
    }
  return TC_ERR_INVALID_PARAM;
}

ucs_status_t twochains::rt::setupWireup(CoreContext *Ctx) {
  if (ucs_status_t St = setupHandshake(Ctx); St != UCS_OK)
    return St;
  addHousekeeping(Ctx, advanceConnects);
  addHousekeeping(Ctx, reapPeers);
  addDueTime(Ctx, connectionsDue);
  Ctx->Control->CutOff.subscribe(cutOff);
  return UCS_OK;
}
