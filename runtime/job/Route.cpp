//===- Route.cpp - Handles whose connections are made on demand -----------===//
//
// A handle (a proxy tc_peer) names a rank of the job or, for tc_jam_forward,
// an address. Its connection is started at first use and made in the
// background (wireup's startConnect): frames sent meanwhile wait on the
// handle, bounded, and move to the connection, in order, once it is made.
// Nothing here waits on a peer: attempts that find nothing listening yet
// are tried again on the control turn, until the connect timeout.
//
// Two ranks connecting to each other at once: the receiving side of a HELLO
// from rank r keeps its own connect if its rank is lower, refusing the
// other as crossed (RefusalCrossed); the side whose connect was refused so
// uses the connection the other side made, which it accepts. Every pair
// ends with one connection, the lower rank's whenever both tried.
//
//===----------------------------------------------------------------------===//
#include "job/Job.h"
#include "job/PeerJob.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "base/StatusString.h"
#include "control/ControlMessage.h"
#include "core/Events.h"
#include "core/Peers.h"
#include "core/Polled.h"
#include "core/Stats.h"
#include "path/FramePath.h"
#include "path/Mailbox.h"
#include "send/Bundle.h"
#include "send/Send.h"
#include "wire/Frame.h"
#include "wireup/Wireup.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>

using namespace twochains::rt;

/// A refused-as-crossed connect waits this long for the other side's
/// connection before trying again (which is crossed again while that one
/// is being made, and taken if it never comes).
static constexpr uint64_t CrossedWaitNs = 500'000'000;
/// Tries again after nothing answered: from this, doubling, up to the max.
static constexpr uint64_t RetryFirstNs = 10'000'000, RetryMaxNs = 500'000'000;
/// A higher rank that asked a lower one to connect asks again after this
/// long without a connection (until the connect timeout).
static constexpr uint64_t KnockAgainNs = 1'000'000'000;
/// One attempt's handshake, at most.
static constexpr uint64_t AttemptTimeoutNs = 10'000'000'000ull;
/// Connects a side has in flight at once; the others wait their turn, in
/// the order they were first wanted. Every rank of a job wanting every
/// other at once (an all-to-all) would otherwise open P - 1 handshakes
/// per process, P (P - 1) at once in all: with more ranks than cores each
/// handshake then waits for processes that are not running, past the
/// listeners' handshake timeout and startup limits, and the retries feed
/// the storm (64 ranks on 2 cores: none passed). A rank that connects to
/// this one meanwhile makes this side's own connect unnecessary.
static constexpr unsigned MaxAttemptsAtOnce = 8;

static std::string addressText(uint32_t Address, uint16_t Port) {
  char Text[INET_ADDRSTRLEN] = "?";
  in_addr A;
  A.s_addr = Address;
  inet_ntop(AF_INET, &A, Text, sizeof Text);
  return std::string(Text) + ":" + std::to_string(Port);
}

static std::string targetName(const RouteTarget &T) {
  std::string Where = T.Addresses.empty() ? std::string("?") : addressText(T.Addresses[0], T.Port);
  return T.Rank != NoJobRank ? "rank " + std::to_string(T.Rank) + " (" + Where + ")" : Where;
}

static void makeHandle(CoreContext *Ctx, RouteTarget &T) {
  if (T.Handle)
    return;
  T.Handle = newPeer(Ctx);
  tc_peer *H = T.Handle.get();
  makeProxy(H);
  numberPeer(Ctx, H);
  setJobRank(H, T.Rank);
  renamePeer(H, targetName(T));
  // Its frames are checked against this side's slots until the receiver's
  // are known: a job's ranks share their parameters.
  assumeSlotSize(H, Ctx->SlotSize);
}

/// The target of a connect this layer started, or of a handle.
static RouteTarget *targetOf(CoreContext *Ctx, const tc_peer *Handle) {
  if (!Handle)
    return nullptr;
  if (Handle->JobRank != NoJobRank && Handle->JobRank < Ctx->Job->Ranks.size() &&
      Ctx->Job->Ranks[Handle->JobRank].Handle.get() == Handle)
    return &Ctx->Job->Ranks[Handle->JobRank];
  for (auto &[Key, T] : Ctx->Job->AddressRoutes)
    if (T.Handle.get() == Handle)
      return &T;
  return nullptr;
}

