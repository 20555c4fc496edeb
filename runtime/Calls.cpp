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
#include "Log.h"
#include "Runtime.h"
#include "twochains/jam.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

using namespace twochains::rt;

struct tc_call {
  tc_context *Ctx;
  tc_peer *Peer;          // null once the call has ended or the peer closed
  uint64_t Sequence;
  void *Reply;
  size_t Capacity;
  size_t ReplySize = 0;
  tc_status_t Status = TC_ERR_INCOMPLETE;
  /// A large answer being received (rendezvous), into Landing: the
  /// application may release the call meanwhile, and its buffer with it.
  bool Receiving = false;
  bool Released = false;
  std::vector<uint8_t> Landing;
};

namespace {

/// Ends a call that is outstanding or receiving: once, counted.
void endCall(struct tc_call *C, tc_status_t St, size_t Size = 0) {
  tc_context *Ctx = C->Ctx;
  if (C->Status != TC_ERR_INCOMPLETE)
    return;
  if (C->Peer && !C->Receiving)
    C->Peer->Tx.Calls.erase(C->Sequence);
  C->Peer = nullptr;
  C->Receiving = false;
  C->Status = St;
  C->ReplySize = St == TC_OK ? Size : 0;
  --Ctx->CallsOutstanding;
  ++(St == TC_OK ? Ctx->Stats.calls_answered : Ctx->Stats.calls_failed);
}

void onReplyData(void *Request, ucs_status_t St, size_t Length, void *Arg) {
  auto *C = static_cast<struct tc_call *>(Arg);
  ucp_request_free(Request);
  if (C->Released) {
    --C->Ctx->CallsOutstanding;
    delete C;
    return;
  }
  if (St == UCS_OK)
    std::memcpy(C->Reply, C->Landing.data(), Length);
  std::vector<uint8_t>().swap(C->Landing);
  endCall(C, St == UCS_OK ? TC_OK : TC_ERR_IO, Length);
}

void onReplySent(void *Request, ucs_status_t, void *Arg) {
  static_cast<tc_context::ReplySend *>(Arg)->Done = true;
  ucp_request_free(Request);
}

bool isStatus(int32_t St) { return St < 0 && St >= TC_ERR_BAD_MANIFEST; }

/// Whether the caller's thread may wait here: never from inside a jam,
/// which would hold the executor for everyone.
bool mayWait(tc_context *Ctx) {
  if (ThreadRunningJamOf != Ctx)
    return true;
  logError("a call was waited for from inside a running jam: refused (jams answer with "
           "tc_jam_return and never wait)");
  return false;
}

} // namespace

