//===- Runtime.h - The context, peers and rings behind the C API ----------===//
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
enum : unsigned { CreditWordFinished = 0, CreditWordMiss = 1, CreditWordFault = 2 };
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
void refuseMessage(tc_context *Ctx, tc_peer *Peer, const std::string &Why);
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
tc_status_t deliverFrame(tc_peer *Peer, const uint8_t *Frame, size_t Size, uint64_t Sequence,
                         uint32_t Slot);
/// Writes word Word of the peer's credit line (put or message), without
/// waiting for it to land. While the previous report is still in flight:
/// Busy (report again later), or with Wait, waits for it a bounded while.
enum class CreditReport { Sent, Busy, Failed };
CreditReport reportCreditWord(tc_peer *Peer, unsigned Word, uint64_t Value, bool Wait = false);
/// The worker whose progress moves this peer's frames and credits.
ucp_worker_h frameWorker(tc_peer *Peer);
ucs_status_t setFramePathHandlers(tc_context *Ctx);
} // namespace twochains::rt

/// What a running jam receives as its tc_jam_ctx_t.
struct tc_jam_ctx {
  tc_peer *Peer;
  uint64_t Sequence;
  const tc_package *Package;
  /// The running thread's containment state: callers set the jam's code
  /// range in it before the call.
  twochains::rt::JamRun *Run;
  /// tc_jam_return answered this frame already.
  bool Returned = false;
};

struct tc_call;

struct tc_peer {
  tc_context *Ctx = nullptr;
  ucp_ep_h Ep = nullptr;      // from sockaddr connection establishment (control)
  /// tc_connect, while it may still try again: the connection was refused
  /// or broke before the receiver answered (nothing listens yet), which is
  /// not logged but noted here.
  bool RetryIfUnreachable = false, Unreachable = false;
  unsigned Number = 0;        // tc_jam_sender: 1, 2, ... in connection order
  std::string Name;           // "peer N (address:port)", for messages
  /// How frames and credits travel in both directions (Wire.h).
  twochains::rt::FramePath Path = twochains::rt::PathAm;
  /// RMA path: the endpoint puts go through, on the RMA worker, created
  /// from the peer's RMA worker address: unlike the sockaddr one, UCX may
  /// give it shared-memory lanes.
  ucp_ep_h DataEp = nullptr;
  bool Failed = false;
  bool RefusalLogged = false; // a refused message from it was logged (once)
  uint64_t AcceptedNs = 0;    // receiver: when the connection came (handshake deadline)
  uint64_t FailedSeenNs = 0;  // receiver: when reaping first found it failed, frames left

  // The handshake (Handshake.cpp).
  enum class Auth { None, Challenged, Authenticated, Refused } AuthState = Auth::None;
  uint8_t ClientNonce[twochains::rt::NonceSize] = {};
  uint8_t ServerNonce[twochains::rt::NonceSize] = {};
  bool Challenged = false;    // sender: the receiver proved it holds the key
  bool Welcomed = false;
  /// Copies of the handshake messages and ried answers sent on Ep: a send
  /// given up on may still read them, until the endpoint is closed.
  std::deque<std::vector<uint8_t>> Sent;

  // Sender side: the receiver's ring, and the credit line it writes.
  uint64_t RingAddress = 0;
  uint32_t Slots = 0, SlotSize = 0;
  ucp_rkey_h RingKey = nullptr;
  std::unique_ptr<twochains::rt::SenderRing> Send;
  ucp_mem_h CreditMem = nullptr;       // RMA path; else CreditLine is ours
  volatile uint64_t *CreditWord = nullptr;
  std::unique_ptr<uint64_t[]> CreditLine; // AM path: written by onCredit
  std::vector<uint8_t> Staging;
  /// How the receiver runs injected code (from its offer).
  tc_mailbox_mode_t RemoteMode = TC_MAILBOX_CODE_CACHE;
  /// Per package, per element: the injected-frame template (header line and
  /// image, so a send writes only the payload, the sequence and the
  /// trailer), and whether the receiver's code cache is believed to hold
  /// the image (set when the code is shipped; a miss report clears it).
  struct ElementSend {
    std::vector<uint8_t> Template;
    bool Held = false;
    /// The image is larger than a slot and was shipped ahead of its frames
    /// (CodeTransfer.cpp): its frames are cached frames in every mode.
    bool Shipped = false;
    bool TooLargeLogged = false;
  };
  /// shipCode: the package tag and element + 1 of the image shipped to this
  /// peer and not yet answered (0: none). Only that answer is taken.
  uint64_t ShippingPackage = 0;
  uint32_t ShippingElement = 0;
  std::vector<std::pair<const tc_package *, std::vector<ElementSend>>> Sends;
  /// Cached frames are built in their slot's copy here, so a frame the
  /// receiver reports missing can be sent again, with code, from it. The
  /// copies are a line further apart than slots: slot sizes are multiples
  /// of 4 KiB, and first lines 4 KiB apart would all fall into the same
  /// few L1 sets and evict each other.
  std::vector<uint8_t> SlotFrames;
  size_t slotFrameStride() const { return size_t(SlotSize) + twochains::rt::FrameLine; }
  uint8_t *slotFrame(uint32_t Slot) { return SlotFrames.data() + Slot * slotFrameStride(); }
  twochains::rt::MissReports Misses;  // the receiver's requests for code (CodeMiss.h)
  /// Frames jams sent to this peer while its ring was full (JamCalls.cpp):
  /// sent, in order, as credits come back; bounded.
  struct QueuedFrame {
    const tc_package *Package; // null: an answer to call CallSequence
    uint32_t Element;
    std::vector<uint8_t> Payload;
    uint64_t CallSequence = 0;
  };
  std::deque<QueuedFrame> Queued;
  size_t QueuedBytes = 0;
  uint64_t FaultSeen = 0;             // the last fault report taken
  bool FaultUnflushed = false;        // one since the last tc_flush
  tc_jam_fault_t LastFault = {};
  /// Calls (Calls.cpp) awaiting an answer, by the sequence of their frame.
  std::map<uint64_t, struct tc_call *> Calls;

