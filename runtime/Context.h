//===- Context.h - The context: UCX, packages, peers, and the executor ----===//
//
// What one tc_context_t holds. The peers (Peer.h) hold their own rings;
// the context holds what all of them share: the two UCX contexts and
// their workers, the packages, the listener, the code cache, containment,
// the lock, and the queues that the UCX callbacks fill and the control
// turn empties (handshakes, rieds, code, answers).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTEXT_H
#define TWOCHAINS_RUNTIME_CONTEXT_H

#include "CodeCache.h"
#include "Peer.h"
#include "Wait.h"
#include "Watchdog.h"

#include <atomic>
#include <list>
#include <map>
#include <mutex>
#include <thread>

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
  /// TC_CONTEXT_THREADS, and DataWorker is in UCS_THREAD_MODE_MULTI: RMA
  /// peers are channels of their own (Peer.h).
  bool Channels = false;
  ucp_worker_h DataWorker = nullptr;   // data: RMA frames and credits, on RmaUcp
  unsigned ControlPolls = 0;           // tc_progress calls since reports were looked for
  unsigned ClockPolls = 0;             // tc_progress calls since the clock was read
  uint64_t ControlTurnNs = 0;          // when the control worker last progressed
  unsigned RanSinceClock = 0;          // frames run since the clock was read
  /// Refusals of messages from endpoints no peer has: the first is logged.
  /// The control endpoints of peers this side released, the last few: a
  /// peer's last words (its final credit report) may land after its end,
  /// and are not refusals (Handshake.cpp, refuseMessage).
  bool UnknownRefusalLogged = false;
  bool Closing = false;                // tc_context_destroy has begun
  ucp_ep_h ReleasedEndpoints[16] = {};
  unsigned ReleasedNext = 0;
  unsigned AmPeers = 0;                // peers on the active-message path
  /// RMA peers that this side puts frames or credits to (no direct
  /// mapping): their requests complete only as the data worker progresses.
  unsigned PutPeers = 0;
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
  std::atomic<size_t> CallsOutstanding{0};
  /// Answers that came as messages (Calls.cpp), taken by the peer's turn,
  /// which holds its channel: a UCX callback may not.
  struct ArrivedAnswer {
    ucp_ep_h From;
    uint64_t Sequence;
    tc_status_t Status;
    std::vector<uint8_t> Bytes;
    bool Received;
  };
  std::list<ArrivedAnswer> ArrivedAnswers;
  size_t ArrivedAnswerBytes = 0;
  /// Events.cpp: what went wrong, for tc_poll_event. Its own lock: events
  /// come from UCX callbacks, the executor and senders alike.
  std::mutex EventLock;
  std::deque<tc_event_t> Events;
};

#endif