namespace twochains::rt {

ucs_status_t onReply(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                     size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<tc_context *>(Arg);
  tc_peer *Peer = (Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)
                      ? peerOfEndpoint(Ctx, Param->reply_ep)
                      : nullptr;
  CallReply H;
  if (!Peer || !Peer->Welcomed || HeaderLength != sizeof H) {
    ++Ctx->Stats.messages_refused;
    return UCS_OK;
  }
  std::memcpy(&H, Header, sizeof H);
  if (H.Magic != HandshakeMagic || H.Reserved || H.Size != Length ||
      (H.Status != TC_OK && (!isStatus(H.Status) || Length))) {
    refuseMessage(Ctx, Peer, "a malformed answer to a call");
    return UCS_OK;
  }
  auto It = Peer->Tx.Calls.find(H.Sequence);
  if (It == Peer->Tx.Calls.end()) {
    // An answer to a frame that was not a call, or to a call released or
    // ended already: expected now and then, and dropped.
    if (!Peer->Tx.Send || H.Sequence >= Peer->Tx.Send->next())
      refuseMessage(Ctx, Peer, "an answer to frame " + std::to_string(H.Sequence) +
                                   ", which was never sent");
    return UCS_OK;
  }
  struct tc_call *C = It->second;
  if (H.Status != TC_OK) {
    logError(Peer->Name + " answered call " + std::to_string(H.Sequence) + ": " +
             tc_status_string(tc_status_t(H.Status)));
    endCall(C, tc_status_t(H.Status));
    return UCS_OK;
  }
  if (Length > C->Capacity) {
    logError(Peer->Name + " answered call " + std::to_string(H.Sequence) + " with " +
             std::to_string(Length) + " bytes; the call allowed " +
             std::to_string(C->Capacity));
    endCall(C, TC_ERR_TOO_LARGE);
    return UCS_OK;
  }
  if (!(Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    if (Length)
      std::memcpy(C->Reply, Data, Length);
    endCall(C, TC_OK, Length);
    return UCS_OK;
  }
  Peer->Tx.Calls.erase(It);
  C->Peer = nullptr; // the peer may be released before the bytes land
  C->Receiving = true;
  C->Landing.resize(Length);
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  P.cb.recv_am = onReplyData;
  P.user_data = C;
  ucs_status_ptr_t R = ucp_am_recv_data_nbx(Ctx->Worker, Data, C->Landing.data(), Length, &P);
  if (!UCS_PTR_IS_PTR(R)) {
    std::memcpy(C->Reply, C->Landing.data(), Length);
    endCall(C, UCS_PTR_IS_ERR(R) ? TC_ERR_IO : TC_OK, Length);
  }
  return UCS_OK;
}

void takeAnswer(tc_peer *Peer, uint64_t CallSequence, const uint8_t *Bytes, size_t Size) {
  auto It = Peer->Tx.Calls.find(CallSequence);
  if (It == Peer->Tx.Calls.end())
    return; // released, timed out, or not a call: dropped
  struct tc_call *C = It->second;
  if (Size > C->Capacity) {
    logError(Peer->Name + " answered call " + std::to_string(CallSequence) + " with " +
             std::to_string(Size) + " bytes; the call allowed " + std::to_string(C->Capacity));
    endCall(C, TC_ERR_TOO_LARGE);
    return;
  }
  if (Size)
    std::memcpy(C->Reply, Bytes, Size);
  endCall(C, TC_OK, Size);
}

void endCallOfFrame(tc_peer *Peer, uint64_t Sequence, tc_status_t St) {
  if (auto It = Peer->Tx.Calls.find(Sequence); It != Peer->Tx.Calls.end())
    endCall(It->second, St);
}

void endCallsOf(tc_peer *Peer, tc_status_t St) {
  while (!Peer->Tx.Calls.empty())
    endCall(Peer->Tx.Calls.begin()->second, St);
}

void sweepReplies(tc_context *Ctx, tc_peer *Releasing) {
  for (auto It = Ctx->ReplySends.begin(); It != Ctx->ReplySends.end();) {
    if (Releasing && It->Peer == Releasing)
      It->Peer = nullptr;
    if (!It->Done) {
      ++It;
      continue;
    }
    if (It->Peer) {
      --It->Peer->Rx.RepliesInFlight;
      It->Peer->Rx.ReplyBytesInFlight -= It->Bytes.size();
    }
    It = Ctx->ReplySends.erase(It);
  }
}

} // namespace twochains::rt

/// Sends the answer (or, with St, why there is none) without waiting.
static tc_status_t sendReply(tc_peer *Peer, uint64_t Sequence, tc_status_t St,
                             const void *Bytes, size_t Size) {
  tc_context *Ctx = Peer->Ctx;
  sweepReplies(Ctx);
  if (Peer->Rx.RepliesInFlight >= MaxRepliesInFlight ||
      Peer->Rx.ReplyBytesInFlight + Size > MaxReplyBytesInFlight)
    return TC_ERR_NO_CREDIT;
  // UCX reads the header and the bytes until the send completes: both
  // live in the context's list until then, whatever the jam does next.
  Ctx->ReplySends.push_back({Peer, {HandshakeMagic, St, Sequence, uint32_t(Size), 0}, {}});
  tc_context::ReplySend &R = Ctx->ReplySends.back();
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
    Ctx->ReplySends.pop_back();
    logError("cannot answer call " + std::to_string(Sequence) + " of " + Peer->Name + ": " +
             ucs_status_string(UCS_PTR_STATUS(Req)));
    return TC_ERR_IO;
  }
  if (!Req) {
    Ctx->ReplySends.pop_back(); // sent at once
  } else {
    ++Peer->Rx.RepliesInFlight;
    Peer->Rx.ReplyBytesInFlight += Size;
  }
  ++Ctx->Stats.replies_sent;
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
  if (Peer->Tx.Send && frameSize(FrameAnswer, 0, uint32_t(std::min<size_t>(ReplySize, UINT32_MAX))) <=
                        Peer->Tx.SlotSize) {
    sendQueued(Peer); // after what is queued already: frames stay in order
    tc_status_t St = Peer->Tx.Queued.empty() ? sendAnswer(Peer, Ctx->Sequence, Reply, ReplySize)
                                          : TC_ERR_NO_CREDIT;
    if (St == TC_ERR_NO_CREDIT) {
      auto *B = static_cast<const uint8_t *>(Reply);
      St = queueFrame(Peer, {nullptr, 0, std::vector<uint8_t>(B, B + ReplySize), Ctx->Sequence});
    }
    if (St == TC_OK)
      ++Peer->Ctx->Stats.replies_sent;
    else if (St == TC_ERR_NO_CREDIT)
      Ctx->Returned = false;
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

extern "C" tc_status_t tc_call_start(tc_peer_t *Peer, const tc_package_t *Pkg,
                                     uint32_t Element, tc_send_mode_t Mode,
                                     const void *Payload, size_t PayloadSize, void *Reply,
                                     size_t ReplyCapacity, tc_call_t **Out) {
  if (!Peer || !Pkg || !Out || (ReplyCapacity && !Reply) ||
      (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED && Mode != TC_SEND_INJECTED_FULL) ||
      (PayloadSize && !Payload) || PayloadSize > UINT32_MAX)
    return TC_ERR_INVALID_PARAM;
  tc_context *Ctx = Peer->Ctx;
  if (!mayWait(Ctx))
    return TC_ERR_INVALID_PARAM;
  HotPathGuard Guard(Ctx);
  uint64_t Seq;
  tc_status_t St = sendLocked(Peer, Pkg, Element, Mode, Payload, PayloadSize, &Seq);
  if (St != TC_OK)
    return St;
  // Registered before anything progresses the worker the answer comes on.
  tc_call_t *C =
      new tc_call_t{Ctx, Peer, Seq, Reply, ReplyCapacity, 0, TC_ERR_INCOMPLETE, false, false, {}};
  Peer->Tx.Calls[Seq] = C;
  ++Ctx->CallsOutstanding;
  *Out = C;
  return TC_OK;
}

/// The call's end, if it has come: TC_ERR_INCOMPLETE while not.
static tc_status_t callResult(struct tc_call *C, size_t *ReplySize) {
  if (C->Status == TC_ERR_INCOMPLETE && C->Peer && C->Peer->Failed)
    endCall(C, TC_ERR_IO);
  if (C->Status == TC_OK && ReplySize)
    *ReplySize = C->ReplySize;
  return C->Status;
}

extern "C" tc_status_t tc_call_test(tc_call_t *C, size_t *ReplySize) {
  if (!C || C->Released || !mayWait(C->Ctx))
    return TC_ERR_INVALID_PARAM;
  tc_context *Ctx = C->Ctx;
  {
    HotPathGuard Guard(Ctx);
    if (tc_status_t St = callResult(C, ReplySize); St != TC_ERR_INCOMPLETE)
      return St;
  }
  if (!Ctx->ExecutorRunning.load(std::memory_order_acquire))
    tc_progress(Ctx, nullptr);
  HotPathGuard Guard(Ctx);
  return callResult(C, ReplySize);
}

extern "C" tc_status_t tc_call_wait(tc_call_t *C, int TimeoutMs, size_t *ReplySize) {
  if (!C || C->Released || TimeoutMs < 0 || !mayWait(C->Ctx))
    return TC_ERR_INVALID_PARAM;
  uint64_t Deadline = nowNs() + uint64_t(TimeoutMs) * 1'000'000;
  for (;;) {
    tc_status_t St = tc_call_test(C, ReplySize);
    if (St != TC_ERR_INCOMPLETE || nowNs() >= Deadline)
      return St;
    // The executor progresses the context: let it.
    if (C->Ctx->ExecutorRunning.load(std::memory_order_acquire))
      std::this_thread::yield();
  }
}

extern "C" void tc_call_release(tc_call_t *C) {
  if (!C || C->Released)
    return;
  tc_context *Ctx = C->Ctx;
  HotPathGuard Guard(Ctx);
  if (C->Receiving) {
    C->Released = true; // deleted when its bytes have landed (onReplyData)
    return;
  }
  if (C->Status == TC_ERR_INCOMPLETE) {
    if (C->Peer)
      C->Peer->Tx.Calls.erase(C->Sequence);
    --Ctx->CallsOutstanding;
  }
  delete C;
}

static tc_status_t callUntil(tc_peer_t *Peer, const tc_package_t *Pkg, uint32_t Element,
                             tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                             void *Reply, size_t Capacity, size_t *ReplySize, int TimeoutMs) {
  if (TimeoutMs < 0)
    return TC_ERR_INVALID_PARAM;
  uint64_t Start = nowNs(), Deadline = Start + uint64_t(TimeoutMs) * 1'000'000;
  tc_call_t *C = nullptr;
  tc_status_t St;
  while ((St = tc_call_start(Peer, Pkg, Element, Mode, Payload, PayloadSize, Reply, Capacity,
                             &C)) == TC_ERR_NO_CREDIT &&
         nowNs() < Deadline)
    tc_progress(Peer->Ctx, nullptr);
  if (St != TC_OK)
    return St == TC_ERR_NO_CREDIT ? TC_ERR_INCOMPLETE : St;
  uint64_t Now = nowNs();
  St = tc_call_wait(C, Now >= Deadline ? 0 : int((Deadline - Now) / 1'000'000), ReplySize);
  tc_call_release(C);
  return St;
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
