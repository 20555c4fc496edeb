//===- Flush.cpp - tc_flush, tc_peer_cork and what a peer has sent ---------===//
//
// A flush waits until every frame sent to a peer has run there (its
// credits back, nothing queued, every put complete), progressing and then
// sleeping until a credit report or a message comes; on a job's handle it
// waits for the connection first. A fault or a dropped frame seen since
// the last flush is its answer.
//
//===----------------------------------------------------------------------===//
#include "send/Send.h"
#include "send/Bundle.h"
#include "send/PayloadAhead.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "core/Lock.h"
#include "core/Sleep.h"
#include "core/Stats.h"
#include "path/FramePath.h"

#include <mutex>

using namespace twochains::rt;

extern "C" tc_status_t tc_peer_frames(tc_peer_t *Peer, tc_peer_frames_t *Out) {
  if (!Peer || !Out)
    return TC_ERR_INVALID_PARAM;
  tc_peer_frames_t F = {};
  if (Peer->Proxy) {
    PeerGuard Guard(Peer); // a handle is never channelled: the context
    F.queued = Peer->Sending->Queued.size();
    Peer = connectionOf(Peer);
  }
  if (Peer) {
    PeerGuard Guard(Peer);
    F.queued += Peer->Sending->Queued.size();
    if (Peer->Tx->Send) {
      if (Peer->Tx->CreditWord)
        Peer->Tx->Send->credit(Peer->Tx->CreditWord[CreditWordFinished]);
      F.sent = Peer->Tx->Send->framesSent();
      F.finished = framesDoneWith(Peer, Peer->Tx->Send->framesFinished());
    }
  }
  *Out = F;
  return TC_OK;
}

extern "C" tc_status_t tc_peer_cork(tc_peer_t *Peer, int Corked) {
  if (!Peer)
    return TC_ERR_INVALID_PARAM;
  if (Peer->Proxy) {
    PeerGuard Guard(Peer);
    keepCork(Peer, Corked != 0); // taken by its connection when made
    if (!(Peer = connectionOf(Peer)))
      return TC_OK;
  }
  PeerGuard Guard(Peer);
  if (!Peer->Welcomed || Peer->Failed)
    return TC_ERR_IO;
  return corkFrames(Peer, Corked != 0) == TC_OK ? TC_OK : TC_ERR_IO;
}

extern "C" tc_status_t tc_peer_aggregate(tc_peer_t *Peer, int On) {
  if (!Peer)
    return TC_ERR_INVALID_PARAM;
  if (Peer->Proxy) {
    PeerGuard Guard(Peer);
    Peer->Sending->Aggregate = On != 0; // taken by its connection when made
    if (!(Peer = connectionOf(Peer)))
      return TC_OK;
  }
  PeerGuard Guard(Peer);
  if (!Peer->Welcomed || Peer->Failed)
    return TC_ERR_IO;
  if (!On)
    sealOpenBundle(Peer);
  Peer->Sending->Aggregate = On != 0;
  return TC_OK;
}

/// How long a flush to an RMA peer waits before it turns the control
/// worker too (flushPeer).
static constexpr uint64_t ControlQuietInFlushNs = 20'000;

