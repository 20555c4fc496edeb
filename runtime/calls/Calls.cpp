//===- Calls.cpp - A frame and its answer: tc_call and tc_jam_return ------===//
//
//   caller   -> receiver  a frame, as tc_send sends it (sequence S)
//   receiver -> caller    REPLY { status, S, size } answer bytes
//
// A call is named by its frame's sequence on the connection, so frames
// need no field of their own and every send mode can be a call. The jam
// answers with tc_jam_return; the answer travels as an active message on
// the control connection (rendezvous for large ones: UCX moves the bytes by
// RMA where it can), never waited for on the receiver, whose answers in
// flight to one caller are bounded. A frame the receiver abandons (fault,
// time limit, quarantine) ends its call through the credit line's fault
// report; a peer that goes ends all of its calls.
//
// The caller takes an answer only from the peer it called, for a call
// still outstanding, of at most the size the call allowed: anything else is
// dropped before a byte of it is received.
//
//===----------------------------------------------------------------------===//
#include "calls/Calls.h"
#include "calls/PeerCalls.h"

#include "base/Log.h"
#include "base/Timeouts.h"
#include "base/StatusString.h"
#include "control/ControlMessage.h"
#include "core/Lock.h"
#include "core/Sleep.h"
#include "core/Stats.h"
#include "send/Send.h"
#include "wireup/Wireup.h"
#include "twochains/jam.h"
#include "wire/Frame.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

using namespace twochains::rt;

struct tc_call {
  CoreContext *Ctx;
  /// The peer called, which keeps the call (PeerCalls) until it is
  /// released; null once the peer is closed.
  tc_peer *Owner;
  uint64_t Sequence;
  void *Reply;
  size_t Capacity;
  size_t ReplySize = 0;
  tc_status_t Status = TC_ERR_INCOMPLETE;
};

namespace {

/// Calls given up on per peer whose late answers are told apart.
constexpr size_t MaxCallsGivenUp = 64;

/// Ends a call that is outstanding: once, counted. The caller holds the
/// call's peer (its channel, or the context).
void endCall(struct tc_call *C, tc_status_t St, size_t Size = 0) {
  CoreContext *Ctx = C->Ctx;
  if (C->Status != TC_ERR_INCOMPLETE)
    return;
  C->Status = St;
  C->ReplySize = St == TC_OK ? Size : 0;
  --Ctx->Calls->CallsOutstanding;
  count(Ctx, St == TC_OK ? &tc_stats_t::calls_answered : &tc_stats_t::calls_failed);
  // Its caller may be asleep behind the executor, which ended it.
  if (Ctx->WakeWaiters.load(std::memory_order_relaxed) > 0)
    notifySleepers(Ctx);
}

void onAnswerBody(void *Arg, tc_status_t St) {
  auto *A = static_cast<CallsContext::ArrivedAnswer *>(Arg);
  if (St != TC_OK)
    A->Status = TC_ERR_IO;
  A->Received = true;
}

void onReplySent(void *Request, ucs_status_t, void *Arg) {
  static_cast<CallsContext::ReplySend *>(Arg)->Done = true;
  ucp_request_free(Request);
}

bool isStatus(int32_t St) { return St < 0 && St >= TC_ERR_UNTRUSTED; }

/// Whether the caller's thread may wait here: never from inside a jam,
/// which would hold the executor for everyone.
bool mayWait(CoreContext *Ctx) {
  if (ThreadRunningJamOf != Ctx)
    return true;
  logError("a call was waited for from inside a running jam: refused (jams answer with "
           "tc_jam_return and never wait)");
  return false;
}

/// The call an answer is for, ended with it; anything else is dropped.
void answerCall(tc_peer *Peer, uint64_t CallSequence, tc_status_t St, const uint8_t *Bytes,
                size_t Size) {
  PeerCalls &Of = callsOf(Peer);
  auto It = Of.Waiting.find(CallSequence);
  if (It == Of.Waiting.end() || It->second->Status != TC_ERR_INCOMPLETE) {
    // Its caller gave up on it (timed out): said, so that an answer that
    // came late is not taken for one lost. Anything else (a frame that
    // was no call, an answer twice) is dropped unsaid.
    auto &GivenUp = Of.GivenUp;
    if (auto G = std::find(GivenUp.begin(), GivenUp.end(), CallSequence); G != GivenUp.end()) {
      GivenUp.erase(G);
      logLimited(Peer->AnswerLog, TC_LOG_WARN,
                 Peer->Name + " answered call " + std::to_string(CallSequence) +
                     " after its caller gave up on it: the answer is dropped");
    }
    return;
  }
  struct tc_call *C = It->second;
  if (St != TC_OK) {
    logLimited(Peer->AnswerLog, TC_LOG_ERROR,
               Peer->Name + " answered call " + std::to_string(CallSequence) + ": " +
                   statusString(St));
    endCall(C, St);
    return;
  }
  if (Size > C->Capacity) {
    logLimited(Peer->AnswerLog, TC_LOG_ERROR,
               Peer->Name + " answered call " + std::to_string(CallSequence) + " with " +
                   std::to_string(Size) + " bytes; the call allowed " +
                   std::to_string(C->Capacity));
    endCall(C, TC_ERR_TOO_LARGE);
    return;
  }
  if (Size)
    std::memcpy(C->Reply, Bytes, Size);
  endCall(C, TC_OK, Size);
}

} // namespace