/// Frames waiting on a handle that will never be connected: dropped, told.
static void dropQueued(tc_peer *Handle, tc_status_t Why) {
  size_t Dropped = dropQueuedFrames(Handle);
  if (Dropped)
    logError(Handle->Name + ": " + std::to_string(Dropped) +
             " frames sent to it were dropped: " + statusString(Why));
}

/// The handle will not be connected: its frames are dropped, its calls
/// return TC_ERR_IO, and the application hears of it once.
static void failTarget(CoreContext *Ctx, RouteTarget &T, tc_status_t Why, const std::string &How) {
  tc_peer *H = T.Handle.get();
  if (H->ProxyGone)
    return;
  loseProxy(H);
  logError("cannot connect to " + H->Name + ": " + How);
  postEvent(Ctx, TC_EVENT_PEER_GONE, H->Number, Why);
  dropQueued(H, Why);
}

static void startAttempt(CoreContext *Ctx, RouteTarget &T) {
  tc_peer *H = T.Handle.get();
  if (T.Attempt || H->Bound || H->ProxyGone || T.Addresses.empty())
    return;
  uint64_t Now = nowNs();
  if (!T.Started) {
    T.Started = true;
    T.GiveUpNs = Now + Ctx->Job->ConnectTimeoutNs;
  }
  // From worker addresses, the lower rank of a pair connects: this side
  // asks it to, and again after a while if no connection has come
  // (job/RankEndpoints.cpp).
  bool Higher = T.Rank != NoJobRank && T.Rank < Ctx->Wireup->Job.Rank;
  bool Coming = T.Pair.At == RankEndpoint::State::Owned && T.Pair.Owner && !T.Pair.Owner->Failed;
  bool FromWorkerAddress = connectsFromWorkerAddress(Ctx, T);
  if (Higher && (Coming || FromWorkerAddress)) {
    if (!Coming && !askRankToConnect(Ctx, T))
      return startAttempt(Ctx, T); // by sockaddr
    T.RetryAtNs = Now + KnockAgainNs;
    return;
  }
  if (Ctx->Job->AttemptsInFlight >= MaxAttemptsAtOnce) {
    // Its turn comes on a control turn (advanceRoutes), the timeout
    // counting from when it was first wanted.
    T.RetryAtNs = std::max<uint64_t>(T.RetryAtNs, 1);
    return;
  }
  sockaddr_in SA = {};
  SA.sin_family = AF_INET;
  SA.sin_port = htons(T.Port);
  SA.sin_addr.s_addr = T.Addresses[T.NextAddress++ % T.Addresses.size()];
  std::string Where = addressText(SA.sin_addr.s_addr, T.Port);
  if (T.Rank != NoJobRank)
    Where += " (rank " + std::to_string(T.Rank) + ")";
  T.RetryAtNs = 0;
  ++T.Attempts;
  uint64_t Deadline = std::min(T.GiveUpNs, Now + AttemptTimeoutNs);
  // A worker address UCX cannot reach (its endpoint not even made): the
  // rank's port instead.
  tc_peer *P = FromWorkerAddress ? startRankConnect(Ctx, T, SA, Where, Deadline) : nullptr;
  if (!P)
    P = startConnect(Ctx, SA, Where, T.Rank, Deadline);
  if (!P)
    return failTarget(Ctx, T, TC_ERR_IO, "no connection could be started (logged above)");
  makeFor(P, H);
  T.Attempt = P;
  ++Ctx->Job->AttemptsInFlight;
  Ctx->Job->Owned.emplace_back(P);
}

/// The handle's frames move to its connection, ahead of any there.
static void bindHandle(tc_peer *Handle, tc_peer *Connection) {
  handOutPeer(Connection);
  takeCork(Handle, Connection);
  takeAggregation(Handle, Connection);
  moveQueuedFrames(Handle, Connection);
  bindProxy(Handle, Connection);
}

namespace twochains::rt {

tc_peer *rankHandle(CoreContext *Ctx, uint32_t Rank) {
  RouteTarget &T = Ctx->Job->Ranks[Rank];
  makeHandle(Ctx, T);
  if (!T.Started)
    startAttempt(Ctx, T);
  if (Ctx->Job->Handles)
    Ctx->Job->Handles[Rank].store(T.Handle.get(), std::memory_order_release);
  return T.Handle.get();
}

tc_peer *addressRoute(CoreContext *Ctx, const std::string &Key, const sockaddr_in &SA) {
  RouteTarget &T = Ctx->Job->AddressRoutes[Key];
  if (!T.Handle) {
    T.Addresses = {SA.sin_addr.s_addr};
    T.Port = ntohs(SA.sin_port);
    makeHandle(Ctx, T);
    renamePeer(T.Handle.get(), Key);
  }
  if (!T.Started)
    startAttempt(Ctx, T);
  return T.Handle.get();
}

} // namespace twochains::rt

