//===- PayloadAhead.cpp - Receiving payloads sent ahead of their frames ---===//
#include "receive/PayloadAhead.h"
#include "receive/PeerReceive.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "control/ControlMessage.h"
#include "control/ControlWorker.h"
#include "core/Stats.h"
#include "path/Mailbox.h"
#include "wire/Ring.h"
#include "wire/Wire.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

using namespace twochains::rt;

namespace {

using Arriving = ReceiveContext::ArrivingPayload;

/// Whether a peer's payloads come on the RMA worker: where this side
/// offered it, to RMA peers (a peer connected to itself, which keeps the
/// control endpoint, is then taken for one: its payload's wait turns the
/// control worker every ControlPeriodNs only, not every pass).
bool payloadsComeByRma(const CoreContext *Ctx, const tc_peer *Peer) {
  return Ctx->Receive->PayloadsByRma && Peer->Path == PathRma;
}

Arriving *find(CoreContext *Ctx, const tc_peer *Peer, uint64_t Sequence) {
  for (Arriving &A : Ctx->Receive->PayloadsArriving)
    if (A.Peer == Peer && A.Sequence == Sequence)
      return &A;
  return nullptr;
}

void release(CoreContext *Ctx, std::list<Arriving>::iterator It) {
  if (It->Bytes)
    Ctx->Receive->PayloadAheadHeld -= It->Size;
  Ctx->Receive->PayloadsArriving.erase(It);
}

void onPayloadBody(void *Arg, tc_status_t St) {
  auto *A = static_cast<Arriving *>(Arg);
  CoreContext *Ctx = A->Ctx;
  --Ctx->PayloadsAheadActive;
  if (A->OnControl)
    --Ctx->PayloadsAheadOnControl;
  A->Received = true;
  A->Status = St;
  if (St == TC_OK && A->Peer)
    countHeld(Ctx, &tc_stats_t::payloads_ahead_received);
  if (St == TC_OK && A->Peer)
    return;
  // Failed (its sender is cut off), or its peer is gone: nothing will run
  // on the bytes, and an entry for a failed one keeps its frame's refusal.
  for (auto It = Ctx->Receive->PayloadsArriving.begin(); It != Ctx->Receive->PayloadsArriving.end();
       ++It)
    if (&*It == A) {
      if (!A->Peer) {
        release(Ctx, It);
      } else {
        Ctx->Receive->PayloadAheadHeld -= A->Size;
        A->Bytes.reset();
      }
      return;
    }
}

/// A PAYLOAD message that came on Worker (the control or the RMA one).
ucs_status_t takePayloadMessage(CoreContext *Ctx, ucp_worker_h Worker, const void *Header,
                                size_t HeaderLength, void *Data, size_t Length,
                                const ucp_am_recv_param_t *Param) {
  tc_peer *Peer = senderOf(Ctx, Param);
  // Over a connection of shared memory the sender names itself by the
  // receiver's mailbox token (wire/Wire.h, SharedPayloadHeader): it must be
  // its connection's, whichever endpoint it came on.
  if (Worker == Ctx->DataWorker && HeaderLength == sizeof(SharedPayloadHeader)) {
    SharedPayloadHeader S;
    std::memcpy(&S, Header, sizeof S);
    ucp_ep_h From = (Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? Param->reply_ep
                                                                         : nullptr;
    tc_peer *Named = peerOfMailboxToken(Ctx, S.Token, From, Peer);
    if (!Named) {
      refuseMessage(Ctx, Peer, "a payload naming no connection of shared memory of its endpoint",
                    Param);
      return UCS_OK;
    }
    Peer = Named;
    HeaderLength = sizeof(PayloadHeader);
  }
  if (!Peer || !Peer->Welcomed || !Peer->Rx->Receive) {
    refuseMessage(Ctx, nullptr, "a payload from an endpoint that is no welcomed peer", Param);
    return UCS_OK;
  }
  PayloadHeader H;
  std::string Why;
  tc_status_t St = parsePayloadHeader(Header, HeaderLength, Length, Peer->Rx->Receive->expected(),
                                      Ctx->Slots, Ctx->PayloadAheadBytes, H, Why);
  if (St == TC_ERR_TOO_LARGE)
    std::memcpy(&H, Header, sizeof H); // a frame it may send: it hears why
  // Each sequence once.
  if ((St == TC_OK || St == TC_ERR_TOO_LARGE) && find(Ctx, Peer, H.Sequence)) {
    St = TC_ERR_SEQUENCE;
    Why = "a second payload for frame " + std::to_string(H.Sequence);
  }
  if (St != TC_OK && St != TC_ERR_TOO_LARGE) {
    refuseMessage(Ctx, Peer, Why);
    countHeld(Ctx, &tc_stats_t::payloads_ahead_refused);
    return UCS_OK;
  }
  // From here on the frame hears why its payload was refused.
  auto Refuse = [&](tc_status_t St, const std::string &Why) {
    countHeld(Ctx, &tc_stats_t::payloads_ahead_refused);
    logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
               "refused the payload of frame " + std::to_string(H.Sequence) + " from " +
                   Peer->Name + ": " + Why);
    Ctx->Receive->PayloadsArriving.push_back({Ctx, Peer, H.Sequence, 0, true, St, nullptr});
    return UCS_OK;
  };
  if (St == TC_ERR_TOO_LARGE)
    return Refuse(St, Why);
  uint64_t Share = 0;
  for (const Arriving &A : Ctx->Receive->PayloadsArriving)
    if (A.Peer == Peer && A.Bytes)
      Share += A.Size;
  if (Share + H.Size > Ctx->PayloadAheadBytes)
    return Refuse(TC_ERR_NO_CREDIT, "it holds " + std::to_string(Share) +
                                        " bytes here already, and its share is " +
                                        std::to_string(Ctx->PayloadAheadBytes));
  uint64_t Total = PayloadsAheadTotalFactor * Ctx->PayloadAheadBytes;
  if (Ctx->Receive->PayloadAheadHeld + H.Size > Total)
    return Refuse(TC_ERR_NO_CREDIT, "payloads of all senders hold " +
                                        std::to_string(Ctx->Receive->PayloadAheadHeld) +
                                        " bytes here already, of at most " + std::to_string(Total));
  std::unique_ptr<uint8_t[]> Bytes(new (std::nothrow) uint8_t[H.Size]);
  if (!Bytes)
    return Refuse(TC_ERR_NO_MEMORY, "no memory for " + std::to_string(H.Size) + " bytes");
  Ctx->Receive->PayloadsArriving.push_back({Ctx, Peer, H.Sequence, H.Size, false, TC_OK,
                                            std::move(Bytes), nowNs(),
                                            Peer->Rx->Receive->expected(), Worker == Ctx->Worker});
  Arriving &A = Ctx->Receive->PayloadsArriving.back();
  if (A.OnControl)
    ++Ctx->PayloadsAheadOnControl;
  Ctx->Receive->PayloadAheadHeld += H.Size;
  ++Ctx->PayloadsAheadActive; // onPayloadBody takes it back
  receiveBody(Ctx, Data, Length, Param, A.Bytes.get(), onPayloadBody, &A, Worker);
  return UCS_OK;
}

ucs_status_t onPayload(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                       size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  return takePayloadMessage(Ctx, Ctx->Worker, Header, HeaderLength, Data, Length, Param);
}

/// The same on the RMA worker, from a peer's RMA endpoint (senderOf: an
/// endpoint that is no peer's is refused, as on the control worker).
ucs_status_t onPayloadByRma(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                            size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  return takePayloadMessage(Ctx, Ctx->DataWorker, Header, HeaderLength, Data, Length, Param);
}

void stopWaiting(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->Receiving->PayloadWaitSinceNs) {
    Peer->Receiving->PayloadWaitSinceNs = 0;
    --Ctx->PayloadsAheadActive;
    if (!payloadsComeByRma(Ctx, Peer))
      --Ctx->PayloadsAheadOnControl;
  }
}

