//===- Runtime.h - What the runtime's units call of each other ----------===//
//
// The context (Context.h) and its peers (Peer.h), and the functions one
// unit of the runtime offers the others, grouped by the file that defines
// them.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_RUNTIME_H
#define TWOCHAINS_RUNTIME_RUNTIME_H

#include "CodeCache.h"
#include "CodeMiss.h"
#include "Frame.h"
#include "JamGuard.h"
#include "Package.h"
#include "Ring.h"
#include "Wire.h"
#include "Wait.h"
#include "Watchdog.h"
#include "twochains/twochains.h"

#include <atomic>
#include <initializer_list>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <netinet/in.h>
#include <ucp/api/ucp.h>
#include <vector>

namespace twochains::rt {

/// The sender's credit line (one line the receiver writes, by put or by
/// message): finished frames at word 0, a code-cache miss at word 1 (the
/// sequence of the frame that named code the receiver does not hold, plus
/// one).
/// Word 2: the last frame abandoned, in one word so that it is read whole:
/// the low 32 bits of its sequence, its element, the signal, how it ended
/// (tc_jam_end_t), and a bit that says the word holds a report. The sender
/// finds the whole sequence from its window.
enum : unsigned { CreditWordFinished = 0, CreditWordMiss = 1, CreditWordFault = 2, CreditWords = 3 };
inline uint64_t faultWord(uint64_t Sequence, uint32_t Element, int Signal, unsigned Kind) {
  return uint32_t(Sequence) | uint64_t(Element & 0xffff) << 32 |
         uint64_t(uint8_t(Signal)) << 48 | uint64_t(Kind & 0xf) << 56 | 1ull << 63;
}

/// Waits for a UCX request (or an immediate completion) by progressing the
/// worker; returns its status.
ucs_status_t waitRequest(ucp_worker_h Worker, ucs_status_ptr_t Request);
/// The same, giving up at Deadline (steady-clock nanoseconds): the request
/// is cancelled, left to UCX to release, and UCS_ERR_TIMED_OUT returned; so
/// what it reads must live as long as the endpoint, not the call.
ucs_status_t waitRequestUntil(ucp_worker_h Worker, ucs_status_ptr_t Request,
                              uint64_t DeadlineNs);
uint64_t nowNs();
/// waitRequestUntil TimeoutNs from now, the clock read only if the request
/// did not complete at once (a frame's send: most do).
inline ucs_status_t waitRequestFor(ucp_worker_h Worker, ucs_status_ptr_t Request,
                                   uint64_t TimeoutNs) {
  if (Request == nullptr)
    return UCS_OK;
  return waitRequestUntil(Worker, Request, nowNs() + TimeoutNs);
}

} // namespace twochains::rt

struct tc_context;

