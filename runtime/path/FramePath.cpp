//===- FramePath.cpp - How frames and credits reach a peer's ring ---------===//
//
//   RMA      one ucp_put_nbx into the peer's slot; credit words by put;
//            where UCX maps the peer's memory into this process (shared
//            memory), stores straight into it instead (Send.cpp)
//   message  one active message carrying the frame, which the ring's owner
//            writes into the slot its sequence names, after checking that
//            the sequence is inside the sender's window and the frame fits
//            a slot; credit words as a message the owner writes
//
// Either way the receiver sees the same bytes in the same slot, and the
// executor finds, checks and runs frames the same way.
//
//===----------------------------------------------------------------------===//
#include "path/FramePath.h"

#include "base/Log.h"
#include "base/Ticks.h"
#include "base/Timeouts.h"
#include "control/ControlMessage.h"
#include "core/Lock.h"
#include "core/Peers.h"
#include "core/Polled.h"
#include "core/Stats.h"
#include "ucx/Request.h"
#include "wire/Frame.h"

#include <cstring>

using namespace twochains::rt;

namespace twochains::rt {

ucp_worker_h frameWorker(tc_peer *Peer) {
  return Peer->Path == PathRma ? Peer->Ctx->DataWorker : Peer->Ctx->Worker;
}

tc_status_t completePut(tc_peer *Peer, uint32_t Slot) {
  ucs_status_ptr_t &Request = Peer->Tx->Puts[Slot];
  if (!Request)
    return TC_OK;
  ucs_status_t St =
      waitRequestUntil(Peer->Ctx->DataWorker, Request, nowNs() + PutCompleteTimeoutNs);
  Request = nullptr;
  if (St != UCS_OK) {
    failPeer(Peer);
    return TC_ERR_IO;
  }
  return TC_OK;
}

/// The credit report a frame by message carries to its peer: the frames of
/// the peer's this side has finished, reported by it (a reply stream then
/// needs no report of its own, each a system call over TCP).
static uint64_t carriedCredit(tc_peer *Peer) {
  if (!Peer->Rx->Receive)
    return 0;
  return Peer->Rx->Receive->takeCreditReport();
}

/// A credit report a frame by message carried: taken as onCredit takes one
/// (the ring ignores impossible counts: Ring.cpp).
static void takeCarriedCredit(tc_peer *Peer, uint64_t Finished) {
  if (Peer->Tx->CreditLine && Finished > Peer->Tx->CreditLine[CreditWordFinished])
    Peer->Tx->CreditLine[CreditWordFinished] = Finished;
}

/// How long a frame by message may wait to be taken: a peer that has not
/// read its socket for that long, with this side's frames filling it, is
/// failed, rather than holding up whoever sends (the executor, sending a
/// jam's reply or a corked batch, serves every other peer meanwhile).
static constexpr uint64_t FrameMessageDeadlineNs = 1'000'000'000;

/// Count frames of consecutive sequences from First, back to back in Data,
/// as one active message: a frame's header, or a batch's. The header is
/// the peer's, and Data the peer's or the context's: a send given up on
/// may still read them until the endpoint closes.
static tc_status_t sendFrameMessage(tc_peer *Peer, uint64_t First, uint32_t Count,
                                    const uint8_t *Data, size_t Size) {
  PeerSendHalf &Tx = *Peer->Tx;
  if (!Peer->Ep) // cut off (control/ControlMessage.h): failed already
    return TC_ERR_IO;
  Tx.MessageHeader.One = {First, carriedCredit(Peer)};
  if (Count > 1)
    Tx.MessageHeader.Many = {First, Count, 0, Tx.MessageHeader.One.Finished};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_t St = waitRequestFor(
      Peer->Ctx->Worker,
      ucp_am_send_nbx(Peer->Ep, AmFrame, &Tx.MessageHeader,
                      Count == 1 ? sizeof(FrameMessage) : sizeof(FrameBatchMessage), Data, Size,
                      &P),
      FrameMessageDeadlineNs);
  controlTurnedByWait(Peer->Ctx);
  if (St != UCS_OK) {
    failPeer(Peer);
    return TC_ERR_IO;
  }
  return TC_OK;
}

tc_status_t corkFrames(tc_peer *Peer, bool Corked) {
  Peer->Tx->Corked = Corked;
  return Corked ? TC_OK : flushFrameBatch(Peer);
}

void closeColdRing(tc_peer *Peer) {
  __atomic_store_n(&Peer->Rx->CreditDirect[CreditWordCold], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&Peer->Rx->CreditDirect[CreditWordLimit], Peer->Rx->Receive->expected() + 1,
                   __ATOMIC_RELAXED);
  ++Peer->Rx->RingClosings;
}

tc_status_t flushFrameBatch(tc_peer *Peer) {
  PeerSendHalf &Tx = *Peer->Tx;
  if (!Tx.BatchFrames)
    return TC_OK;
  if (Tx.BatchFrames > 1)
    countHeld(Peer->Ctx, &tc_stats_t::frames_coalesced, Tx.BatchFrames);
  tc_status_t St = sendFrameMessage(Peer, Tx.BatchFirst, Tx.BatchFrames, Tx.Batch.data(),
                                    Tx.Batch.size());
  Tx.Batch.clear();
  Tx.BatchFrames = 0;
  return St;
}

/// A corked or gathering peer's frame joins its batch, which leaves at
/// once when it is full.
static tc_status_t batchFrame(tc_peer *Peer, const uint8_t *Frame, size_t Size,
                              uint64_t Sequence) {
  PeerSendHalf &Tx = *Peer->Tx;
  // Only what aggregation gathered has an age bound: a corked peer's
  // frames wait for the uncork, a flush or a full batch, as asked.
  uint64_t Now = Tx.Corked ? 0 : cpuTicks();
  // It leaves first if the frame does not follow on, would overfill it,
  // or its first frame has waited GatherAgeUs.
  if (Tx.BatchFrames &&
      (Sequence != Tx.BatchFirst + Tx.BatchFrames || Tx.Batch.size() + Size > MaxFrameBatchBytes ||
       (!Tx.Corked && Now - Tx.BatchSince >= GatherAgeUs * ticksPerMicrosecond())))
    if (tc_status_t St = flushFrameBatch(Peer); St != TC_OK)
      return St;
  if (!Tx.BatchFrames) {
    Tx.BatchFirst = Sequence;
    Tx.BatchSince = Now;
  }
  Tx.Batch.insert(Tx.Batch.end(), Frame, Frame + Size);
  ++Tx.BatchFrames;
  if (Tx.Batch.size() + FrameLine > MaxFrameBatchBytes || Tx.BatchFrames >= Tx.Slots)
    return flushFrameBatch(Peer);
  return TC_OK;
}

tc_status_t deliverFrame(tc_peer *Peer, const uint8_t *Frame, size_t Size, uint64_t Sequence,
                         uint32_t Slot, bool Pipelined) {
  ucp_request_param_t P = {};
  ucs_status_t St;
  if (Peer->Path != PathRma && (Peer->Tx->Corked || Peer->Tx->Gather))
    return batchFrame(Peer, Frame, Size, Sequence);
  // A frame that does not join the batch follows it: frames run in the
  // order sent.
  if (Peer->Path != PathRma && Peer->Tx->BatchFrames)
    if (tc_status_t St = flushFrameBatch(Peer); St != TC_OK)
      return St;
  if (Peer->Path == PathRma && Pipelined) {
    ucs_status_ptr_t R = ucp_put_nbx(Peer->DataEp, Frame, Size,
                                     ringSlot(Peer->Tx->RingAddress, Peer->Tx->SlotSize, Slot),
                                     Peer->Tx->RingKey, &P);
    if (UCS_PTR_IS_ERR(R)) {
      failPeer(Peer);
      return TC_ERR_IO;
    }
    Peer->Tx->Puts[Slot] = R; // null: complete already (shared memory, short puts)
    return TC_OK;
  }
  if (Peer->Path != PathRma)
    return sendFrameMessage(Peer, Sequence, 1, Frame, Size);
  St = waitRequest(Peer->Ctx->DataWorker,
                   ucp_put_nbx(Peer->DataEp, Frame, Size,
                               ringSlot(Peer->Tx->RingAddress, Peer->Tx->SlotSize, Slot),
                               Peer->Tx->RingKey, &P));
  if (St != UCS_OK) {
    failPeer(Peer);
    return TC_ERR_IO;
  }
  return TC_OK;
}

CreditReport reportCreditWord(tc_peer *Peer, unsigned Word, uint64_t Value, bool Wait) {
  if (Peer->Failed)
    return CreditReport::Failed;
  // The sender reads the word and then reuses slots: everything this side
  // read from them comes before the store.
  if (uint64_t *Line = Peer->Rx->CreditDirect) {
    __atomic_store_n(&Line[Word], Value, __ATOMIC_RELEASE);
    if (Peer->Tx->CreditWord)
      wakeIfSleeping(Peer); // a flush may sleep for this report
    return CreditReport::Sent;
  }
  // One report in flight per word (RMA) or per line (messages): the buffer
  // it reads must stay as it was until it completes.
  ucs_status_ptr_t &Request = Peer->Rx->CreditRequest[Peer->Path == PathRma ? Word : 0];
  if (Request) {
    if (ucp_request_check_status(Request) == UCS_INPROGRESS) {
      if (!Wait)
        return CreditReport::Busy;
      ucs_status_t St = waitRequestUntil(frameWorker(Peer), Request, nowNs() + CreditReportWaitNs);
      Request = nullptr;
      if (St != UCS_OK) {
        failPeer(Peer);
        return CreditReport::Failed;
      }
    } else {
      ucp_request_free(Request);
      Request = nullptr;
    }
  }
  ucp_request_param_t P = {};
  ucs_status_ptr_t R;
  if (Peer->Path == PathRma) {
    Peer->Rx->CreditSource[Word] = Value;
    R = ucp_put_nbx(Peer->DataEp, &Peer->Rx->CreditSource[Word], sizeof(uint64_t),
                    Peer->Rx->CreditAddress + Word * sizeof(uint64_t), Peer->Rx->CreditKey, &P);
  } else {
    (Word == CreditWordFinished ? Peer->Rx->CreditMsg.Finished
     : Word == CreditWordMiss   ? Peer->Rx->CreditMsg.Miss
                                : Peer->Rx->CreditMsg.Fault) = Value;
    P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
    R = ucp_am_send_nbx(Peer->Ep, AmCredit, &Peer->Rx->CreditMsg, sizeof Peer->Rx->CreditMsg,
                        nullptr, 0, &P);
  }
  if (UCS_PTR_IS_ERR(R)) {
    failPeer(Peer);
    return CreditReport::Failed;
  }
  Request = R;
  return CreditReport::Sent;
}

/// Sends the peer an AmWake if Flag (its sleep flag in our credit line, or
/// in its doorbell) is still set. Taken, so that one sleep gets one wake
/// from this side, whichever of its threads stores next.
static void wakePeer(tc_peer *Peer, volatile uint64_t *Flag) {
  if (!__atomic_exchange_n(const_cast<uint64_t *>(Flag), 0, __ATOMIC_RELAXED) || !Peer->Ep)
    return;
  // The control worker is the context's: a thread holding only the peer's
  // channel takes the context's lock too (channel, then context).
  CoreContext *Ctx = Peer->Ctx;
  std::unique_lock<std::recursive_mutex> Context(Ctx->Lock, std::defer_lock);
  if (Peer->Channelled) {
    lockContext(Ctx);
    Context = std::unique_lock<std::recursive_mutex>(Ctx->Lock, std::adopt_lock);
  }
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t R = ucp_am_send_nbx(Peer->Ep, AmWake, nullptr, 0, nullptr, 0, &P);
  if (UCS_PTR_IS_ERR(R))
    return; // the endpoint failed: its error callback says so
  if (R)
    ucp_request_free(R); // UCX completes it; nothing reads a buffer of ours
  count(Ctx, &tc_stats_t::wakes_sent);
}

/// Marks this side's bit in the peer's doorbell, then its summary; wakes
/// the peer if it sleeps.
static void ringDoorbell(tc_peer *Peer) {
  PeerSendHalf &Tx = *Peer->Tx;
  // The frame's stores come before the bit (release), the bit before the
  // summary: a receiver that sees the summary finds the bit, and the bit's
  // frame.
  __atomic_fetch_or(Tx.DoorbellWord, Tx.DoorbellBit, __ATOMIC_RELEASE);
  __atomic_store_n(&Tx.Doorbell[DoorbellSummary], 1, __ATOMIC_RELEASE);
  // A receiver that sleeps set this before it looked at the summary.
  fenceBeforeSleepFlag();
  if (__builtin_expect(Tx.Doorbell[DoorbellSleeping] != 0, 0))
    wakePeer(Peer, &Tx.Doorbell[DoorbellSleeping]);
}

void notifyPeer(tc_peer *Peer) {
  PeerSendHalf &Tx = *Peer->Tx;
  Tx.ClosedAt = Tx.CreditWord[CreditWordLimit];
  if (Tx.CreditWord[CreditWordCold] && Tx.DoorbellWord)
    ringDoorbell(Peer);
  if (Tx.CreditWord[CreditWordSleep])
    wakePeer(Peer, &Tx.CreditWord[CreditWordSleep]);
}

bool openSlot(tc_peer *Peer, uint64_t Seq) {
  PeerSendHalf &Tx = *Peer->Tx;
  // Opened since (the ring was warmed)?
  Tx.ClosedAt = Tx.CreditWord[CreditWordLimit];
  if (!Tx.ClosedAt || Seq < Tx.ClosedAt)
    return true;
  Tx.Send->unreserve(Seq);
  askToOpen(Peer);
  return false;
}

bool askForCredits(tc_peer *Peer) {
  if (!Peer->Tx->DoorbellWord)
    return false;
  ringDoorbell(Peer);
  return true;
}

void askToOpen(tc_peer *Peer) {
  if (Peer->Tx->DoorbellWord) {
    ringDoorbell(Peer);
    return;
  }
  // No doorbell here: a wake message, taken by the receiver's onWake.
  uint64_t Ask = 1;
  wakePeer(Peer, &Ask);
}

} // namespace twochains::rt

