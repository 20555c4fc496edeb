//===- Runtime.h - The context, peers and rings behind the C API ----------===//
#ifndef TWOCHAINS_RUNTIME_RUNTIME_H
#define TWOCHAINS_RUNTIME_RUNTIME_H

#include "CodeCache.h"
#include "Frame.h"
#include "Package.h"
#include "Ring.h"
#include "Wait.h"
#include "twochains/twochains.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <ucp/api/ucp.h>
#include <vector>

namespace twochains::rt {

/// AM ids of the handshake (docs/runtime.md).
enum : unsigned { AmHello = 0x7c01, AmWelcome = 0x7c02, AmRied = 0x7c03, AmRiedAck = 0x7c04 };
constexpr uint32_t HandshakeMagic = 0x54434853; // "TCHS"

/// What each side offers the other at connection time, in HELLO (sender
/// to receiver) and WELCOME (back). Data after it: the credit word's rkey,
/// the ring's rkey, the worker address. Connections are symmetric: either
/// side can put frames into the other's ring (replies travel this way).
struct Offer {
  uint32_t Magic, Version;
  uint64_t CreditAddress;     // where the other side reports finished frames
  uint64_t RingAddress;       // where the other side puts frames
  uint32_t Slots, SlotSize;
  uint32_t CreditKeySize, RingKeySize, WorkerAddressSize;
  uint32_t TableCount;        // ImportTable records after the worker address
  uint32_t MailboxMode;       // tc_mailbox_mode_t of the side making the offer
  uint32_t Reserved;
};
constexpr uint32_t OfferVersion = 2;

/// The sender's credit area (one line the receiver puts into): finished
/// frames at word 0, a code-cache miss at word 1 (the sequence of the
/// frame that named code the receiver does not hold, plus one).
enum : unsigned { CreditWordFinished = 0, CreditWordMiss = 1 };
/// Where a jam's import table lives on the side that made the offer, so
/// the other side's frame templates can carry GOTP already pointing at it.
struct ImportTableRecord {
  uint64_t PackageTag;
  uint32_t Element, Reserved;
  uint64_t Table;
};

/// Waits for a UCX request (or an immediate completion) by progressing the
/// worker; returns its status.
ucs_status_t waitRequest(ucp_worker_h Worker, ucs_status_ptr_t Request);

} // namespace twochains::rt

struct tc_context;

namespace twochains::rt {
/// Receiver: answers the HELLOs that arrived since the last call.
void processHandshakes(tc_context *Ctx);
/// An endpoint to a worker address, for puts.
ucp_ep_h connectToWorker(tc_context *Ctx, tc_peer *Peer, const void *Address);
/// Allocates the peer's ring (frames from it) and credit word (its reports).
tc_status_t setupLocalSide(tc_context *Ctx, tc_peer *Peer);
/// The offer describing Peer's local side, with its body.
tc_status_t makeOffer(tc_context *Ctx, tc_peer *Peer, Offer &Header,
                      std::vector<uint8_t> &Body);
/// Takes the other side's offer: endpoint to its worker, its ring and
/// credit word. Data is only valid during the call.
bool acceptOffer(tc_context *Ctx, tc_peer *Peer, const Offer &Header,
                 const uint8_t *Data, size_t Length);
} // namespace twochains::rt

/// What a running jam receives as its tc_jam_ctx_t.
struct tc_jam_ctx {
  tc_peer *Peer;
  uint64_t Sequence;
  const tc_package *Package;
};

struct tc_peer {
  tc_context *Ctx = nullptr;
  ucp_ep_h Ep = nullptr;      // from sockaddr connection establishment
  unsigned Number = 0;        // tc_jam_sender: 1, 2, ... in connection order
  /// The endpoint puts go through, on the data worker, created from the
  /// peer's data worker address: unlike the sockaddr one, UCX may give it
  /// shared-memory lanes.
  ucp_ep_h DataEp = nullptr;
  bool Failed = false;

  // Sender side: the receiver's ring, and the credit word it writes.
  bool Welcomed = false;
  uint64_t RingAddress = 0;
  uint32_t Slots = 0, SlotSize = 0;
  ucp_rkey_h RingKey = nullptr;
  std::unique_ptr<twochains::rt::SenderRing> Send;
  ucp_mem_h CreditMem = nullptr;
  volatile uint64_t *CreditWord = nullptr;
  std::vector<uint8_t> Staging;
  /// The other side's import tables: (package tag, element) -> address.
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> RemoteTables;
  /// How the receiver runs injected code (from its offer).
  tc_mailbox_mode_t RemoteMode = TC_MAILBOX_CODE_CACHE;
  /// Per package, per element: the injected-frame template (header line and
  /// image, GOTP already set, so a send writes only the payload, the
  /// sequence and the trailer), and whether the receiver's code cache is
  /// believed to hold the image (set when the code is shipped; a miss
  /// report clears it).
  struct ElementSend {
    std::vector<uint8_t> Template;
    bool Held = false;
  };
  std::vector<std::pair<const tc_package *, std::vector<ElementSend>>> Sends;
  /// Cached frames are built in their slot's copy here, so a frame the
  /// receiver reports missing can be sent again, with code, from it. The
  /// copies are a line further apart than slots: slot sizes are multiples
  /// of 4 KiB, and first lines 4 KiB apart would all fall into the same
  /// few L1 sets and evict each other.
  std::vector<uint8_t> SlotFrames;
  size_t slotFrameStride() const { return size_t(SlotSize) + twochains::rt::FrameLine; }
  uint8_t *slotFrame(uint32_t Slot) { return SlotFrames.data() + Slot * slotFrameStride(); }
  uint64_t MissSeen = 0;              // the last miss report handled