tc_status_t twochains::rt::flushPeer(tc_peer *Peer, int TimeoutMs) {
  uint64_t Deadline = nowNs() + msToNs(TimeoutMs > 0 ? TimeoutMs : 0);
  CoreContext *Ctx = Peer->Ctx;
  IdleWait Idle;
  bool Asked = false;
  const uint64_t Start = nowNs();
  for (;;) {
    // A channel flushes on its own; the context's worker, where a failure
    // shows, is turned only if no other thread has the context.
    std::unique_lock<std::recursive_mutex> Channel(Peer->Channel, std::defer_lock),
        Context(Ctx->Lock, std::defer_lock);
    if (Peer->Channelled) {
      Channel.lock();
    } else {
      lockContext(Ctx);
      Context = std::unique_lock<std::recursive_mutex>(Ctx->Lock, std::adopt_lock);
    }
    if (flushFrameBatch(Peer) != TC_OK)
      return TC_ERR_IO;
    sealOpenBundle(Peer);
    resendMissing(Peer);
    takeFaultReport(Peer);
    Peer->Tx->Send->credit(Peer->Tx->CreditWord[CreditWordFinished]);
    sendQueued(Peer);
    // Done when every frame has run there and UCX reads no caller's
    // buffer any more (TC_SEND_NO_COPY).
    if (Peer->Tx->Send->available() == Peer->Tx->Slots && Peer->Sending->Queued.empty() &&
        !payloadsBorrowed(Peer)) {
      for (uint32_t Slot = 0; Slot < Peer->Tx->Puts.size(); ++Slot)
        if (completePut(Peer, Slot) != TC_OK)
          return TC_ERR_IO;
      if (tc_status_t Dropped = Peer->Sending->DroppedUnflushed; Dropped != TC_OK) {
        Peer->Sending->DroppedUnflushed = TC_OK;
        return Dropped; // frames dropped: their code was refused, or not answered for
      }
      if (tc_status_t Reported = Peer->Sending->FaultUnflushed; Reported != TC_OK) {
        Peer->Sending->FaultUnflushed = TC_OK;
        return Reported; // tc_peer_last_fault says which
      }
      return TC_OK;
    }
    if (Peer->Failed)
      return TC_ERR_IO;
    // Credits owed: asked for once, so that they come when the frames
    // have run, not after the receiver's idle polls.
    if (!Asked && Peer->Tx->Send->available() != Peer->Tx->Slots) {
      askForCredits(Peer);
      Asked = true;
    }
    uint64_t Now = nowNs();
    if (Now > Deadline)
      return TC_ERR_TIMED_OUT;
    if (Ctx->DataWorker)
      ucp_worker_progress(Ctx->DataWorker);
    // A peer failure shows on the control worker, and credits by message
    // come there; an RMA peer's credits do not, and a turn of the control
    // worker is a system call (TCP): not in the first microseconds.
    if ((Peer->Path != PathRma || Now - Start >= ControlQuietInFlushNs) &&
        (Context.owns_lock() || Context.try_lock()))
      progressControl(Ctx);
    // Polls a while, then sleeps (holding nothing) until a credit report
    // or a message comes.
    if (Channel.owns_lock())
      Channel.unlock();
    if (Context.owns_lock())
      Context.unlock();
    Idle.idle(Ctx, Now, Deadline);
  }
}

/// tc_flush on a handle: its connection is made first (the context
/// progresses meanwhile), then flushed in the time left.
static tc_status_t flushHandle(tc_peer *Handle, int TimeoutMs) {
  CoreContext *Ctx = Handle->Ctx;
  uint64_t Deadline = nowNs() + msToNs(TimeoutMs > 0 ? TimeoutMs : 0);
  tc_peer *Bound;
  IdleWait Idle;
  for (;;) {
    // A turn may make the connection without leaving anything to wake
    // the sleep after it (the handshake ends on the control turn's
    // housekeeping): looked at after each turn, before any sleep.
    bool Ran = Ctx->Progress(Ctx) != 0;
    if ((Bound = connectionOf(Handle)) || Handle->ProxyGone)
      break;
    // The handshake's messages wake a sleep; a retry's due time too.
    if (!Idle.after(Ctx, Ran, Deadline))
      return TC_ERR_TIMED_OUT;
  }
  if (Handle->ProxyGone || !Bound->Welcomed || Bound->Failed)
    return TC_ERR_IO;
  int Left = int(std::max<int64_t>(0, int64_t(Deadline - std::min(Deadline, nowNs())) / 1'000'000));
  return flushPeer(Bound, Left);
}

extern "C" tc_status_t tc_flush(tc_peer_t *Peer, int TimeoutMs) {
  if (Peer && Peer->Proxy)
    return flushHandle(Peer, TimeoutMs);
  if (!Peer)
    return TC_ERR_INVALID_PARAM;
  // A handle the application holds is welcomed until released: gone.
  if (!Peer->Welcomed)
    return TC_ERR_IO;
  return flushPeer(Peer, TimeoutMs);
}

extern "C" tc_status_t tc_peer_stats(const tc_peer_t *Peer, tc_peer_stats_t *Out) {
  if (!Peer || !Out)
    return TC_ERR_INVALID_PARAM;
  if (Peer->Proxy && !(Peer = connectionOf(const_cast<tc_peer *>(Peer)))) {
    *Out = {};
    return TC_OK;
  }
  PeerGuard Guard(const_cast<tc_peer *>(Peer));
  *Out = Peer->Stats;
  return TC_OK;
}
