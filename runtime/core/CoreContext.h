//===- CoreContext.h - The core of a context: UCX, peers, the lock --------===//
//
// A tc_context is composed of one part per concern, each declared in the
// folder that owns it, as a UCX worker is of its am, tm and keepalive
// members. The core (here) is the hub every layer is handed; it holds a
// pointer to each other part, which a layer can follow only where it
// sees the part's type, that is, for its own part and those below it
// (the layer check keeps includes downward). The whole, tc_context
// (context/Context.h), holds the parts and sets the pointers:
//
//   CoreContext         UCX contexts and workers, ring shape, the key,
//                       peers, the lock, statistics, events (here)
//   ImageContext        the W^X code cache and scratch arena  (image/)
//   ControlContext      control messages: handlers, bodies, cut-offs
//                                                              (control/)
//   ContainmentContext  the watchdog, quarantine budgets      (containment/)
//   PackageContext      loaded packages, pushed rieds, trust  (package/)
//   CodeContext         shipped code, deployments             (code/)
//   PathContext         what happens to frames on their way   (path/)
//   ReceiveContext      private frame copy, payloads ahead    (receive/)
//   WireupContext       listener, handshakes, the job's identity (wireup/)
//   JobContext          ranks, routes, quiescence             (job/)
//   CallsContext        answers, replies in flight            (calls/)
//   tc_context          the executor thread and progress      (context/)
//
// A layer that needs something done above it is called back through what
// the upper layer registered here (housekeeping) or in a lower part
// (subscribers, core/Subscribers.h).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_CORECONTEXT_H
#define TWOCHAINS_RUNTIME_CORE_CORECONTEXT_H

#include "base/SharedSegment.h"
#include "core/Peer.h"
#include "core/Subscribers.h"
#include "ucx/Request.h"
#include "wire/Auth.h"

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <map>
#include <ucp/api/ucp.h>
#include <unordered_map>
#include <vector>

namespace twochains::rt {

struct CoreContext;
struct ImageContext;
struct ControlContext;
struct ContainmentContext;
struct PackageContext;
struct CodeContext;
struct PathContext;
struct ReceiveContext;
struct WireupContext;
struct JobContext;
struct CallsContext;
/// Work a feature does on the control turn (as UCX features register
/// progress callbacks): answering handshakes, loading pushed code, reaping
/// peers. Runs with the context's lock held and no jam running.
using HousekeepingFn = void (*)(CoreContext *Ctx);
/// When a feature next has work on the clock (a retry, a time limit that
/// housekeeping enforces): the earliest steady-clock time, or NoDueTime.
/// A sleeping wait wakes by then (core/Sleep.cpp), so that no sleep needs
/// a cap. Runs with the context's lock held.
using DueTimeFn = uint64_t (*)(CoreContext *Ctx);
constexpr uint64_t NoDueTime = ~0ull;

struct CoreContext {
  /// The parts of the layers above, each declared in its own folder and
  /// seen only by the layers that include its header (at or above it):
  /// the whole context (context/Context.h) holds them and sets these.
  ImageContext *Image = nullptr;
  ControlContext *Control = nullptr;
  ContainmentContext *Containment = nullptr;
  PackageContext *Package = nullptr;
  CodeContext *Code = nullptr;
  PathContext *Path = nullptr;
  ReceiveContext *Receive = nullptr;
  WireupContext *Wireup = nullptr;
  JobContext *Job = nullptr;
  CallsContext *Calls = nullptr;

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
  /// TC_CONTEXT_THREADS, and DataWorker is in UCS_THREAD_MODE_MULTI: RMA
  /// peers are channels of their own (Peer.h).
  bool Channels = false;
  ucp_worker_h DataWorker = nullptr;   // data: RMA frames and credits, on RmaUcp
  ucp_address_t *WorkerAddress = nullptr; // of DataWorker
  size_t WorkerAddressSize = 0;
  uint32_t Flags = 0;                  // TC_CONTEXT_* flags
  uint32_t Slots = 64, SlotSize = 4096, Batch = 16;
  /// The application chose the ring's slots or their size (parameters,
  /// TC_SLOTS, TC_SLOT_SIZE), or the credit batch: a job leaves them be.
  bool SlotsChosen = false, BatchChosen = false;
  JobKey Key;
  bool Closing = false;                // tc_context_destroy has begun

