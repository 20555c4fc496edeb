//===- CodeMiss.h - The code cache's miss and resend protocol -------------===//
//
//   receiver: a cached frame names code it does not hold (evicted, or never
//             installed): it writes the frame's sequence + 1 into the
//             sender's credit line (word CreditWordMiss) and waits for the
//             slot to be rewritten, with code, by the same sequence; past
//             a deadline it gives the frame up.
//   sender:   a new miss report naming a frame still in flight, sent as
//             cached, is sent again into the same slot as an injected frame.
//
// Both halves decide here, from the numbers alone; the callers do the
// reading and writing (receive/Receive.cpp, send/Send.cpp). docs/code-cache.md.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CODEMISS_H
#define TWOCHAINS_RUNTIME_CODEMISS_H

#include <cstdint>

namespace twochains::rt {

/// A sender that never sends a missing image again stalls only its own
/// ring, and only this long.
constexpr uint64_t ResendDeadlineNs = 5'000'000'000;

/// The receiver's half, one per sender's ring.
class MissWait {
public:
  /// Frame Seq was reported missing at NowNs.
  void reported(uint64_t Seq, uint64_t NowNs) {
    Reported = Seq + 1;
    ReportedNs = NowNs;
  }
  /// Whether the receiver waits for Seq to be sent again: its slot then
  /// reads as anything until the injected frame has landed whole (so
  /// ordered placement cannot be trusted for it either).
  bool awaiting(uint64_t Seq) const { return Reported == Seq + 1; }

  enum class Step { Run, Wait, GiveUp };
  /// What to do with the expected frame Seq, given whether a complete
  /// injected frame of that sequence is in its slot now.
  Step step(uint64_t Seq, bool ResentArrived, uint64_t NowNs) const {
    if (!awaiting(Seq) || ResentArrived)
      return Step::Run;
    return NowNs - ReportedNs <= ResendDeadlineNs ? Step::Wait : Step::GiveUp;
  }

private:
  uint64_t Reported = 0; // sequence + 1 of the frame asked for; 0: none
  uint64_t ReportedNs = 0;
};

/// The sender's half, one per receiver.
class MissReports {
public:
  /// Takes the credit line's miss word. True, and Seq set, if it is a new
  /// report naming a frame still in flight: sent (below Next) and not
  /// older than the ring's Slots frames. A stale, repeated or impossible
  /// report changes nothing.
  bool take(uint64_t Word, uint64_t Next, uint32_t Slots, uint64_t &Seq) {
    if (Word == Seen)
      return false;
    Seen = Word;
    if (Word == 0)
      return false;
    uint64_t S = Word - 1;
    if (S >= Next || S + Slots < Next)
      return false;
    Seq = S;
    return true;
  }

  /// False if take(Word, ...) would change nothing and return false.
  bool mayTake(uint64_t Word) const { return Word != Seen; }

private:
  uint64_t Seen = 0; // the last word taken
};

} // namespace twochains::rt

#endif