namespace twochains::rt {

/// An answer by message. Only queued here, bounded: matching it to its
/// call needs the peer's channel, which the thread progressing the worker
/// may not wait for (takeArrivedAnswers matches it, on the peer's turn).
static ucs_status_t onReply(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                            size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  tc_peer *Peer = senderOf(Ctx, Param);
  CallReply H;
  if (!Peer || !Peer->Welcomed || HeaderLength != sizeof H) {
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return UCS_OK;
  }
  std::memcpy(&H, Header, sizeof H);
  if (H.Magic != ReplyMagic || H.Reserved || H.Size != Length ||
      Length > TC_CALL_MAX_REPLY || (H.Status != TC_OK && (!isStatus(H.Status) || Length))) {
    refuseMessage(Ctx, Peer, "a malformed answer to a call");
    return UCS_OK;
  }
  if (!Peer->Tx->Send || H.Sequence >= Peer->Tx->Send->next()) {
    refuseMessage(Ctx, Peer, "an answer to frame " + std::to_string(H.Sequence) +
                                 ", which was never sent");
    return UCS_OK;
  }
  size_t Held = 0, HeldBytes = 0;
  for (const CallsContext::ArrivedAnswer &A : Ctx->Calls->ArrivedAnswers)
    if (A.From == Param->reply_ep) {
      ++Held;
      HeldBytes += A.Bytes.size();
    }
  bool PlaceLeft = Held < MaxArrivedAnswersPerPeer &&
                   Ctx->Calls->ArrivedAnswers.size() < MaxArrivedAnswers;
  if (!PlaceLeft || HeldBytes + Length > MaxArrivedAnswerBytesPerPeer ||
      Ctx->Calls->ArrivedAnswerBytes + Length > MaxArrivedAnswerBytes) {
    countHeld(Ctx, &tc_stats_t::shares_full);
    logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
               "refused a " + std::to_string(Length) + "-byte answer to call " +
                   std::to_string(H.Sequence) + " from " + Peer->Name + ": it has " +
                   std::to_string(Held) + " answers (" + std::to_string(HeldBytes) +
                   " bytes) waiting, its share is " + std::to_string(MaxArrivedAnswersPerPeer) +
                   " (" + std::to_string(MaxArrivedAnswerBytesPerPeer) + " bytes), all peers' " +
                   std::to_string(Ctx->Calls->ArrivedAnswers.size()) + " (" +
                   std::to_string(Ctx->Calls->ArrivedAnswerBytes) + " bytes) of " +
                   std::to_string(MaxArrivedAnswers) + " (" +
                   std::to_string(MaxArrivedAnswerBytes) + ")");
    // Its call still ends, with why, where a place without bytes is left:
    // the caller learns at once rather than at its wait's end.
    if (PlaceLeft)
      Ctx->Calls->ArrivedAnswers.push_back(
          {Param->reply_ep, H.Sequence, TC_ERR_NO_CREDIT, {}, true, /*Refused=*/true});
    return UCS_OK;
  }
  Ctx->Calls->ArrivedAnswers.push_back(
      {Param->reply_ep, H.Sequence, tc_status_t(H.Status), {}, false});
  CallsContext::ArrivedAnswer &A = Ctx->Calls->ArrivedAnswers.back();
  Ctx->Calls->ArrivedAnswerBytes += Length;
  A.Bytes.resize(Length);
  // List elements stay where they are until erased, which waits for Received.
  receiveBody(Ctx, Data, Length, Param, A.Bytes.data(), onAnswerBody, &A);
  return UCS_OK;
}