  /// Peers. Accepted: the receiver side, owned here. Connecting: senders
  /// awaiting their welcome. Connected: senders that are ready (owned by
  /// the application, which closes them).
  std::vector<std::unique_ptr<tc_peer>> Accepted;
  /// Accepted peers released (gone, or closed) whose handle the application
  /// was given (tc_context_peer): kept, inert, until the context ends, so
  /// that a call on the handle returns TC_ERR_IO rather than reaching freed
  /// memory. At most one per peer the application asked for.
  std::vector<std::unique_ptr<tc_peer>> Gone;
  std::vector<tc_peer *> Connecting;
  std::vector<tc_peer *> Connected;
  unsigned PeersSeen = 0;
  uint32_t MaxPeers = 256;
  /// The peers whose rings every pass polls (core/Polled.h): the others'
  /// rings are cold, and their senders ring the doorbell. Doorbell: this
  /// side's, a segment shared with processes of this host
  /// (base/SharedSegment.h), made once the first RMA peer is offered a
  /// place; DoorbellPeers[place] is the peer given it (null: free).
  std::vector<tc_peer *> Polled;
  SharedSegment DoorbellSegment;
  uint64_t *Doorbell = nullptr;
  std::vector<tc_peer *> DoorbellPeers;
  /// Rings made cold and not yet warm again; where the sweep goes next.
  unsigned ColdPeers = 0;
  size_t SweepAt = 0;
  unsigned AmPeers = 0;                // peers on the active-message path
  /// Payloads larger than a slot (send/PayloadAhead.h, receive/PayloadAhead.h):
  /// the bytes one sender may have on their way here at once (offered to
  /// each), and the work under way, for which the RMA worker turns on
  /// every pass: this side's sends not yet complete, bodies being fetched,
  /// frames waiting for theirs; of it, what moves on the control worker,
  /// which then turns on every pass too (a system call each over TCP).
  uint32_t PayloadAheadBytes = 0;
  unsigned PayloadsAheadActive = 0;
  unsigned PayloadsAheadOnControl = 0;
  /// RMA peers that this side puts frames or credits to (no direct
  /// mapping): their requests complete only as the data worker progresses.
  unsigned PutPeers = 0;
  /// The files of this context's own segments, which peers store into,
  /// with the Number of the peer each is for (its ring and credit line;
  /// 0: the doorbell; path/Mailbox.cpp): a peer's key or record is to name
  /// the peer's memory, and one that maps any of these is refused (but its
  /// counterpart's, tc_peer::Counterpart), since a peer can name this
  /// process's descriptors as well as its own.
  std::map<FileId, unsigned> OwnSegmentFiles;

  /// Serialises the API when the executor thread runs (recursive: jams call
  /// tc_jam_reply from inside tc_progress). Core/Lock.h takes it.
  std::recursive_mutex Lock;
  std::atomic<bool> ExecutorRunning{false};
  /// Threads waiting for Lock: the executor lets them in between its
  /// passes, rather than taking the lock straight back (a mutex is not
  /// fair, and a round trip waited 11-25 ms for it).
  std::atomic<int> LockWaiters{0};
  /// One turn of the whole context (context/Progress.cpp registers it): a
  /// layer that waits for something progress brings calls it. Returns the
  /// frames it ran: a wait that ran some is busy, not idle (IdleWait).
  unsigned (*Progress)(CoreContext *Ctx) = nullptr;