  // Receiver side: this sender's ring, and where to report credits.
  ucp_mem_h RingMem = nullptr;        // RMA path; else RingAlloc
  uint8_t *Ring = nullptr;
  size_t RingBytes = 0;
  std::unique_ptr<twochains::rt::ReceiverRing> Receive;
  uint64_t CreditAddress = 0;
  ucp_rkey_h CreditKey = nullptr;
  /// The buffers credit reports read while in flight, and their requests.
  uint64_t CreditSource[3] = {};
  twochains::rt::CreditMessage CreditMsg = {};
  ucs_status_ptr_t CreditRequest[3] = {};   // finished, miss, fault
  /// Frames of each element abandoned (faults, overruns), for quarantine.
  std::map<uint32_t, uint32_t> Abandoned;
  uint64_t AbandonedCount = 0;
  tc_peer_stats_t Stats = {};  // tc_peer_stats
  /// When the expected frame was first seen incomplete while the next one
  /// was already complete (0: not stalled). Past a deadline, it was cut
  /// short: dropped.
  uint64_t StalledSinceNs = 0;
  unsigned IdlePolls = 0;             // empty polls since a frame last ran
  unsigned IncompletePolls = 0;       // polls that found the expected frame incomplete
  /// A cached frame naming code not held, asked for (CodeMiss.h): a
  /// sender that never sends it again cannot stall the ring for ever.
  twochains::rt::MissWait CodeWait;
  /// Answers of jams (tc_jam_return) in flight to this sender, and bytes.
  size_t RepliesInFlight = 0, ReplyBytesInFlight = 0;
};