static void endCallOfFrame(tc_peer *Peer, uint64_t Sequence, tc_status_t St);

/// An answer frame arrived from the peer (checked): its call ends.
static void takeAnswer(tc_peer *Peer, uint64_t CallSequence, const uint8_t *Bytes, size_t Size) {
  answerCall(Peer, CallSequence, TC_OK, Bytes, Size);
}

void takeArrivedAnswers(tc_peer *Peer) {
  auto *Ctx = Peer->Ctx;
  for (auto It = Ctx->Calls->ArrivedAnswers.begin(); It != Ctx->Calls->ArrivedAnswers.end();) {
    if (It->From != Peer->Ep || !It->Received) {
      ++It;
      continue;
    }
    if (It->Refused) // logged when refused
      endCallOfFrame(Peer, It->Sequence, It->Status);
    else
      answerCall(Peer, It->Sequence, It->Status, It->Bytes.data(), It->Bytes.size());
    Ctx->Calls->ArrivedAnswerBytes -= It->Bytes.size();
    It = Ctx->Calls->ArrivedAnswers.erase(It);
  }
}

/// Housekeeping: drops answers whose peer is gone.
static void dropStrayAnswers(CoreContext *Ctx) {
  for (auto It = Ctx->Calls->ArrivedAnswers.begin(); It != Ctx->Calls->ArrivedAnswers.end();) {
    if (!It->Received || peerOfEndpoint(Ctx, It->From)) {
      ++It;
      continue;
    }
    Ctx->Calls->ArrivedAnswerBytes -= It->Bytes.size();
    It = Ctx->Calls->ArrivedAnswers.erase(It);
  }
}

/// Caller: the call whose frame the peer abandoned ends with St.
static void endCallOfFrame(tc_peer *Peer, uint64_t Sequence, tc_status_t St) {
  PeerCalls &Of = callsOf(Peer);
  if (auto It = Of.Waiting.find(Sequence); It != Of.Waiting.end())
    endCall(It->second, St);
}

/// Caller: a call whose frame was queued (kept by Key) is kept by its
/// frame's sequence once the frame is sent, so that its answer finds it.
static void keepCallBySequence(tc_peer *Peer, uint64_t Key, uint64_t Sequence) {
  PeerCalls &Of = callsOf(Peer);
  auto It = Of.Waiting.find(Key);
  if (It == Of.Waiting.end())
    return; // released before its frame left: its answer is dropped
  struct tc_call *C = It->second;
  Of.Waiting.erase(It);
  C->Sequence = Sequence;
  Of.Waiting[Sequence] = C;
}

/// Caller: every call to the peer ends with St (it is closed or gone).
static void endCallsOf(tc_peer *Peer, tc_status_t St) {
  PeerCalls &Of = callsOf(Peer);
  for (auto &[Sequence, C] : Of.Waiting) {
    endCall(C, St);
    C->Owner = nullptr; // the application still releases it
  }
  Of.Waiting.clear();
}

