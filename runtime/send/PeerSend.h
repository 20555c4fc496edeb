//===- PeerSend.h - The send layer's part of a peer -----------------------===//
//
// What sending to a peer keeps beside its ring: the frames waiting to
// leave, each element's frame template, the copies of cached frames a
// miss report sends again, the payloads sent ahead of their frames, and
// what the next tc_flush tells (fault reports, dropped frames). Written by
// send/ alone (wireup hands it the offer's sizes, job/ moves a handle's
// frames, both through the functions below); calls/ and job/ read it.
// Every peer has one (wireup's newPeer).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_PEERSEND_H
#define TWOCHAINS_RUNTIME_SEND_PEERSEND_H

#include "core/Peer.h"
#include "send/SendQueue.h"
#include "wire/CodeMiss.h"

#include <atomic>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

namespace twochains::rt {

/// Per package, per element: the injected-frame template (header line and
/// image, so a send writes only the payload, the sequence and the
/// trailer), and whether the receiver's code cache is believed to hold the
/// image (set when the code is shipped; a miss report clears it).
struct ElementSend {
  std::vector<uint8_t> Template;
  bool Held = false;
  /// The image is larger than a slot and was shipped ahead of its frames
  /// (code/CodeTransfer.cpp): its frames are cached frames in every mode.
  bool Shipped = false;
  /// Why its shipment failed for good (refused, or no answer in time):
  /// its frames that need one fail with this at once. TC_OK: none did.
  tc_status_t Refused = TC_OK;
  bool TooLargeLogged = false;
};

using QueuedFrame = SendQueue::Frame;

/// A bundle open in a slot of the receiver's ring (send/Bundle.h): where,
/// its sequence, what its frames are, how many are in it, how many fit.
struct OpenBundle {
  uint8_t *Slot = nullptr;
  uint64_t Sequence = 0;
  uint64_t Package = 0;
  uint32_t Element = 0, Size = 0, Stride = 0, Count = 0, Capacity = 0;
};

/// Whether a payload sent ahead of its frame leaves from a copy (the
/// caller's buffer is free on return) or from the caller's buffer itself
/// (TC_SEND_NO_COPY), which it borrows until UCX is done reading it.
enum class PayloadHold { Copy, Borrow };

/// A payload sent from the caller's buffer: the frames sent before its
/// frame, and whether UCX is done reading the buffer (set as its send
/// completes, which may be after the peer is released).
struct BorrowedPayload {
  uint64_t FramesBefore = 0;
  std::shared_ptr<std::atomic<bool>> Done;
};

struct PeerSend {
  /// A frame is built here when it cannot be built in place.
  std::vector<uint8_t> Staging;
  /// Cached frames are built in their slot's copy here, so a frame the
  /// receiver reports missing can be sent again, with code, from it. The
  /// copies are a line further apart than slots (FrameStride): slot sizes
  /// are multiples of 4 KiB, and first lines 4 KiB apart would all fall
  /// into the same few L1 sets and evict each other.
  std::vector<uint8_t> SlotFrames;
  size_t FrameStride = 0;
  uint8_t *slotFrame(uint32_t Slot) { return SlotFrames.data() + Slot * FrameStride; }
  std::vector<std::pair<const tc_package *, std::vector<ElementSend>>> Sends;
  MissReports Misses; // the receiver's requests for code (CodeMiss.h)
  /// Frames waiting to leave, in order, with their counts (SendQueue.h).
  SendQueue Queued;
  /// Queued calls are kept (Calls) by a key of their own until their frame
  /// is sent: QueuedCallKey, counting up.
  uint64_t NextQueuedCall = 0;
  /// Payloads larger than a slot (PayloadAhead.h): the bytes the receiver
  /// takes from this side at once (its offer; 0: none), and those sent
  /// ahead of frames it has not credited yet, by sequence.
  uint32_t PayloadAheadBytes = 0;
  /// They go on the RMA endpoint (the receiver offered to take them there,
  /// and neither side's RMA worker is progressed by channels' threads).
  bool PayloadsByRma = false;
  uint64_t PayloadAheadInFlight = 0;
  std::deque<std::pair<uint64_t, uint32_t>> PayloadsAhead;
  /// The bytes of its sends UCX has not completed yet (shared with them:
  /// they may end after the peer; a channel's thread reads it without the
  /// context).
  std::shared_ptr<std::atomic<unsigned>> PayloadSending;
  /// Payloads sent from callers' buffers, oldest first, until UCX is done
  /// with each: a frame is not counted finished before (tc_peer_frames),
  /// nor is a flush done.
  std::deque<BorrowedPayload> Borrowed;
  /// Frames dropped from the queue since the last tc_flush (their code was
  /// refused, or not answered for, Send.cpp): the flush's status, once.
  tc_status_t DroppedUnflushed = TC_OK;
  uint64_t FaultSeen = 0; // the last fault report taken
  /// What the next tc_flush returns, once, for the reports taken since the
  /// last: TC_ERR_JAM_FAULT for an abandoned frame, a refusal's status.
  tc_status_t FaultUnflushed = TC_OK;
  tc_jam_fault_t LastFault = {};
  /// Its fault reports, logged: one of a frame never sent once, the rest
  /// limited (base/Log.h).
  bool FalseFaultLogged = false;
  LogLimit FaultReportLog;
  /// The bundle open in the receiver's ring (send/Bundle.h), and whether
  /// frames may be bundled to this peer (tc_peer_aggregate, TC_AGGREGATE).
  OpenBundle Bundle;
  bool Aggregate = true;
};

/// Makes the send layer's part of a new peer.
inline void makePeerSend(tc_peer *Peer) {
  Peer->Sending.reset(new PeerSend, [](PeerSend *Part) { delete Part; });
}

/// Wireup, as it takes the receiver's offer: the buffers its slots need
/// (a staging slot; slot copies where a frame may have to be sent again
/// from one: SlotCopies), the bytes it takes ahead of frames, and whether
/// they go on the RMA endpoint.
void takeOfferedSendSide(tc_peer *Peer, uint32_t Slots, uint32_t SlotSize, bool SlotCopies,
                         uint32_t PayloadAheadBytes, bool PayloadsByRma);
/// A released peer keeps nothing of its send side that a call on it reads
/// (each returns TC_ERR_IO first): its buffers and waiting frames go.
void shedSendSide(tc_peer *Peer);
/// A handle's waiting frames: dropped (returns how many), or moved ahead
/// of any waiting on the connection it is bound to (job/Route.cpp).
size_t dropQueuedFrames(tc_peer *Handle);
void moveQueuedFrames(tc_peer *Handle, tc_peer *Connection);

} // namespace twochains::rt

#endif