namespace twochains::rt {
/// Connection.cpp. Receiver: releases peers that failed, closed or never
/// finished their handshake, once no frame of theirs is left to run.
void reapPeers(tc_context *Ctx);
/// Handshake.cpp. Receiver: answers the AUTH and HELLO messages that
/// arrived since the last call, and closes refused endpoints.
void processHandshakes(tc_context *Ctx);
/// Sender: authenticates and exchanges offers on Peer->Ep, until Deadline.
tc_status_t clientHandshake(tc_context *Ctx, tc_peer *Peer, uint64_t DeadlineNs);
/// Connection.cpp: an IPv4 address (numeric or a name) and port; NULL or
/// "" is every interface.
bool resolve(const char *Address, uint16_t Port, sockaddr_in &Out);
/// Connection.cpp: tc_connect's loop, trying again (if Retry) while
/// nothing answers, until RetryUntil (0: Deadline); a handshake that has
/// begun has until Deadline.
tc_status_t connectUntil(tc_context *Ctx, const sockaddr_in &SA, const std::string &Where,
                         uint64_t Deadline, bool LogUnreachable, tc_peer **Out,
                         bool Retry = true, uint64_t RetryUntil = 0);
/// Sends a control message on Peer->Ep from copies the peer keeps, waiting
/// for it until the deadline (0: not at all).
ucs_status_t sendMessage(tc_context *Ctx, tc_peer *Peer, unsigned Id, const void *Header,
                         size_t HeaderSize, const void *Body, size_t BodySize,
                         uint64_t DeadlineNs);
/// Counts and logs (once per peer) a message refused outright.
/// Counts a message refused outright, and logs it once per peer (once per
/// context for endpoints no peer has). From, if given, is the message's
/// receive parameters: a message on the endpoint of a peer this side
/// released, or while the context closes, is the peer's last word, dropped
/// without a refusal.
void refuseMessage(tc_context *Ctx, tc_peer *Peer, const std::string &Why,
                   const ucp_am_recv_param_t *From = nullptr);
/// Registers active-message handlers on the control worker, argument Ctx.
struct ControlHandler {
  unsigned Id;
  ucp_am_recv_callback_t Callback;
};
ucs_status_t setControlHandlers(tc_context *Ctx, std::initializer_list<ControlHandler> Handlers);
/// Registers the handshake's active-message handlers on the control worker.
ucs_status_t setHandshakeHandlers(tc_context *Ctx);

/// Mailbox.cpp. Allocates the peer's ring (frames from it) and credit
/// line (its reports), for the path its frames take.
tc_status_t setupLocalSide(tc_context *Ctx, tc_peer *Peer);
/// The offer describing Peer's local side, with its body (MAC not set).
tc_status_t makeOffer(tc_context *Ctx, tc_peer *Peer, Offer &Header,
                      std::vector<uint8_t> &Body);
/// Takes the other side's checked offer: its ring and credit line, and an
/// RMA endpoint where the path is RMA.
tc_status_t acceptOffer(tc_context *Ctx, tc_peer *Peer, const ParsedOffer &O,
                        std::string &Why);
/// Receiver: whether frames from this sender can travel by RMA: the
/// sender can, and this side's RMA worker reaches its RMA worker.
bool rmaReaches(tc_context *Ctx, tc_peer *Peer, const ParsedOffer &Hello);

/// FramePath.cpp. Puts Size bytes of a frame into the peer's slot, or
/// sends them for the peer to write there. TC_ERR_IO marks the peer failed.
/// With Pipelined (RMA only), the put is not waited for: its request is
/// kept in Peer->Tx.Puts[Slot], and Frame must stay as it is until
/// completePut(Peer, Slot).
tc_status_t deliverFrame(tc_peer *Peer, const uint8_t *Frame, size_t Size, uint64_t Sequence,
                         uint32_t Slot, bool Pipelined = false);
/// Sends the frames a corked peer holds (tc_peer_cork), as one message.
/// TC_ERR_IO marks the peer failed.
tc_status_t flushFrameBatch(tc_peer *Peer);
/// Completes the put from slot Slot's copy, if one is in flight (bounded:
/// a put that does not complete within a second marks the peer failed).
tc_status_t completePut(tc_peer *Peer, uint32_t Slot);
/// Writes word Word of the peer's credit line (put or message), without
/// waiting for it to land. While the previous report is still in flight:
/// Busy (report again later), or with Wait, waits for it a bounded while.
enum class CreditReport { Sent, Busy, Failed };
/// True if this side puts to Peer (frames or credits), rather than storing
/// into memory UCX maps here.
bool putsTo(const tc_peer *Peer);
/// True if [Begin, Begin + Length) lies inside one writable shared mapping
/// of this process (/proc/self/maps): where a peer's key maps its memory.
/// The peer names the address, so stores into it must not land in this
/// process's private memory, whatever offset the key computes.
bool insideSharedMapping(uintptr_t Begin, size_t Length);
/// A peer welcomed on the RMA path: counted, and its way of storing said.
void countRmaPeer(tc_context *Ctx, tc_peer *Peer);
CreditReport reportCreditWord(tc_peer *Peer, unsigned Word, uint64_t Value, bool Wait = false);
/// The worker whose progress moves this peer's frames and credits.
ucp_worker_h frameWorker(tc_peer *Peer);
ucs_status_t setFramePathHandlers(tc_context *Ctx);
} // namespace twochains::rt

#include "Peer.h"


#include "Context.h"


namespace twochains::rt {
/// The peer (accepted or connected) whose control endpoint is Ep, or null.
tc_peer *peerOfEndpoint(tc_context *Ctx, ucp_ep_h Ep);
} // namespace twochains::rt