/// The peer a frame-path message came from, if it may send one.
static tc_peer *sender(CoreContext *Ctx, const ucp_am_recv_param_t *Param) {
  if (!(Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
    return nullptr;
  tc_peer *Peer = peerOfEndpoint(Ctx, Param->reply_ep);
  return Peer && Peer->Welcomed && Peer->Path == PathAm ? Peer : nullptr;
}

/// Writes a frame that came by message into its slot as a direct sender
/// stores one: everything before the trailer, then the trailer by one
/// release store. Frames by message carry the ordered mark, and an
/// application that progresses its own worker (UCS_THREAD_MODE_MULTI) may
/// run this handler while the executor reads the ring.
static void placeFrame(uint8_t *Slot, const uint8_t *Frame, size_t Size) {
  std::memcpy(Slot, Frame, Size - FrameTrailerSize);
  uint64_t Trailer;
  std::memcpy(&Trailer, Frame + Size - FrameTrailerSize, sizeof Trailer);
  __atomic_store_n(reinterpret_cast<uint64_t *>(Slot + Size - FrameTrailerSize), Trailer,
                   __ATOMIC_RELEASE);
}

/// A corked sender's frames in one message: every one must fit a slot and
/// lie inside the sender's window, or none is written.
static ucs_status_t takeFrameBatch(CoreContext *Ctx, tc_peer *Peer, const void *Header,
                                   const uint8_t *Data, size_t Length,
                                   const ucp_am_recv_param_t *Param) {
  FrameBatchMessage M;
  std::memcpy(&M, Header, sizeof M);
  uint64_t Expected = Peer->Rx->Receive->expected();
  uint32_t Lengths[MaxFrameBatchBytes / FrameLine];
  if ((Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) || M.Reserved || M.Count < 2 ||
      M.Count > Ctx->Slots || M.Count > MaxFrameBatchBytes / FrameLine ||
      Length > MaxFrameBatchBytes ||
      !splitFrameBatch(Data, Length, M.Count, Ctx->SlotSize, Lengths))
    return refuseMessage(Ctx, Peer, "a batch of " + std::to_string(M.Count) + " frames in " +
                                        std::to_string(Length) +
                                        " bytes (each whole lines and at most a slot of " +
                                        std::to_string(Ctx->SlotSize) + ", at most " +
                                        std::to_string(Ctx->Slots) + " frames, " +
                                        std::to_string(MaxFrameBatchBytes) + " bytes)"),
           UCS_OK;
  if (M.First < Expected || M.First - Expected > Ctx->Slots - M.Count)
    return refuseMessage(Ctx, Peer, "frames " + std::to_string(M.First) + " to " +
                                        std::to_string(M.First + M.Count - 1) +
                                        " outside their window (expected " +
                                        std::to_string(Expected) + ", " +
                                        std::to_string(Ctx->Slots) + " slots)"),
           UCS_OK;
  takeCarriedCredit(Peer, M.Finished);
  for (uint32_t I = 0; I < M.Count; Data += Lengths[I], ++I)
    placeFrame(ringSlot(Peer->Rx->Ring, Ctx->SlotSize, (M.First + I) % Ctx->Slots), Data,
               Lengths[I]);
  return UCS_OK;
}

static ucs_status_t onFrame(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                            size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  tc_peer *Peer = sender(Ctx, Param);
  if (!Peer || !Peer->Rx->Ring || !Peer->Rx->Receive)
    return refuseMessage(Ctx, Peer, "a frame from a peer not connected by messages", Param),
           UCS_OK;
  if (HeaderLength == sizeof(FrameBatchMessage))
    return takeFrameBatch(Ctx, Peer, Header, static_cast<const uint8_t *>(Data), Length, Param);
  if (HeaderLength != sizeof(FrameMessage) || (Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
      Length < FrameLine || Length % FrameLine || Length > Ctx->SlotSize)
    return refuseMessage(Ctx, Peer, "a frame of " + std::to_string(Length) +
                                 " bytes (whole 64-byte lines, at most a slot of " +
                                 std::to_string(Ctx->SlotSize) + ")"),
           UCS_OK;
  FrameMessage M;
  std::memcpy(&M, Header, sizeof M);
  // Only slots of this sender's own window: never another's. (A frame
  // running from the expected slot reads the executor's private copy.)
  uint64_t Expected = Peer->Rx->Receive->expected();
  if (M.Sequence < Expected || M.Sequence - Expected >= Ctx->Slots)
    return refuseMessage(Ctx, Peer, "frame " + std::to_string(M.Sequence) +
                                 " outside its window (expected " + std::to_string(Expected) +
                                 ", " + std::to_string(Ctx->Slots) + " slots)"),
           UCS_OK;
  takeCarriedCredit(Peer, M.Finished);
  placeFrame(ringSlot(Peer->Rx->Ring, Ctx->SlotSize, M.Sequence % Ctx->Slots),
             static_cast<const uint8_t *>(Data), Length);
  return UCS_OK;
}

static ucs_status_t onCredit(void *Arg, const void *Header, size_t HeaderLength, void *,
                             size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  tc_peer *Peer = sender(Ctx, Param);
  if (!Peer || !Peer->Tx->CreditLine || HeaderLength != sizeof(CreditMessage) || Length)
    return refuseMessage(Ctx, Peer, "a credit report out of place", Param), UCS_OK;
  CreditMessage M;
  std::memcpy(&M, Header, sizeof M);
  // The sender's ring ignores impossible counts (Ring.cpp), and a miss
  // report names a frame only while it is in flight (Send.cpp).
  if (M.Finished > Peer->Tx->CreditLine[CreditWordFinished])
    Peer->Tx->CreditLine[CreditWordFinished] = M.Finished;
  if (M.Miss)
    Peer->Tx->CreditLine[CreditWordMiss] = M.Miss;
  if (M.Fault)
    Peer->Tx->CreditLine[CreditWordFault] = M.Fault;
  return UCS_OK;
}

/// Wakes a peer may send beyond one a sleep and one a closing: those its
/// threads race to send for one sleep, and wakes in flight across one.
static constexpr uint64_t WakeSlack = 256;

/// AmWake: a welcomed peer stored into this side's memory while it slept.
/// Its arrival made the worker's fd readable, which was all it was for:
/// counted, nothing else. From anyone else, refused (counted, logged once).
static ucs_status_t onWake(void *Arg, const void *, size_t HeaderLength, void *, size_t Length,
                           const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  tc_peer *Peer = (Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
                      ? peerOfEndpoint(Ctx, Param->reply_ep)
                      : nullptr;
  if (!Peer || !Peer->Welcomed || HeaderLength || Length)
    return refuseMessage(Ctx, Peer, "a wake from a peer not welcomed, or with bytes", Param),
           UCS_OK;
  // One wake a look before a sleep of this side (the flag it takes is
  // raised once a look, in its line and in the doorbell; a look that finds
  // work does not sleep, and its flags stay raised) and one a closing of
  // its ring: a peer that sends more floods this side's fd, and is cut off.
  // Counted by looks, not sleeps: under load most looks find work, and a
  // good peer that took the flags they left was cut off (security-quarantine-e2e).
  PeerReceiveHalf &Rx = *Peer->Rx;
  uint64_t Sleeps = Ctx->SleepLooks.load(std::memory_order_relaxed);
  if (!Rx.WakesTaken++)
    Rx.SleepsAtFirstWake = Sleeps;
  uint64_t Allowed = 2 * (Sleeps - Rx.SleepsAtFirstWake) + Rx.RingClosings + WakeSlack;
  if (Rx.WakesTaken > Allowed) {
    // Failed here, ended by the housekeeping (not from inside UCX's
    // callback), as any failed peer is.
    if (!Peer->Failed)
      logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
                 "ended " + Peer->Name + ": it sent " + std::to_string(Rx.WakesTaken) +
                     " wakes; this side slept (or looked to) " +
                     std::to_string(Sleeps - Rx.SleepsAtFirstWake) + " times since the first");
    failPeer(Peer);
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return UCS_OK;
  }
  count(Ctx, &tc_stats_t::wakes_received);
  // A sender whose cold ring is closed (askToOpen) without a doorbell.
  if (Peer->Cold)
    startPolling(Ctx, Peer);
  return UCS_OK;
}

namespace twochains::rt {

ucs_status_t setupFramePath(CoreContext *Ctx) {
  // A sender that stored up to a closed ring's limit waits (it may sleep)
  // for it to open: the reopening stores into its line (its sender rings
  // no more, and stores from any sequence: stores that come after these
  // see them), then looks at its sleep flag, as a credit report does.
  Ctx->RingOpened.subscribe([](tc_peer *Peer) {
    if (!Peer->Rx->CreditDirect)
      return;
    __atomic_store_n(&Peer->Rx->CreditDirect[CreditWordLimit], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&Peer->Rx->CreditDirect[CreditWordCold], 0, __ATOMIC_RELEASE);
    if (Peer->Tx->CreditWord)
      wakeIfSleeping(Peer);
  });
  setupSleepLook(Ctx);
  return setControlHandlers(Ctx, {{AmFrame, &onFrame}, {AmCredit, &onCredit}, {AmWake, &onWake}});
}

} // namespace twochains::rt