/// Wireup's hook: an authenticated HELLO from a rank of the job. Taken
/// unless a connection with that rank is kept already, or this side's own
/// connect to it is under way and this side's rank is the lower.
/// Whether the accepted connection Peer is one of this process's own
/// connects: its handshake's nonces, both, are those of a connect of this
/// side's (a connection elsewhere that claims this rank cannot have them:
/// the server nonce is this side's, fresh, and the client nonce the
/// connect's own).
static bool ownConnect(const CoreContext *Ctx, const tc_peer *Peer) {
  for (const tc_peer *P : Ctx->Connecting)
    if (!std::memcmp(P->Wireup->ClientNonce, Peer->Wireup->ClientNonce, NonceSize) &&
        !std::memcmp(P->Wireup->ServerNonce, Peer->Wireup->ServerNonce, NonceSize))
      return true;
  return false;
}

static int decideJobHello(CoreContext *Ctx, tc_peer *Peer, std::string &Why) {
  uint32_t Rank = Peer->JobRank;
  if (!Ctx->Job->Joined || Rank >= Ctx->Job->JobSize) {
    Why = "it claims rank " + std::to_string(Rank) + " of a job of " +
          std::to_string(Ctx->Job->JobSize);
    return TC_ERR_BAD_OFFER;
  }
  if (Rank == Ctx->Wireup->Job.Rank) {
    if (ownConnect(Ctx, Peer))
      return 0; // this process, connecting to itself
    Why = "it claims this process's own rank " + std::to_string(Rank) +
          ", and is not this process";
    return TC_ERR_BAD_OFFER;
  }
  RouteTarget &T = Ctx->Job->Ranks[Rank];
  tc_peer *Kept = T.Handle ? T.Handle->Bound : nullptr;
  if (Kept && !Kept->Failed && Kept->Welcomed)
    return RefusalCrossed;
  if (T.Welcomed && !T.Welcomed->Failed)
    return RefusalCrossed;
  if (T.Attempt && Ctx->Wireup->Job.Rank < Rank)
    return RefusalCrossed;
  return 0;
}

/// Wireup's hook: a connection welcomed. One of this side's connects binds
/// the handle it was made for; one a rank made binds that rank's handle.
static void onPeerWelcomed(CoreContext *Ctx, tc_peer *Peer) {
  // A rank connected to itself has two ends here; one is counted.
  if (Peer->JobRank != NoJobRank && (Peer->JobRank != Ctx->Wireup->Job.Rank || proxyOf(Peer)))
    countHeld(Ctx, &tc_stats_t::job_connections);
  if (tc_peer *Handle = proxyOf(Peer)) {
    if (!Handle->Bound || Handle->Bound->Failed)
      bindHandle(Handle, Peer);
    return;
  }
  if (Peer->JobRank == NoJobRank || Peer->JobRank == Ctx->Wireup->Job.Rank ||
      Peer->JobRank >= Ctx->Job->Ranks.size())
    return;
  // Bound once it says it took the welcome (onReady).
  Ctx->Job->Ranks[Peer->JobRank].Welcomed = Peer;
}

/// READY: a rank's connect this side welcomed has taken the welcome; the
/// connection is the rank's from now on.
static ucs_status_t onReady(void *Arg, const void *Header, size_t HeaderLength, void *,
                            size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  tc_peer *Peer = senderOf(Ctx, Param);
  uint32_t Magic = 0;
  if (HeaderLength == sizeof Magic)
    std::memcpy(&Magic, Header, sizeof Magic);
  if (!Peer || !Peer->Welcomed || Peer->Failed || Peer->JobRank >= Ctx->Job->Ranks.size() ||
      Magic != ReadyMagic || Length || Ctx->Job->Ranks[Peer->JobRank].Welcomed != Peer) {
    refuseMessage(Ctx, Peer, "a READY out of place", Param);
    return UCS_OK;
  }
  RouteTarget &T = Ctx->Job->Ranks[Peer->JobRank];
  T.Welcomed = nullptr;
  // It mapped this side's memory file as it took the welcome.
  closeMailboxFile(Peer);
  makeHandle(Ctx, T);
  if (!T.Handle->Bound || T.Handle->Bound->Failed)
    bindHandle(T.Handle.get(), Peer);
  return UCS_OK;
}