namespace twochains::rt {
/// The context whose jam this thread is running, if any: the jam's own calls
/// (tc_jam_reply) do not take the lock again, so a jam abandoned inside one
/// leaves no lock behind.
/// (initial-exec: read on every send and frame, where __tls_get_addr was a
/// twentieth of a frame's instructions.)
inline thread_local tc_context *ThreadRunningJamOf __attribute__((tls_model("initial-exec"))) =
    nullptr;

/// Takes the context's lock, counted as waiting while it does; a thread
/// that just had it lets one that waits go first (the executor thread and
/// the application's threads alike).
inline void lockContext(tc_context *Ctx) {
  if (Ctx->LockWaiters.load(std::memory_order_relaxed) > 0)
    std::this_thread::yield();
  if (Ctx->Lock.try_lock())
    return;
  Ctx->LockWaiters.fetch_add(1, std::memory_order_relaxed);
  Ctx->Lock.lock();
  Ctx->LockWaiters.fetch_sub(1, std::memory_order_relaxed);
}

/// What tc_send and tc_progress hold: the context's lock while the
/// executor thread runs or the context is for threads (TC_CONTEXT_THREADS),
/// nothing otherwise (the caller then serialises, as with a UCX worker). An
/// uncontended lock still costs an atomic read-modify-write, which waits
/// for the frame just stored into the other process's memory to leave this
/// core: in a stream, most of a send.
/// Whether a hot-path call on Ctx takes its lock (HotPathGuard).
inline bool hotPathLocks(tc_context *Ctx) {
  return (Ctx->ExecutorRunning.load(std::memory_order_acquire) ||
          (Ctx->Flags & TC_CONTEXT_THREADS)) &&
         ThreadRunningJamOf != Ctx;
}

class HotPathGuard {
public:
  explicit HotPathGuard(tc_context *Ctx) : Held(hotPathLocks(Ctx) ? Ctx : nullptr) {
    if (Held)
      lockContext(Held);
  }
  ~HotPathGuard() {
    if (Held)
      Held->Lock.unlock();
  }
  HotPathGuard(const HotPathGuard &) = delete;
  HotPathGuard &operator=(const HotPathGuard &) = delete;

private:
  tc_context *Held;
};

/// What a call on one peer holds (tc_send, tc_call_*, tc_flush, ...): a
/// channelled peer's own lock, and nothing of the context, so threads on
/// different peers never wait for each other; otherwise what HotPathGuard
/// holds. The one order in which locks are waited for is channel, then
/// context: whoever holds the context only tries channels.
class PeerGuard {
public:
  explicit PeerGuard(tc_peer *Peer) {
    if (Peer->Channelled) {
      Peer->Channel.lock();
      Held = Peer;
    } else if (hotPathLocks(Peer->Ctx)) {
      lockContext(Peer->Ctx);
      HeldContext = Peer->Ctx;
    }
  }
  ~PeerGuard() {
    if (Held)
      Held->Channel.unlock();
    else if (HeldContext)
      HeldContext->Lock.unlock();
  }
  PeerGuard(const PeerGuard &) = delete;
  PeerGuard &operator=(const PeerGuard &) = delete;

private:
  tc_peer *Held = nullptr;
  tc_context *HeldContext = nullptr;
};

/// Adds to a statistic that threads on different channels may add to at
/// once: atomically then, plainly otherwise (an atomic add waits for the
/// frame just stored to leave the core).
inline void count(tc_context *Ctx, uint64_t &Counter, uint64_t N = 1) {
  if (Ctx->Channels)
    __atomic_fetch_add(&Counter, N, __ATOMIC_RELAXED);
  else
    Counter += N;
}

std::string detectStashing();
ucs_status_t onRied(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                    size_t Length, const ucp_am_recv_param_t *Param);
ucs_status_t onRiedAck(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                       size_t Length, const ucp_am_recv_param_t *Param);
/// Loads the rieds peers pushed since the last call, and answers them.
void processPushedRieds(tc_context *Ctx);
/// Events.cpp: queues an event for tc_poll_event (bounded).
void postEvent(tc_context *Ctx, tc_event_kind_t Kind, unsigned Peer, tc_status_t Status,
               uint32_t Element = 0, uint64_t Sequence = 0, int32_t Signal = 0);
/// CodeTransfer.cpp: images larger than a slot travel once, ahead of their
/// frames, as an active message; the receiver installs them resident.
ucs_status_t onCode(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                    size_t Length, const ucp_am_recv_param_t *Param);
ucs_status_t onCodeAck(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                       size_t Length, const ucp_am_recv_param_t *Param);
void processPushedCode(tc_context *Ctx);
/// Sender: ships the element's image to the peer and waits (bounded) until
/// the receiver has installed it.
tc_status_t shipCode(tc_peer *Peer, const tc_package *Pkg, uint32_t Element);
/// InjectedCode.cpp: the element's image installed in the context's code
/// cache for the context's life (pinned; the cache is created if the
/// mailbox mode has none), or null and logged.
const CachedCode *installResident(tc_context *Ctx, uint64_t Package, uint32_t Element,
                                        const PackageElement &E);

/// Runs a checked injected or cached frame as the context's mailbox mode
/// says (InjectedCode.cpp). TC_ERR_NOT_CACHED: a cached frame names code
/// this receiver does not hold (the caller asks the sender for it).
tc_status_t runInjected(tc_context *Ctx, const tc_package &Pkg, uint32_t Element,
                        const FrameView &V, tc_jam_ctx *JamCtx);
/// Sender: sends again, with code, the cached frames the receiver reported
/// missing (Send.cpp).
void resendMissing(tc_peer *Peer);
/// Closes the routes jams found failed (JamCalls.cpp), when no jam runs.
void closeRetiredRoutes(tc_context *Ctx);
/// Sends what jams queued for the peer, while it has credit (JamCalls.cpp).
void sendQueued(tc_peer *Peer);
/// Sender: takes a report of an abandoned frame from the credit line.
void takeFaultReport(tc_peer *Peer);
/// Send.cpp: tc_send's work, with the context's lock held as tc_send
/// takes it; *Sequence (if not null) is the frame's, on TC_OK.
tc_status_t sendLocked(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                       tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                       uint64_t *Sequence);
/// Send.cpp: the payload the element's helpers write from Args, in this
/// thread's scratch buffer (valid until its next call).
tc_status_t payloadFromArgs(const tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                            const void *Args, const uint8_t **Payload, size_t *PayloadSize);
/// Send.cpp: an answer frame (FrameAnswer) to the peer's call of sequence
/// CallSequence; TC_ERR_NO_CREDIT when its ring is full.
tc_status_t sendAnswer(tc_peer *Peer, uint64_t CallSequence, const void *Bytes, size_t Size);
/// Calls.cpp: an answer frame arrived from the peer (checked): its call ends.
void takeAnswer(tc_peer *Peer, uint64_t CallSequence, const uint8_t *Bytes, size_t Size);
/// JamCalls.cpp: queues a frame for the peer while its ring is full
/// (bounded: TC_ERR_NO_CREDIT past the bound).
tc_status_t queueFrame(tc_peer *Peer, twochains::rt::PeerSendHalf::QueuedFrame F);
/// Calls.cpp. The answers of jams (AmReply) to calls made here.
ucs_status_t onReply(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                     size_t Length, const ucp_am_recv_param_t *Param);
/// Caller: the call whose frame the peer abandoned ends with St.
void endCallOfFrame(tc_peer *Peer, uint64_t Sequence, tc_status_t St);
/// Caller: the answers that came by message from this peer (queued by
/// onReply) end their calls; the caller holds the peer's channel.
void takeArrivedAnswers(tc_peer *Peer);
/// Drops queued answers whose peer is gone.
void dropStrayAnswers(tc_context *Ctx);
/// Caller: every call to the peer ends with St (it is closed or gone).
void endCallsOf(tc_peer *Peer, tc_status_t St);
/// Receiver: forgets answers UCX has finished with; a peer being
/// released is forgotten by the answers still in flight to it.
void sweepReplies(tc_context *Ctx, tc_peer *Releasing = nullptr);
} // namespace twochains::rt

#endif
