//===- PayloadAhead.cpp - Payloads larger than a slot, sent ahead ---------===//
#include "send/PayloadAhead.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "base/Timeouts.h"
#include "core/Lock.h"
#include "core/Stats.h"
#include "path/FramePath.h"
#include "path/Mailbox.h"
#include "ucx/Status.h"
#include "wire/Ring.h"
#include "wire/Wire.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

using namespace twochains::rt;

namespace {

/// A payload's send, held until UCX has moved it (the receiver fetched it,
/// or the endpoint closed): its copy, or (borrowed) the flag its caller's
/// buffer waits on.
struct PayloadInFlight {
  CoreContext *Ctx;
  /// The peer's count of its sends in flight, which outlives the peer.
  std::shared_ptr<std::atomic<unsigned>> Sending;
  SharedPayloadHeader Header; // UCX reads it until the send completes
  std::unique_ptr<uint8_t[]> Bytes;
  std::shared_ptr<std::atomic<bool>> BorrowDone;
  bool OnControl = false;
};

void onPayloadSent(void *Request, ucs_status_t, void *User) {
  auto *P = static_cast<PayloadInFlight *>(User);
  --P->Ctx->PayloadsAheadActive;
  if (P->OnControl)
    --P->Ctx->PayloadsAheadOnControl;
  *P->Sending -= P->Header.Header.Size;
  if (P->BorrowDone)
    P->BorrowDone->store(true, std::memory_order_release);
  delete P;
  ucp_request_free(Request);
}

/// Forgets the borrowed payloads at the front that UCX is done with.
void dropDoneBorrowed(tc_peer *Peer) {
  auto &Borrowed = Peer->Sending->Borrowed;
  while (!Borrowed.empty() && Borrowed.front().Done->load(std::memory_order_acquire))
    Borrowed.pop_front();
}

/// Forgets the payloads of frames the receiver has credited: it freed them
/// before it ran the frame's successors.
void takeCredits(tc_peer *Peer) {
  auto &Ahead = Peer->Sending->PayloadsAhead;
  uint64_t Finished = Peer->Tx->Send->finished();
  while (!Ahead.empty() && Ahead.front().first < Finished) {
    Peer->Sending->PayloadAheadInFlight -= Ahead.front().second;
    Ahead.pop_front();
  }
}

/// Payloads in flight together to one peer, at most (a larger one alone):
/// several large rendezvous at once over one endpoint moved a twentieth of
/// the bytes over TCP (1 MiB payloads: 132 a second with four in flight,
/// 2,852 with one; docs/scaling.md) and a fifth over shared memory, and
/// with no bound 64 KiB ones fell to 0.30-0.36x UCX AM's rate on shared
/// memory. Up to 64 KiB together, 32 KiB ones (two at a time) went at
/// 0.90-0.97x on shared memory, against 0.71-0.73x one at a time, and at
/// 1.00-1.06x over TCP, against 0.70-0.79x (bench/payload-ahead).
constexpr size_t PayloadsTogetherBytes = 64 * 1024;

} // namespace

bool twochains::rt::payloadAheadFits(tc_peer *Peer, size_t Size) {
  if (unsigned InFlight = Peer->Sending->PayloadSending ? Peer->Sending->PayloadSending->load()
                                                        : 0u;
      InFlight && InFlight + Size > PayloadsTogetherBytes)
    return false;
  takeCredits(Peer);
  if (Peer->Sending->PayloadAheadInFlight + Size <= Peer->Sending->PayloadAheadBytes)
    return true;
  if (Peer->Tx->CreditWord)
    Peer->Tx->Send->credit(Peer->Tx->CreditWord[CreditWordFinished]);
  takeCredits(Peer);
  return Peer->Sending->PayloadAheadInFlight + Size <= Peer->Sending->PayloadAheadBytes;
}