  // Receiver side: this sender's ring, and where to report credits.
  ucp_mem_h RingMem = nullptr;
  uint8_t *Ring = nullptr;
  std::unique_ptr<twochains::rt::ReceiverRing> Receive;
  uint64_t CreditAddress = 0;
  ucp_rkey_h CreditKey = nullptr;
  uint64_t CreditSource = 0;          // the buffer a credit put reads
  /// When the expected frame was first seen incomplete while the next one
  /// was already complete (0: not stalled). Past a deadline, it was cut
  /// short: dropped.
  uint64_t StalledSinceNs = 0;
  unsigned IdlePolls = 0;             // empty polls since a frame last ran
  unsigned IncompletePolls = 0;       // polls that found the expected frame incomplete
  ucs_status_ptr_t CreditRequest = nullptr;
  /// A cached frame naming code not held: reported (sequence + 1) when, so
  /// a sender that never sends it again cannot stall the ring for ever.
  uint64_t MissReported = 0;
  uint64_t MissReportedNs = 0;
  uint64_t MissSource = 0;            // the buffer the miss report's put reads
};

struct tc_context {
  ucp_context_h Ucp = nullptr;
  ucp_worker_h Worker = nullptr;       // control: connections, handshakes, rieds
  ucp_worker_h DataWorker = nullptr;   // data: frames and credits (one-sided puts)
  unsigned ControlPolls = 0;           // tc_progress calls since the clock was read
  uint64_t ControlTurnNs = 0;          // when the control worker last progressed
  ucp_listener_h Listener = nullptr;
  uint32_t Slots = 64, SlotSize = 4096, Batch = 16;
  std::vector<tc_package *> Packages;
  std::vector<std::unique_ptr<tc_peer>> Accepted;   // receiver side
  struct PendingHello {
    ucp_ep_h Ep;
    twochains::rt::Offer Header;
    std::vector<uint8_t> Key;
  };
  std::vector<PendingHello> Hellos;
  std::vector<tc_peer *> Connecting;                // sender side, awaiting welcome
  unsigned PeersSeen = 0;
  std::vector<tc_peer *> Connected;                 // sender side, ready
  std::map<std::string, tc_peer *> Routes;          // onward connections of jams
  ucp_address_t *WorkerAddress = nullptr;
  size_t WorkerAddressSize = 0;
  /// Serialises the API when the executor thread runs (recursive: jams call
  /// tc_jam_reply from inside tc_progress).
  std::recursive_mutex Lock;
  std::atomic<bool> ExecutorRunning{false};
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
    std::string Name;
    std::vector<uint8_t> Bytes;
  };
  std::vector<PushedRied> PushedRieds;                       // to load, then answer
  std::vector<std::pair<ucp_ep_h, tc_status_t>> RiedAcks;   // answers to our pushes
};

namespace twochains::rt {
/// What tc_send and tc_progress hold: the context's lock while the
/// executor thread runs, nothing otherwise (the caller then serialises, as
/// with a UCX worker). An uncontended lock still costs an atomic
/// read-modify-write, which waits for the frame just stored into the other
/// process's memory to leave this core: in a stream, most of a send.
class HotPathGuard {
public:
  explicit HotPathGuard(tc_context *Ctx)
      : Held(Ctx->ExecutorRunning.load(std::memory_order_acquire) ? &Ctx->Lock : nullptr) {
    if (Held)
      Held->lock();
  }
  ~HotPathGuard() {
    if (Held)
      Held->unlock();
  }
  HotPathGuard(const HotPathGuard &) = delete;
  HotPathGuard &operator=(const HotPathGuard &) = delete;

private:
  std::recursive_mutex *Held;
};

std::string detectStashing();
ucs_status_t onRied(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                    size_t Length, const ucp_am_recv_param_t *Param);
ucs_status_t onRiedAck(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                       size_t Length, const ucp_am_recv_param_t *Param);
/// Loads the rieds peers pushed since the last call, and answers them.
void processPushedRieds(tc_context *Ctx);

/// Runs a checked injected or cached frame as the context's mailbox mode
/// says (InjectedCode.cpp). TC_ERR_NOT_CACHED: a cached frame names code
/// this receiver does not hold (the caller asks the sender for it).
tc_status_t runInjected(tc_context *Ctx, const tc_package &Pkg, uint32_t Element,
                        const FrameView &V, tc_jam_ctx *JamCtx);
/// Sender: sends again, with code, the cached frames the receiver reported
/// missing (Send.cpp).
void resendMissing(tc_peer *Peer);
} // namespace twochains::rt

#endif