  /// Sleeping waits (core/Sleep.h). SleepWaits: the runtime's own waits
  /// sleep once they have polled a while (not TC_WAIT_POLL, TC_BUSY_POLL).
  bool SleepWaits = true;
  int WakeFd = -1;                      // epoll set: the control worker's event fd
  ucp_worker_h WakeWorker = nullptr;    // the worker whose fd is in it
  bool WakeWorkerFd = false;            // it has one (UCP_FEATURE_WAKEUP)
  bool DataWorkerWatched = false;       // DataWorker's fd is in it too (core/Sleep.cpp)
  /// One thread sleeps on WakeFd; others wait on WakeSeq, which it (and
  /// whatever ends a wait, such as a call's answer) advances.
  std::atomic<bool> FdSleeper{false};
  std::atomic<uint32_t> WakeSeq{0};
  std::atomic<int> WakeWaiters{0};
  /// Before the context sleeps: what this side owes its peers, such as
  /// credits it has not reported yet, which a flushing peer waits for
  /// (context/Progress.cpp subscribes). Told holding the context.
  Subscribers<CoreContext *> BeforeSleep;
  /// A cold ring was opened again (core/Polled.cpp): the frame path lifts
  /// its limit in the sender's credit line and wakes the sender, which may
  /// sleep until it may store past the old limit (path/ subscribes).
  Subscribers<tc_peer *> RingOpened;
  /// A sleep's look at each polled peer, in two steps (path/ sets both,
  /// core/Sleep.cpp calls them): FlagPeerForSleep asks the peer to wake
  /// this side when it stores next; LookAtPeerForSleep, after the fence,
  /// says what its ring and credit line show since the last look.
  struct PeerLook {
    bool Found = false;   // something to do: do not sleep
    bool Bounded = false; // the peer cannot wake this side: nap
    bool Flagged = false; // its sleep flag was raised
  };
  void (*FlagPeerForSleep)(tc_peer *Peer, PeerLook &L) = nullptr;
  void (*LookAtPeerForSleep)(CoreContext *Ctx, tc_peer *Peer, PeerLook &L) = nullptr;
  /// Looks before a sleep that raised the sleep flags, whether the sleep
  /// followed or the look found work first (the flags then stay until a
  /// peer takes them): each lets a peer wake this side (path/, onWake).
  std::atomic<uint64_t> SleepLooks{0};
  /// A sleep ended: the next pass of a wait takes the control turn.
  std::atomic<bool> ControlDue{false};
  /// The control worker took something outside a sleep's own look
  /// (progressControl): its handlers only queue what came (an answer, a
  /// handshake), and the event that woke the fd is spent, so the next
  /// sleep's look finds it here and does not begin (core/Sleep.cpp).
  std::atomic<bool> ControlTook{false};

  /// Counted through core/Stats.h only.
  tc_stats_t Stats = {};
  /// core/Events.cpp: what went wrong, for tc_poll_event. Its own lock:
  /// events come from UCX callbacks, the executor and senders alike.
  std::mutex EventLock;
  std::deque<tc_event_t> Events;
  /// Events queued per peer (by number), against each one's share.
  std::unordered_map<unsigned, size_t> EventsOfPeer;

  /// Registered by the features at their setup, run on the control turn in
  /// the order registered (core/Housekeeping.cpp).
  std::vector<HousekeepingFn> Housekeeping;
  /// Registered likewise: asked before every sleep.
  std::vector<DueTimeFn> DueTimes;
};

/// One turn of the control worker, outside a sleep: what it takes keeps
/// the next sleep from beginning (CoreContext::ControlTook). Every turn of
/// Ctx->Worker but the sleep's own look goes through here: an answer taken
/// by a turn between a wait's look and its sleep would otherwise wait for
/// the next event, as long as the wait's whole time limit.
inline unsigned progressControl(CoreContext *Ctx) {
  unsigned N = turnWorker(Ctx->Worker);
  if (N)
    Ctx->ControlTook.store(true, std::memory_order_relaxed);
  return N;
}
/// A wait for a request on the control worker (ucx/Request.h, which knows
/// no context) turned it, and may have taken what progressControl would
/// have flagged: flagged the same way.
inline void controlTurnedByWait(CoreContext *Ctx) {
  Ctx->ControlTook.store(true, std::memory_order_relaxed);
}

/// The core of a context the API was handed: the whole (tc_context,
/// context/Context.h) is defined above every layer, and its core lies at
/// its start (checked where it is made).
inline CoreContext *coreOf(tc_context *Ctx) { return reinterpret_cast<CoreContext *>(Ctx); }
inline const CoreContext *coreOf(const tc_context *Ctx) {
  return reinterpret_cast<const CoreContext *>(Ctx);
}

/// Registers work for the control turn.
void addHousekeeping(CoreContext *Ctx, HousekeepingFn Fn);
/// Runs every registered piece of housekeeping once.
void runHousekeeping(CoreContext *Ctx);
/// Registers a feature's clock: what it does when the time comes must be
/// done by a pass of the context (housekeeping, or the wait that started
/// it), which the wake brings.
void addDueTime(CoreContext *Ctx, DueTimeFn Fn);
/// The earliest time any feature has work on the clock (NoDueTime: none).
uint64_t nextDueTime(CoreContext *Ctx);

} // namespace twochains::rt

#endif