/// Wireup's hook: a connect in the background ended. Welcomed, it is bound
/// already; crossed, the other side's connection is awaited; unanswered,
/// it is tried again; refused, the handle has failed.
static void onConnectEnded(CoreContext *Ctx, tc_peer *Peer) {
  RouteTarget *T = targetOf(Ctx, proxyOf(Peer));
  if (T && T->Attempt == Peer) {
    T->Attempt = nullptr;
    --Ctx->Job->AttemptsInFlight;
  }
  if (Peer->Wireup->ConnectResult == TC_OK)
    return;
  // Never bound: nothing names it any more.
  auto Same = [&](const std::unique_ptr<tc_peer> &P) { return P.get() == Peer; };
  auto It = std::find_if(Ctx->Job->Owned.begin(), Ctx->Job->Owned.end(), Same);
  std::unique_ptr<tc_peer> Ended;
  if (It != Ctx->Job->Owned.end()) {
    Ended = std::move(*It);
    Ctx->Job->Owned.erase(It);
  }
  if (Peer->Wireup->Crossed)
    countHeld(Ctx, &tc_stats_t::job_crossings);
  if (!T || T->Handle->Bound)
    return;
  uint64_t Now = nowNs();
  if (Peer->Wireup->Crossed) {
    T->RetryAtNs = Now + CrossedWaitNs;
  } else if (Peer->Wireup->Unreachable || Peer->Wireup->ConnectResult == TC_ERR_IO) {
    uint64_t Backoff = RetryFirstNs << std::min(T->Attempts, 6u);
    T->RetryAtNs = Now + std::min(Backoff, RetryMaxNs);
  } else {
    failTarget(Ctx, *T, Peer->Wireup->ConnectResult,
               std::string("it refused the connection: ") + statusString(Peer->Wireup->ConnectResult));
  }
}

/// Wireup's hook: a connection released. A handle bound to it has gone
/// (the connection is kept: the handle still names it); its frame counts
/// stay counted.
static void onJobPeerReleased(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->JobRank != NoJobRank && Peer->Welcomed) {
    if (Peer->Tx->Send)
      Ctx->Job->ReleasedSent += Peer->Tx->Send->next();
    if (Peer->Rx->Receive)
      Ctx->Job->ReleasedDone += Peer->Rx->Receive->expected();
  }
  for (RouteTarget &T : Ctx->Job->Ranks)
    if (T.Welcomed == Peer)
      T.Welcomed = nullptr;
  auto Gone = [&](RouteTarget &T) {
    if (T.Handle && T.Handle->Bound == Peer && !T.Handle->ProxyGone) {
      loseProxy(T.Handle.get());
      dropQueued(T.Handle.get(), TC_ERR_IO);
    }
  };
  for (RouteTarget &T : Ctx->Job->Ranks)
    Gone(T);
  for (auto &[Key, T] : Ctx->Job->AddressRoutes)
    Gone(T);
}

/// Housekeeping: attempts due again start; handles out of time fail; this
/// layer's connections that failed are released once their frames ran.
static void advanceRoutes(CoreContext *Ctx) {
  // Ranks that knocked (job/RankEndpoints.cpp): connected to now, or as
  // soon as an attempt's turn comes, whatever a backoff said.
  for (RouteTarget &T : Ctx->Job->Ranks)
    if (T.Knocked) {
      T.Knocked = false;
      tc_peer *H = rankHandle(Ctx, T.Rank);
      if (!T.Attempt && !H->Bound && !H->ProxyGone && T.RetryAtNs > 1)
        T.RetryAtNs = 1;
    }
  uint64_t Now = nowNs();
  auto Advance = [&](RouteTarget &T) {
    if (!T.Handle || T.Handle->Bound || T.Handle->ProxyGone || T.Attempt || !T.RetryAtNs ||
        Now < T.RetryAtNs)
      return;
    if (Now >= T.GiveUpNs)
      return failTarget(Ctx, T, TC_ERR_IO,
                        "no connection in " + std::to_string(Ctx->Job->ConnectTimeoutNs / NsPerMs) +
                            " ms (" + std::to_string(T.Attempts) + " attempts)");
    startAttempt(Ctx, T);
  };
  // From the rank after this one: ranks waiting their turn spread over
  // the listeners rather than all start with rank 0's.
  for (size_t I = 0, N = Ctx->Job->Ranks.size(); I < N; ++I)
    Advance(Ctx->Job->Ranks[(Ctx->Wireup->Job.Rank + 1 + I) % N]);
  for (auto &[Key, T] : Ctx->Job->AddressRoutes)
    Advance(T);
  for (size_t I = 0; I < Ctx->Connected.size();) {
    tc_peer *P = Ctx->Connected[I];
    // Ours (made for a handle) and failed, its frames run: released.
    if (!proxyOf(P) || !P->Failed ||
        (P->Rx->Receive && P->Rx->Ring &&
         frameTrailerShows(ringSlot(P->Rx->Ring, Ctx->SlotSize, P->Rx->Receive->expectedSlot()),
                           Ctx->SlotSize, P->Rx->Receive->expected()))) {
      ++I;
      continue;
    }
    Ctx->Connected.erase(Ctx->Connected.begin() + I);
    releasePeer(Ctx, P);
  }
}

