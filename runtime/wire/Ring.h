//===- Ring.h - Slots and credits of one sender's ring --------------------===//
//
// Each connected sender owns one ring of Slots fixed-size slots in the
// receiver's mailbox. Frames carry consecutive sequence numbers; frame s
// goes to slot s % Slots. The receiver runs frames strictly in sequence and
// counts the ones it has finished; every Batch frames (or when asked) it
// puts that count into the sender's credit word, one-sided. The sender may
// use sequence s only while s < finished + Slots, so it never writes a slot
// whose previous frame has not finished, and nothing is overwritten, lost
// or run twice.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_RING_H
#define TWOCHAINS_RUNTIME_RING_H

#include "twochains/status.h"
#include <cstdint>
#include <memory>

namespace twochains::rt {

class SenderRing {
public:
  explicit SenderRing(uint32_t Slots)
      : Slots(Slots), FramesBefore(new uint64_t[Slots ? Slots : 1]()) {}

  /// Takes the next sequence and its slot, or TC_ERR_NO_CREDIT. Outputs are
  /// set only on success. Frames: how many frames the slot carries (a
  /// bundle's, wire/Bundle.h; else one).
  tc_status_t reserve(uint64_t *Sequence, uint32_t *Slot, uint32_t Frames = 1) {
    if (!Sequence || !Slot)
      return TC_ERR_INVALID_PARAM;
    if (Next >= Finished + Slots)
      return TC_ERR_NO_CREDIT;
    *Sequence = Next;
    *Slot = NextSlot;
    FramesBefore[NextSlot] = FramesSent;
    FramesSent += Frames;
    ++Next;
    if (++NextSlot == Slots)
      NextSlot = 0;
    return TC_OK;
  }
  /// Gives back the sequence just reserved, not used after all.
  void unreserve(uint64_t Sequence) {
    if (Sequence + 1 != Next)
      return;
    --Next;
    NextSlot = NextSlot ? NextSlot - 1 : Slots - 1;
    FramesSent = FramesBefore[NextSlot];
  }
  /// One more frame in the slot reserved last (a bundle's).
  void addFrames(uint32_t Frames) { FramesSent += Frames; }
  /// Frames sent, and frames the receiver finished as far as credited:
  /// counted in frames, where a slot may carry many (a bundle).
  uint64_t framesSent() const { return FramesSent; }
  uint64_t framesFinished() const {
    return Finished == Next ? FramesSent : FramesBefore[Finished % Slots];
  }
  /// The receiver reported Finished frames done (monotonic; stale or
  /// impossible reports are ignored).
  void credit(uint64_t Finished);

  uint64_t next() const { return Next; }
  /// Frames below it are credited: the receiver is done with them.
  uint64_t finished() const { return Finished; }
  uint64_t available() const { return Finished + Slots - Next; }

private:
  uint32_t Slots;
  uint64_t Next = 0;
  uint32_t NextSlot = 0;   // Next % Slots, kept: a division per send is tens of cycles
  uint64_t Finished = 0;
  /// Frames sent before the frame in each slot not yet credited (a slot
  /// is written again only once credited, so each entry stays until then).
  std::unique_ptr<uint64_t[]> FramesBefore;
  uint64_t FramesSent = 0;
};

class ReceiverRing {
public:
  ReceiverRing(uint32_t Slots, uint32_t Batch)
      : Slots(Slots), Batch(Batch ? Batch : 1) {}

  uint64_t expected() const { return Expected; }
  uint32_t expectedSlot() const { return ExpectedSlot; }
  /// The frame in the expected slot is done (run or dropped): the slot may
  /// be reused. Returns true when a credit report is due.
  bool finish() {
    ++Expected;
    if (++ExpectedSlot == Slots)
      ExpectedSlot = 0;
    return Expected - Reported >= Batch;
  }
  /// The count to report, and records that it was reported.
  uint64_t takeCreditReport();
  bool creditPending() const { return Expected != Reported; }

private:
  uint32_t Slots;
  uint32_t Batch;
  uint64_t Expected = 0;
  uint32_t ExpectedSlot = 0; // Expected % Slots, kept (no division per poll)
  uint64_t Reported = 0;
};

} // namespace twochains::rt

#endif
