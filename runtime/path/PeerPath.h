//===- PeerPath.h - The frame path's part of a peer -----------------------===//
//
// Every connection is symmetric: each side puts frames into a ring the
// other side owns and reads the credit line the other side writes back
// (the send half, Tx), and owns a ring the other side puts into and
// reports credits for it (the receive half, Rx). Replies and answers to
// calls are frames on the receive half of the side that sent. The halves
// are the frame path's (path/): it maps them from the offers (Mailbox.cpp)
// and moves frames and credits through them; send/ and receive/ use the
// rings through their classes (SenderRing, ReceiverRing). Every peer has
// both (wireup's newPeer).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_PATH_PEERPATH_H
#define TWOCHAINS_RUNTIME_PATH_PEERPATH_H

#include "base/SharedSegment.h"
#include "core/Peer.h"
#include "wire/Frame.h"
#include "wire/Ring.h"
#include "wire/Wire.h"

#include <memory>
#include <vector>

namespace twochains::rt {

/// The other side's ring, which this side puts frames into, and the credit
/// line the other side writes (FramePath.cpp, Mailbox.cpp; send/ advances
/// the sender ring).
struct PeerSendHalf {
  uint64_t RingAddress = 0;
  uint32_t Slots = 0, SlotSize = 0;
  ucp_rkey_h RingKey = nullptr;
  /// The ring as UCX maps it into this process (shared memory), or null:
  /// frames are then stored into it directly, trailer last (Send.cpp).
  uint8_t *RingDirect = nullptr;
  /// The mapping the ring lies in, registered against shrinking
  /// (containment/PeerMappings.h), or -1.
  int RingGuard = -1;
  std::unique_ptr<twochains::rt::SenderRing> Send;
  /// The credit line: on the RMA path the first page of the receive
  /// half's MailboxMem, else CreditLine.
  volatile uint64_t *CreditWord = nullptr;
  std::unique_ptr<uint64_t[]> CreditLine; // AM path: written by onCredit
  /// RMA puts (no direct mapping): frames are built in their slot's copy
  /// and put without waiting; each slot's put is completed before the slot
  /// is written again (by then credited, so landed), at a flush, or at
  /// close (Send.cpp).
  std::vector<ucs_status_ptr_t> Puts;
  /// tc_peer_cork: on the message path, frames wait here, consecutive from
  /// BatchFirst, and leave as one message (FramePath.cpp, flushFrameBatch).
  bool Corked = false;
  /// The frame being sent joins the batch as a corked peer's would: the
  /// send side gathers small frames to a receiver that is behind
  /// (send/Bundle.h, gathersFrames); set around one send.
  bool Gather = false;
  /// The header of the frame message in flight (FramePath.cpp).
  union {
    twochains::rt::FrameMessage One;
    twochains::rt::FrameBatchMessage Many;
  } MessageHeader = {};
  std::vector<uint8_t> Batch;
  uint32_t BatchFrames = 0;
  uint64_t BatchFirst = 0;
  uint64_t BatchSince = 0; // its first frame's time (base/Ticks.h)
  /// The receiver's doorbell as UCX maps it here (shared memory), or null,
  /// the word that holds this side's place in it and the place's bit:
  /// while the receiver says this side's ring is cold (CreditWordCold),
  /// each frame stored is followed by ringing it (FramePath.h).
  uint64_t *Doorbell = nullptr, *DoorbellWord = nullptr;
  /// The receiver closed its cold ring from this sequence on, as the load
  /// after the last frame stored found it (0: open; FramePath.h).
  uint64_t ClosedAt = 0;
  uint64_t DoorbellBit = 0;
  /// The peer's doorbell segment as mapped here (base/SharedSegment.h).
  uint8_t *DoorbellMapped = nullptr;
  size_t DoorbellMappedBytes = 0;
  /// A shared-memory connection (PeerReceiveHalf::Shared): the peer's
  /// segment of its credit line and ring as mapped here, and the address
  /// of its RMA worker, to which an endpoint is made only if a payload
  /// goes there (dataEndpoint).
  uint8_t *MailboxMapped = nullptr;
  size_t MailboxMappedBytes = 0;
  /// Its segment's token: a payload by RMA names this side with it.
  uint8_t MailboxToken[SegmentTokenBytes] = {};
  std::vector<uint8_t> WorkerAddress;
  /// The credit line's words as the last sleep looked at them
  /// (SleepLook.cpp): one that changed since is something to do.
  uint64_t SleepCredit[CreditWordsWatched] = {};
};

/// This side's ring, which the other side puts frames into, and where its
/// credits are reported (Mailbox.cpp, FramePath.cpp; receive/ advances the
/// receiver ring).
struct PeerReceiveHalf {
  /// RMA path: the one segment the peer writes, this side's credit line
  /// (its first page) and the ring (from its second); else the ring is
  /// anonymous memory.
  ucp_mem_h MailboxMem = nullptr;
  /// The file of the segment above (either kind), while this side keeps
  /// it: in CoreContext::OwnSegmentFiles, so that no peer's key maps it.
  FileId MailboxFile;
  /// A connection between ranks of one host: the segment is this side's
  /// memory file (base/SharedSegment.h), not a UCX allocation, and the
  /// peer's is mapped the same way (OfferSharedMemory).
  bool Shared = false;
  SharedSegment SharedMailbox;
  uint8_t *Ring = nullptr;
  size_t RingBytes = 0;
  std::unique_ptr<twochains::rt::ReceiverRing> Receive;
  /// The sequence of the first frame since the ring's pages were last
  /// given back (releaseRingPages): only slots from it on hold pages.
  uint64_t ReleasedFrom = 0;
  uint64_t CreditAddress = 0;
  ucp_rkey_h CreditKey = nullptr;
  /// The sender's credit line as UCX maps it here (shared memory), or null:
  /// reports are then one release store each (FramePath.cpp).
  uint64_t *CreditDirect = nullptr;
  /// The mapping the credit line lies in, registered against shrinking, or -1.
  int CreditGuard = -1;
  /// The buffers credit reports read while in flight, and their requests.
  uint64_t CreditSource[3] = {};
  twochains::rt::CreditMessage CreditMsg = {};
  ucs_status_ptr_t CreditRequest[3] = {}; // finished, miss, fault
  /// The expected sequence + 1 when the last sleep found its frame there
  /// (SleepLook.cpp): found again, it is stalled, not new.
  uint64_t SleepFound = 0;
  /// Wakes it sent (path/FramePath.cpp, onWake), this context's looks
  /// before a sleep (CoreContext::SleepLooks) when the first came, and the
  /// times this side closed its cold ring (context/Polling.cpp): a peer
  /// wakes this side at most once a look and once a closing, and one that
  /// wakes it more is cut off.
  uint64_t WakesTaken = 0, SleepsAtFirstWake = 0, RingClosings = 0;
  /// The sender stores its frames straight into the ring (its offer says
  /// so, OfferStoresDirect): only then may the ring go cold.
  bool SenderStores = false;
};

/// Makes the frame path's part of a new peer.
inline void makePeerPath(tc_peer *Peer) {
  Peer->Tx.reset(new PeerSendHalf, [](PeerSendHalf *Part) { delete Part; });
  Peer->Rx.reset(new PeerReceiveHalf, [](PeerReceiveHalf *Part) { delete Part; });
}

} // namespace twochains::rt

#endif