/// Receiver: forgets answers UCX has finished with; a peer being released
/// is forgotten by the answers still in flight to it.
static void sweepReplies(CoreContext *Ctx, tc_peer *Releasing = nullptr) {
  for (auto It = Ctx->Calls->ReplySends.begin(); It != Ctx->Calls->ReplySends.end();) {
    if (Releasing && It->Peer == Releasing)
      It->Peer = nullptr;
    if (!It->Done) {
      ++It;
      continue;
    }
    if (It->Peer) {
      PeerCalls &Of = callsOf(It->Peer);
      --Of.RepliesInFlight;
      Of.ReplyBytesInFlight -= It->Bytes.size();
    }
    It = Ctx->Calls->ReplySends.erase(It);
  }
}

} // namespace twochains::rt

/// Housekeeping: what the calls layer does on the control turn.
static void callsHousekeeping(CoreContext *Ctx) {
  sweepReplies(Ctx);
  dropStrayAnswers(Ctx);
}

/// A peer released (wireup's hook): its calls end, its answers are forgotten.
static void forgetPeer(CoreContext *Ctx, tc_peer *Peer) {
  endCallsOf(Peer, TC_ERR_IO);
  sweepReplies(Ctx, Peer);
}

ucs_status_t twochains::rt::setupCalls(CoreContext *Ctx) {
  Ctx->Path->AnswerFrame.subscribe(takeAnswer);
  Ctx->Path->FrameAbandoned.subscribe(endCallOfFrame);
  Ctx->Path->CallSent.subscribe(keepCallBySequence);
  Ctx->Wireup->PeerReleased.subscribe(forgetPeer);
  addHousekeeping(Ctx, callsHousekeeping);
  return setControlHandlers(Ctx, {{AmReply, &onReply}});
}

/// Sends the answer (or, with St, why there is none) without waiting.
static tc_status_t sendReply(tc_peer *Peer, uint64_t Sequence, tc_status_t St,
                             const void *Bytes, size_t Size) {
  auto *Ctx = Peer->Ctx;
  sweepReplies(Ctx);
  if (Peer->Failed || !Peer->Ep)
    return TC_ERR_IO;
  PeerCalls &Of = callsOf(Peer);
  if (Of.RepliesInFlight >= MaxRepliesInFlight ||
      Of.ReplyBytesInFlight + Size > MaxReplyBytesInFlight)
    return TC_ERR_NO_CREDIT;
  // UCX reads the header and the bytes until the send completes: both
  // live in the context's list until then, whatever the jam does next.
  Ctx->Calls->ReplySends.push_back({Peer, {ReplyMagic, St, Sequence, uint32_t(Size), 0}, {}});
  CallsContext::ReplySend &R = Ctx->Calls->ReplySends.back();
  auto *B = static_cast<const uint8_t *>(Bytes);
  R.Bytes.assign(B, B + Size);
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK |
                   UCP_OP_ATTR_FIELD_USER_DATA;
  P.flags = UCP_AM_SEND_FLAG_REPLY;
  P.cb.send = onReplySent;
  P.user_data = &R;
  ucs_status_ptr_t Req =
      ucp_am_send_nbx(Peer->Ep, AmReply, &R.Header, sizeof R.Header, R.Bytes.data(), Size, &P);
  if (UCS_PTR_IS_ERR(Req)) {
    Ctx->Calls->ReplySends.pop_back();
    logError("cannot answer call " + std::to_string(Sequence) + " of " + Peer->Name + ": " +
             ucs_status_string(UCS_PTR_STATUS(Req)));
    return TC_ERR_IO;
  }
  if (!Req) {
    Ctx->Calls->ReplySends.pop_back(); // sent at once
  } else {
    ++Of.RepliesInFlight;
    Of.ReplyBytesInFlight += Size;
  }
  countHeld(Ctx, &tc_stats_t::replies_sent);
  return TC_OK;
}