struct tc_context {
  /// Two UCX contexts, so that no rkey is ever usable where UCX emulates
  /// RMA in software (docs/security.md): Ucp has active messages only, on
  /// every transport (TCP too), and carries connections, handshakes, rieds
  /// and the frames of peers without an RMA path. RmaUcp has RMA, and
  /// every transport but TCP; it owns the rings and credit lines that
  /// peers put into. It is null where UCX offers no such transport.
  ucp_context_h Ucp = nullptr;
  ucp_worker_h Worker = nullptr;       // control, on Ucp
  bool EmbeddedWorker = false;         // the application's: never destroyed
  ucp_context_h RmaUcp = nullptr;
  ucp_worker_h DataWorker = nullptr;   // data: RMA frames and credits, on RmaUcp
  unsigned ControlPolls = 0;           // tc_progress calls since the clock was read
  uint64_t ControlTurnNs = 0;          // when the control worker last progressed
  unsigned AmPeers = 0;                // peers on the active-message path
  ucp_listener_h Listener = nullptr;
  uint16_t ListenPort = 0;        // the port it got (tc_listen with port 0: any)
  uint32_t ListenAddress = 0;     // network order; INADDR_ANY for every interface
  uint32_t Slots = 64, SlotSize = 4096, Batch = 16;
  std::vector<tc_package *> Packages;
  std::vector<std::unique_ptr<tc_peer>> Accepted;   // receiver side
  /// Handshake messages that arrived, answered off the UCX callback.
  struct PendingMessage {
    unsigned Id;
    ucp_ep_h Ep;
    std::vector<uint8_t> Header, Body;
  };
  std::vector<PendingMessage> Handshakes;
  std::vector<tc_peer *> Connecting;                // sender side, awaiting welcome
  unsigned PeersSeen = 0;
  std::vector<tc_peer *> Connected;                 // sender side, ready
  std::map<std::string, tc_peer *> Routes;          // onward connections of jams
  std::vector<tc_peer *> RetiredRoutes;             // failed routes, to close off the frame path
  ucp_address_t *WorkerAddress = nullptr;           // of DataWorker
  size_t WorkerAddressSize = 0;
  twochains::rt::JobKey Key;
  /// The frame being run, copied out of the ring: the jam reads this,
  /// which no peer can write (docs/security.md).
  std::unique_ptr<uint8_t[], void (*)(void *)> Private{nullptr, free};
  bool RunningJam = false;             // tc_progress is not re-entered from a jam
  /// Containment (JamGuard.h, Watchdog.h).
  std::unique_ptr<twochains::rt::Watchdog> Dog;
  uint32_t QuarantineFaults = 3;
  uint32_t MaxPeers = 256;
  std::vector<std::string> ForwardAllow;    // "host:port"
  /// Serialises the API when the executor thread runs (recursive: jams call
  /// tc_jam_reply from inside tc_progress).
  std::recursive_mutex Lock;
  std::atomic<bool> ExecutorRunning{false};
  /// Threads waiting for Lock: the executor lets them in between its
  /// passes, rather than taking the lock straight back (a mutex is not
  /// fair, and a round trip waited 11-25 ms for it).
  std::atomic<int> LockWaiters{0};
  std::thread Executor;
  std::atomic<bool> StopExecutor{false};
  tc_wait_mode_t WaitMode = TC_WAIT_AUTO;
  std::unique_ptr<twochains::rt::Waiter> Wait;
  /// Code-cache mode: injected images installed once, by content hash.
  std::unique_ptr<twochains::rt::CodeCache> Cache;
  /// Where injected code that is not cached runs (no-cache mode, or an
  /// image larger than the cache): one slot's worth of W^X memory.
  std::unique_ptr<twochains::rt::CodeArena> Scratch;
  tc_stats_t Stats = {};
  std::string Stashing;   // what detectStashing found
  uint32_t Flags = 0;     // TC_CONTEXT_* flags
  tc_mailbox_mode_t Mode = TC_MAILBOX_DEFAULT;
  uint32_t CodeCacheSize = 1u << 20;
  struct PushedRied {
    ucp_ep_h Reply;
    tc_status_t Status;
    std::vector<uint8_t> Bytes;
  };
  std::vector<PushedRied> PushedRieds;                       // to load, then answer
  /// Rieds loading on threads of their own (RiedPush.cpp), answered when done.
  struct RiedLoad {
    ucp_ep_h Reply = nullptr;
    tc_status_t Status = TC_OK;
    std::atomic<bool> Done{false};
    std::thread Thread;
  };
  std::list<RiedLoad> RiedLoads;
  std::vector<std::pair<ucp_ep_h, tc_status_t>> RiedAcks;   // answers to our pushes
  /// Images shipped to us ahead of their frames (CodeTransfer.cpp), to
  /// check, install and answer on the control turn.
  struct PushedCode {
    ucp_ep_h Reply;
    uint64_t Package;
    uint32_t Element;
    tc_status_t Status;
    std::vector<uint8_t> Bytes;
    bool Received;
  };
  std::list<PushedCode> PushedCodes;
  struct CodeAnswer {
    ucp_ep_h From;
    uint64_t Package;
    uint32_t Element;
    tc_status_t Status;
  };
  std::vector<CodeAnswer> CodeAcks;                          // answers to our shipments
  /// Calls.cpp: answers jams gave, until UCX is done with their bytes
  /// (Peer is cleared when the peer is released first).
  struct ReplySend {
    tc_peer *Peer;
    twochains::rt::CallReply Header;
    std::vector<uint8_t> Bytes;
    bool Done = false;
  };
  std::list<ReplySend> ReplySends;
  /// Calls started and not yet ended: while there are any, every
  /// tc_progress turns the control worker, where their answers arrive.
  size_t CallsOutstanding = 0;
  /// Events.cpp: what went wrong, for tc_poll_event. Its own lock: events
  /// come from UCX callbacks, the executor and senders alike.
  std::mutex EventLock;
  std::deque<tc_event_t> Events;
};

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
class HotPathGuard {
public:
  explicit HotPathGuard(tc_context *Ctx)
      : Held((Ctx->ExecutorRunning.load(std::memory_order_acquire) ||
              (Ctx->Flags & TC_CONTEXT_THREADS)) &&
                     ThreadRunningJamOf != Ctx
                 ? Ctx
                 : nullptr) {
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
tc_status_t queueFrame(tc_peer *Peer, tc_peer::QueuedFrame F);
/// Calls.cpp. The answers of jams (AmReply) to calls made here.
ucs_status_t onReply(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                     size_t Length, const ucp_am_recv_param_t *Param);
/// Caller: the call whose frame the peer abandoned ends with St.
void endCallOfFrame(tc_peer *Peer, uint64_t Sequence, tc_status_t St);
/// Caller: every call to the peer ends with St (it is closed or gone).
void endCallsOf(tc_peer *Peer, tc_status_t St);
/// Receiver: forgets answers UCX has finished with; a peer being
/// released is forgotten by the answers still in flight to it.
void sweepReplies(tc_context *Ctx, tc_peer *Releasing = nullptr);
} // namespace twochains::rt

#endif