tc_status_t twochains::rt::sendPayloadAhead(tc_peer *Peer, uint64_t Sequence, const void *Payload,
                                            size_t Size, PayloadHold Hold, PayloadAhead *Named) {
  CoreContext *Ctx = Peer->Ctx;
  // The control worker is the context's: a channelled peer's caller takes
  // the context too (channel, then context), unless a jam of this context
  // runs on this thread, which holds it already.
  std::unique_lock<std::recursive_mutex> Held;
  if (Peer->Channelled && ThreadRunningJamOf != Ctx) {
    lockContext(Ctx);
    Held = std::unique_lock<std::recursive_mutex>(Ctx->Lock, std::adopt_lock);
  }
  // By the RMA endpoint where the receiver takes them there: shared
  // memory or CMA on one host, RDMA between hosts; else the control one.
  bool ByRma = Peer->Sending->PayloadsByRma;
  ucp_ep_h Ep = ByRma ? dataEndpoint(Ctx, Peer) : Peer->Ep;
  if (Peer->Failed || !Ep)
    return TC_ERR_IO;
  if (!Peer->Sending->PayloadSending)
    Peer->Sending->PayloadSending = std::make_shared<std::atomic<unsigned>>(0);
  auto *Copy = new (std::nothrow) PayloadInFlight{Ctx, Peer->Sending->PayloadSending, {}, {}, {}};
  if (!Copy)
    return TC_ERR_NO_MEMORY;
  const void *Bytes = Payload;
  if (Hold == PayloadHold::Copy) {
    if (!(Copy->Bytes = std::unique_ptr<uint8_t[]>(new (std::nothrow) uint8_t[Size]))) {
      delete Copy;
      return TC_ERR_NO_MEMORY;
    }
    std::memcpy(Copy->Bytes.get(), Payload, Size);
    Bytes = Copy->Bytes.get();
  } else if (!(Copy->BorrowDone = std::make_shared<std::atomic<bool>>(false))) {
    delete Copy;
    return TC_ERR_NO_MEMORY;
  }
  Copy->Header.Header = {PayloadMagic, uint32_t(Size), Sequence};
  // A connection of shared memory names itself to the receiver's RMA
  // worker, which may hold no endpoint to this side yet.
  size_t HeaderBytes = sizeof(PayloadHeader);
  if (ByRma && Peer->Rx->Shared) {
    std::memcpy(Copy->Header.Token, Peer->Tx->MailboxToken, sizeof Copy->Header.Token);
    HeaderBytes = sizeof(SharedPayloadHeader);
  }
  ucp_request_param_t P = {};
  P.op_attr_mask =
      UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  P.flags = UCP_AM_SEND_FLAG_REPLY;
  P.cb.send = onPayloadSent;
  P.user_data = Copy;
  ucs_status_ptr_t R = ucp_am_send_nbx(Ep, AmPayload, &Copy->Header, HeaderBytes, Bytes, Size, &P);
  if (UCS_PTR_IS_ERR(R)) {
    delete Copy;
    logError(Peer->Name + ": cannot send a " + std::to_string(Size) +
             "-byte payload ahead of its frame: " + ucs_status_string(UCS_PTR_STATUS(R)));
    return TC_ERR_IO;
  }
  if (R) {
    // onPayloadSent frees the copy. The rendezvous starts as the worker
    // turns: once now, rather than at the caller's next tc_progress.
    ++Ctx->PayloadsAheadActive;
    *Copy->Sending += uint32_t(Size);
    // Before the turn below, which may complete it.
    if (Copy->BorrowDone)
      Peer->Sending->Borrowed.push_back({Peer->Tx->Send->framesSent() - 1, Copy->BorrowDone});
    if (ByRma) {
      ucp_worker_progress(Ctx->DataWorker);
    } else {
      Copy->OnControl = true;
      ++Ctx->PayloadsAheadOnControl;
      progressControl(Ctx);
    }
  } else {
    delete Copy; // sent already (eager: copied by UCX)
  }
  Peer->Sending->PayloadsAhead.emplace_back(Sequence, uint32_t(Size));
  Peer->Sending->PayloadAheadInFlight += Size;
  count(Ctx, &tc_stats_t::payloads_ahead_sent);
  count(Ctx, &tc_stats_t::payload_ahead_bytes_sent, Size);
  if (ByRma)
    count(Ctx, &tc_stats_t::payloads_ahead_by_rma);
  *Named = {PayloadAheadMagic, uint32_t(Size), Sequence, {0, 0}};
  return TC_OK;
}

void twochains::rt::finishPayloadsAhead(tc_peer *Peer) {
  CoreContext *Ctx = Peer->Ctx;
  if (!Peer->Sending->PayloadsByRma || !Peer->Sending->PayloadSending || !Ctx->DataWorker)
    return;
  uint64_t Deadline = nowNs() +
                      (Peer->Failed ? ReleaseFailedFlushTimeoutNs : ReleaseFlushTimeoutNs);
  while (*Peer->Sending->PayloadSending && nowNs() < Deadline)
    ucp_worker_progress(Ctx->DataWorker);
}

uint64_t twochains::rt::framesDoneWith(tc_peer *Peer, uint64_t Finished) {
  dropDoneBorrowed(Peer);
  if (Peer->Sending->Borrowed.empty())
    return Finished;
  return std::min(Finished, Peer->Sending->Borrowed.front().FramesBefore);
}

bool twochains::rt::payloadsBorrowed(tc_peer *Peer) {
  dropDoneBorrowed(Peer);
  return !Peer->Sending->Borrowed.empty();
}