extern "C" int tc_jam_return(tc_jam_ctx_t *Ctx, const void *Reply, size_t ReplySize) {
  if (!Ctx || (ReplySize && !Reply))
    return TC_ERR_INVALID_PARAM;
  if (Ctx->Returned)
    return TC_ERR_INVALID_PARAM;
  tc_peer *Peer = Ctx->Peer;
  if (Peer->Failed || !Peer->Ep)
    return TC_ERR_IO;
  Ctx->Returned = true;
  // An answer that fits a slot is a frame, like any other put into the
  // caller's ring: one put over shared memory or RDMA, queued (bounded)
  // while the ring is full.
  if (Peer->Tx->Send &&
      frameSize(FrameAnswer, 0, uint32_t(std::min<size_t>(ReplySize, UINT32_MAX))) <=
          Peer->Tx->SlotSize) {
    sendQueued(Peer); // after what is queued already: frames stay in order
    tc_status_t St = Peer->Sending->Queued.empty()
                         ? sendAnswer(Peer, Ctx->Sequence, Reply, ReplySize)
                         : TC_ERR_NO_CREDIT;
    if (St == TC_ERR_NO_CREDIT) {
      auto *B = static_cast<const uint8_t *>(Reply);
      St = queueFrame(Peer, {nullptr, 0, std::vector<uint8_t>(B, B + ReplySize), Ctx->Sequence});
    }
    if (St == TC_OK)
      countHeld(Peer->Ctx, &tc_stats_t::replies_sent);
    else if (St == TC_ERR_NO_CREDIT)
      Ctx->Returned = false;
    if (St != TC_OK)
      logLimited(Peer->AnswerLog, TC_LOG_ERROR,
                 "the answer to call " + std::to_string(Ctx->Sequence) + " of " + Peer->Name +
                     " was not sent: " + statusString(St) +
                     (St == TC_ERR_NO_CREDIT ? " (its ring and queue are full; the jam may "
                                               "answer again)"
                                             : ""));
    return St;
  }
  if (ReplySize > TC_CALL_MAX_REPLY) {
    logError("a jam answered call " + std::to_string(Ctx->Sequence) + " of " + Peer->Name +
             " with " + std::to_string(ReplySize) + " bytes; answers hold at most " +
             std::to_string(TC_CALL_MAX_REPLY));
    sendReply(Peer, Ctx->Sequence, TC_ERR_TOO_LARGE, nullptr, 0);
    return TC_ERR_TOO_LARGE;
  }
  tc_status_t St = sendReply(Peer, Ctx->Sequence, TC_OK, Reply, ReplySize);
  if (St == TC_ERR_NO_CREDIT)
    Ctx->Returned = false; // nothing went: the jam may answer smaller
  return St;
}

/// NowNs: the clock as the caller read it (0: not read).
static tc_status_t startCall(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                             tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                             void *Reply, size_t ReplyCapacity, tc_call_t **Out,
                             uint64_t NowNs = 0) {
  if (!Peer || !Pkg || !Out || (ReplyCapacity && !Reply) ||
      (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED && Mode != TC_SEND_INJECTED_FULL) ||
      (PayloadSize && !Payload) || PayloadSize > UINT32_MAX)
    return TC_ERR_INVALID_PARAM;
  auto *Ctx = Peer->Ctx;
  if (!mayWait(Ctx))
    return TC_ERR_INVALID_PARAM;
  // A handle: its connection, once made (until then, as a full ring).
  if (Peer->Proxy) {
    tc_peer *Bound = connectionOf(Peer);
    if (!Bound)
      return Peer->ProxyGone ? TC_ERR_IO : TC_ERR_NO_CREDIT;
    Peer = Bound;
  }
  PeerGuard Guard(Peer);
  uint64_t Seq;
  tc_status_t St = sendLocked(Peer, Pkg, Element, Mode, Payload, PayloadSize, &Seq);
  if (St != TC_OK)
    return St;
  // Registered before anything progresses the worker the answer comes on;
  // a queued frame's call by a key until the frame is sent.
  tc_call_t *C = new tc_call_t{Ctx, Peer, Seq, Reply, ReplyCapacity, 0, TC_ERR_INCOMPLETE};
  callsOf(Peer).Waiting[Seq] = C;
  if (Ctx->Calls->CallsOutstanding++ == 0)
    Ctx->Calls->beginControlQuiet(NowNs ? NowNs : nowNs());
  *Out = C;
  return TC_OK;
}