/// When advanceRoutes next has work on the clock: an attempt due again,
/// or a target waiting for its turn while one is free.
static uint64_t routesDue(CoreContext *Ctx) {
  uint64_t Due = NoDueTime;
  auto Look = [&](const RouteTarget &T) {
    if (!T.Handle || T.Handle->Bound || T.Handle->ProxyGone || T.Attempt || !T.RetryAtNs)
      return;
    // Waiting its turn (startAttempt): it comes when an attempt ends.
    if (T.RetryAtNs == 1 && Ctx->Job->AttemptsInFlight >= MaxAttemptsAtOnce)
      return;
    Due = std::min(Due, T.RetryAtNs);
  };
  for (const RouteTarget &T : Ctx->Job->Ranks) {
    if (T.Knocked)
      return 0;
    Look(T);
  }
  for (const auto &[Key, T] : Ctx->Job->AddressRoutes)
    Look(T);
  return Due;
}

void twochains::rt::endJob(CoreContext *Ctx) {
  // Frames waiting for connections being made leave if they can, bounded.
  uint64_t Deadline = nowNs() + 2'000'000'000ull;
  auto Waiting = [&] {
    for (RouteTarget &T : Ctx->Job->Ranks)
      if (T.Handle && !T.Handle->ProxyGone && !T.Handle->Bound &&
          !T.Handle->Sending->Queued.empty())
        return true;
    for (auto &[Key, T] : Ctx->Job->AddressRoutes)
      if (T.Handle && !T.Handle->ProxyGone && !T.Handle->Bound &&
          !T.Handle->Sending->Queued.empty())
        return true;
    return false;
  };
  while (Waiting() && nowNs() < Deadline && Ctx->Progress)
    Ctx->Progress(Ctx);
  for (auto &[Key, T] : Ctx->Job->AddressRoutes)
    if (tc_peer *B = T.Handle ? T.Handle->Bound : nullptr; B && B->Welcomed && !B->Failed)
      flushPeer(B, 2000);
  for (tc_peer *P : std::vector<tc_peer *>(Ctx->Connecting))
    if (P->Wireup->Background) {
      Ctx->Connecting.erase(std::remove(Ctx->Connecting.begin(), Ctx->Connecting.end(), P),
                            Ctx->Connecting.end());
      releasePeer(Ctx, P);
    }
  closeRankEndpoints(Ctx);
  for (auto &P : Ctx->Job->Owned) {
    Ctx->Connected.erase(std::remove(Ctx->Connected.begin(), Ctx->Connected.end(), P.get()),
                         Ctx->Connected.end());
    stopPolling(Ctx, P.get());
    if (P->Welcomed || P->Ep)
      releasePeer(Ctx, P.get());
  }
}

ucs_status_t twochains::rt::setupRoutes(CoreContext *Ctx) {
  Ctx->Wireup->DecideRankHello = decideJobHello;
  Ctx->Wireup->PeerWelcomed.subscribe(onPeerWelcomed);
  Ctx->Wireup->ConnectEnded.subscribe(onConnectEnded);
  Ctx->Wireup->PeerReleased.subscribe(onJobPeerReleased);
  addHousekeeping(Ctx, advanceRoutes);
  addDueTime(Ctx, routesDue);
  return setControlHandlers(Ctx, {{AmReady, &onReady}});
}