/// Whether the peer has a frame in its ring that this side has not run
/// yet: a payload waiting for a later frame waits for this side then.
bool frameWaiting(CoreContext *Ctx, const tc_peer *Peer) {
  const PeerReceiveHalf &Rx = *Peer->Rx;
  return Rx.Ring && Rx.Receive &&
         frameBegun(ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot()),
                    Rx.Receive->expected());
}

/// Housekeeping: a payload whose peer has made no progress for a
/// rendezvous timeout while its share was held (no frame of it ran, none
/// waits to) is a share held for nothing: its peer is cut off, which ends
/// its connection and gives its share back.
void cutOffStalledHolders(CoreContext *Ctx) {
  if (Ctx->Receive->PayloadsArriving.empty())
    return;
  uint64_t Now = nowNs();
  std::vector<tc_peer *> Stalled;
  for (Arriving &A : Ctx->Receive->PayloadsArriving) {
    if (!A.Peer || !A.Received || !A.Bytes || !A.Peer->Rx->Receive || A.Peer->Failed)
      continue;
    uint64_t Expected = A.Peer->Rx->Receive->expected();
    if (Expected != A.ExpectedAt || frameWaiting(Ctx, A.Peer)) {
      A.ExpectedAt = Expected;
      A.StalledSinceNs = Now;
      continue;
    }
    if (Now - A.StalledSinceNs > Ctx->Control->BodyTimeoutNs &&
        std::find(Stalled.begin(), Stalled.end(), A.Peer) == Stalled.end())
      Stalled.push_back(A.Peer);
  }
  for (tc_peer *Peer : Stalled) {
    countHeld(Ctx, &tc_stats_t::payloads_ahead_refused);
    cutOffPeer(Ctx, Peer,
               "it held its share of payloads sent ahead for " +
                   std::to_string(Ctx->Control->BodyTimeoutNs / NsPerMs) +
                   " ms without sending their frames");
    forgetPayloadsAhead(Ctx, Peer);
  }
}