/// What a call's test or release holds: its peer, as a send to it would.
class CallGuard {
public:
  explicit CallGuard(struct tc_call *C) {
    if (C->Owner)
      Peer.emplace(C->Owner);
    else
      Context.emplace(C->Ctx);
  }

private:
  std::optional<PeerGuard> Peer;
  std::optional<HotPathGuard> Context;
};

/// The call's end, if it has come: TC_ERR_INCOMPLETE while not.
static tc_status_t callResult(struct tc_call *C, size_t *ReplySize) {
  if (C->Status == TC_ERR_INCOMPLETE && C->Owner && C->Owner->Failed)
    endCall(C, TC_ERR_IO);
  if (C->Status == TC_OK && ReplySize)
    *ReplySize = C->ReplySize;
  return C->Status;
}

/// *Ran: the frames this look ran for others (the caller serves them while
/// it waits).
static tc_status_t testCall(tc_call_t *C, size_t *ReplySize, unsigned *Ran = nullptr) {
  if (!C || !mayWait(C->Ctx))
    return TC_ERR_INVALID_PARAM;
  CoreContext *Ctx = C->Ctx;
  {
    CallGuard Guard(C);
    if (tc_status_t St = callResult(C, ReplySize); St != TC_ERR_INCOMPLETE)
      return St;
  }
  if (!Ctx->ExecutorRunning.load(std::memory_order_acquire)) {
    unsigned N = Ctx->Progress(Ctx);
    if (Ran)
      *Ran = N;
  }
  CallGuard Guard(C);
  return callResult(C, ReplySize);
}

/// A wait's passes between two reads of the clock: in this VM a read
/// (a vDSO call) costs about what a pass does, and a pass that reads it
/// sees an answer that much later; at most a microsecond or so between
/// reads, beside waits that poll 5 us before they yield.
constexpr unsigned WaitPassesPerClock = 8;

static tc_status_t waitCallUntil(tc_call_t *C, uint64_t Deadline, size_t *ReplySize) {
  IdleWait Idle;
  for (unsigned Pass = 0;; ++Pass) {
    unsigned Ran = 0;
    tc_status_t St = testCall(C, ReplySize, &Ran);
    if (St != TC_ERR_INCOMPLETE)
      return St;
    // Serving others' frames is no idle time: a waiter that sleeps
    // between them (its streak long over) makes every rank that calls it
    // wait for its wakes.
    if (Ran)
      Idle.busy();
    if (Pass % WaitPassesPerClock == 0) {
      uint64_t Now = nowNs();
      if (Now >= Deadline)
        return TC_ERR_TIMED_OUT; // still outstanding
      C->Ctx->Calls->endControlQuiet(Now);
      // Polls a while, then sleeps until something arrives.
      Idle.idle(C->Ctx, Now, Deadline);
    }
    // With the executor running, progress here too whenever it is not
    // (its thread may wait for a CPU a whole scheduler tick); else let it.
    CoreContext *Ctx = C->Ctx;
    if (Ctx->ExecutorRunning.load(std::memory_order_acquire)) {
      if (Ctx->Lock.try_lock()) {
        Ctx->Progress(Ctx);
        Ctx->Lock.unlock();
      } else {
        std::this_thread::yield();
      }
    }
  }
}

static tc_status_t waitCall(tc_call_t *C, int TimeoutMs, size_t *ReplySize) {
  if (!C || TimeoutMs < 0 || !mayWait(C->Ctx))
    return TC_ERR_INVALID_PARAM;
  return waitCallUntil(C, nowNs() + msToNs(uint64_t(TimeoutMs)), ReplySize);
}