uint64_t stalledHoldersDue(CoreContext *Ctx) {
  uint64_t Due = NoDueTime;
  for (const Arriving &A : Ctx->Receive->PayloadsArriving)
    if (A.Peer && A.Received && A.Bytes)
      Due = std::min(Due, A.StalledSinceNs + Ctx->Control->BodyTimeoutNs + 1);
  return Due;
}

} // namespace

ucs_status_t twochains::rt::setupPayloadAhead(CoreContext *Ctx) {
  addHousekeeping(Ctx, cutOffStalledHolders);
  addDueTime(Ctx, stalledHoldersDue);
  return setControlHandlers(Ctx, {{AmPayload, &onPayload}});
}

ucs_status_t twochains::rt::setupPayloadsByRma(CoreContext *Ctx) {
  // TC_PAYLOADS_BY_RMA=0: on the control endpoint, as before (to compare).
  const char *Env = std::getenv("TC_PAYLOADS_BY_RMA");
  if (!Ctx->DataWorker || Ctx->Channels || (Env && !std::strcmp(Env, "0")))
    return UCS_OK;
  if (ucs_status_t St = setHandler(Ctx->DataWorker, AmPayload, &onPayloadByRma, Ctx); St != UCS_OK)
    return St;
  Ctx->Receive->PayloadsByRma = true;
  return UCS_OK;
}

tc_status_t twochains::rt::takePayloadAhead(CoreContext *Ctx, tc_peer *Peer, FrameView &V) {
  PayloadAhead Named;
  std::memcpy(&Named, V.Payload, sizeof Named);
  if (Named.Magic != PayloadAheadMagic || Named.Sequence != V.Header.Sequence ||
      Named.Reserved[0] || Named.Reserved[1] || !Named.Size ||
      Named.Size > Ctx->PayloadAheadBytes) {
    stopWaiting(Ctx, Peer);
    return TC_ERR_BAD_LENGTH;
  }
  Arriving *A = find(Ctx, Peer, Named.Sequence);
  if (!A || !A->Received) {
    // Its bytes travel on another path than the frame: they may come
    // later, and the control worker turns every pass meanwhile.
    uint64_t Now = nowNs();
    if (!Peer->Receiving->PayloadWaitSinceNs) {
      Peer->Receiving->PayloadWaitSinceNs = Now;
      ++Ctx->PayloadsAheadActive;
      if (!payloadsComeByRma(Ctx, Peer))
        ++Ctx->PayloadsAheadOnControl;
    } else if (Now - Peer->Receiving->PayloadWaitSinceNs > Ctx->Control->BodyTimeoutNs) {
      stopWaiting(Ctx, Peer);
      countHeld(Ctx, &tc_stats_t::payloads_ahead_refused);
      return TC_ERR_TIMED_OUT;
    }
    return TC_ERR_INCOMPLETE;
  }
  stopWaiting(Ctx, Peer);
  if (A->Status != TC_OK)
    return A->Status;
  if (A->Size != Named.Size)
    return TC_ERR_BAD_LENGTH;
  V.Payload = A->Bytes.get();
  V.Header.PayloadSize = A->Size;
  return TC_OK;
}

void twochains::rt::finishPayloadAhead(CoreContext *Ctx, tc_peer *Peer, uint64_t Sequence) {
  stopWaiting(Ctx, Peer);
  // Fetches still under way are left to end: their buffers are UCX's.
  for (auto It = Ctx->Receive->PayloadsArriving.begin();
       It != Ctx->Receive->PayloadsArriving.end();) {
    auto Next = std::next(It);
    if (It->Peer == Peer && It->Sequence <= Sequence && It->Received)
      release(Ctx, It);
    It = Next;
  }
}

void twochains::rt::forgetPayloadsAhead(CoreContext *Ctx, tc_peer *Peer) {
  stopWaiting(Ctx, Peer);
  for (auto It = Ctx->Receive->PayloadsArriving.begin();
       It != Ctx->Receive->PayloadsArriving.end();) {
    auto Next = std::next(It);
    if (It->Peer == Peer) {
      if (It->Received)
        release(Ctx, It);
      else
        It->Peer = nullptr; // onPayloadBody frees it
    }
    It = Next;
  }
}