static void releaseCall(tc_call_t *C) {
  {
    CallGuard Guard(C);
    if (C->Owner)
      callsOf(C->Owner).Waiting.erase(C->Sequence);
    if (C->Status == TC_ERR_INCOMPLETE) {
      --C->Ctx->Calls->CallsOutstanding;
      if (C->Owner && !(C->Sequence & QueuedCallKey)) {
        auto &GivenUp = callsOf(C->Owner).GivenUp;
        if (GivenUp.size() >= MaxCallsGivenUp)
          GivenUp.pop_front();
        GivenUp.push_back(C->Sequence);
      }
    }
  }
  delete C;
}

static tc_status_t callUntil(tc_peer_t *Peer, const tc_package_t *Pkg, uint32_t Element,
                             tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                             void *Reply, size_t Capacity, size_t *ReplySize, int TimeoutMs) {
  if (TimeoutMs < 0)
    return TC_ERR_INVALID_PARAM;
  uint64_t Start = nowNs(), Deadline = Start + msToNs(uint64_t(TimeoutMs));
  tc_call_t *C = nullptr;
  tc_status_t St;
  IdleWait Idle;
  for (uint64_t Now; (St = startCall(Peer, Pkg, Element, Mode, Payload, PayloadSize, Reply,
                                     Capacity, &C, Start)) == TC_ERR_NO_CREDIT &&
                     (Now = nowNs()) < Deadline;) {
    if (Peer->Ctx->Progress(Peer->Ctx))
      Idle.busy();
    Idle.idle(Peer->Ctx, Now, Deadline); // until credits come
  }
  if (St != TC_OK)
    return St == TC_ERR_NO_CREDIT ? TC_ERR_TIMED_OUT : St;
  St = mayWait(C->Ctx) ? waitCallUntil(C, Deadline, ReplySize) : TC_ERR_INVALID_PARAM;
  releaseCall(C);
  return St;
}

extern "C" tc_status_t tc_call_start(tc_peer_t *Peer, const tc_package_t *Pkg,
                                     uint32_t Element, tc_send_mode_t Mode,
                                     const void *Payload, size_t PayloadSize, void *Reply,
                                     size_t ReplyCapacity, tc_call_t **Out) {
  return startCall(Peer, Pkg, Element, Mode, Payload, PayloadSize, Reply, ReplyCapacity, Out);
}

extern "C" tc_status_t tc_call_test(tc_call_t *C, size_t *ReplySize) {
  return testCall(C, ReplySize);
}

extern "C" tc_status_t tc_call_wait(tc_call_t *C, int TimeoutMs, size_t *ReplySize) {
  return waitCall(C, TimeoutMs, ReplySize);
}

extern "C" void tc_call_release(tc_call_t *C) {
  if (C)
    releaseCall(C);
}

extern "C" tc_status_t tc_call(tc_peer_t *Peer, const tc_package_t *Pkg, uint32_t Element,
                               tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                               void *Reply, size_t Capacity, size_t *ReplySize,
                               int TimeoutMs) {
  return callUntil(Peer, Pkg, Element, Mode, Payload, PayloadSize, Reply, Capacity, ReplySize,
                   TimeoutMs);
}

extern "C" tc_status_t tc_call_args(tc_peer_t *Peer, const tc_package_t *Pkg,
                                    uint32_t Element, tc_send_mode_t Mode, const void *Args,
                                    void *Reply, size_t Capacity, size_t *ReplySize,
                                    int TimeoutMs) {
  const uint8_t *Payload;
  size_t Size;
  if (tc_status_t St = payloadFromArgs(Peer, Pkg, Element, Args, &Payload, &Size); St != TC_OK)
    return St;
  // The scratch payload is this thread's: copied, since waiting may run
  // frames whose jams build payloads of their own.
  std::vector<uint8_t> Copy(Payload, Payload + Size);
  return callUntil(Peer, Pkg, Element, Mode, Copy.data(), Copy.size(), Reply, Capacity,
                   ReplySize, TimeoutMs);
}
