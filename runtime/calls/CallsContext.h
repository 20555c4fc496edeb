//===- CallsContext.h - The calls layer's part of a context ---------------===//
#ifndef TWOCHAINS_RUNTIME_CALLS_CALLSCONTEXT_H
#define TWOCHAINS_RUNTIME_CALLS_CALLSCONTEXT_H

#include "job/JobContext.h"

#include <atomic>
#include <list>
#include <map>
#include <string>
#include <vector>

namespace twochains::rt {

/// Answers that came as messages and wait for their peer's turn, at most;
/// and one peer's share of them, so that a peer whose answers' bytes never
/// come (until they are cancelled) leaves the rest to the others. A share
/// holds answers of the largest size (TC_CALL_MAX_REPLY).
constexpr size_t MaxArrivedAnswers = 256;
/// How long a call leaves the control worker alone (CallsContext): about
/// a TCP round trip here, so an answer by message waits for little more
/// than it would anyway. Turned every few polls from a call's start, its
/// system calls made a blocking call's round trip 2.0 us against UCX
/// AM's 1.1 us (bench/run-call-floor.sh).
constexpr uint64_t ControlQuietInCallNs = 20'000;
constexpr size_t MaxArrivedAnswerBytes = 16u << 20;
constexpr size_t MaxArrivedAnswersPerPeer = MaxArrivedAnswers / 4;
constexpr size_t MaxArrivedAnswerBytesPerPeer = MaxArrivedAnswerBytes / 4;
static_assert(MaxArrivedAnswerBytesPerPeer >= TC_CALL_MAX_REPLY, "a share holds any answer");

struct CallsContext {
  /// Calls started and not yet ended: while there are any, tc_progress
  /// turns the control worker, where answers larger than a slot arrive,
  /// every few calls, unless ControlQuiet: for the first
  /// ControlQuietInCallNs after a call began with none outstanding (until
  /// ControlQuietUntilNs) it is left alone, as most answers are frames,
  /// and each of its turns is a system call (TCP). Whoever reads the
  /// clock anyway ends the quiet (endControlQuiet): a waiting call every
  /// few passes, tc_progress every ClockEvery calls.
  std::atomic<size_t> CallsOutstanding{0};
  std::atomic<uint64_t> ControlQuietUntilNs{0};
  std::atomic<bool> ControlQuiet{false};
  /// Answers jams gave by message, until UCX is done with their bytes
  /// (Peer is cleared when the peer is released first).
  struct ReplySend {
    tc_peer *Peer;
    CallReply Header;
    std::vector<uint8_t> Bytes;
    bool Done = false;
  };
  std::list<ReplySend> ReplySends;
  /// Answers that came as messages, taken by the peer's turn, which holds
  /// its channel: a UCX callback may not.
  struct ArrivedAnswer {
    ucp_ep_h From;
    uint64_t Sequence;
    tc_status_t Status;
    std::vector<uint8_t> Bytes;
    bool Received;
    /// Refused for want of room: no bytes, the call ends with Status.
    bool Refused = false;
  };
  std::list<ArrivedAnswer> ArrivedAnswers;
  size_t ArrivedAnswerBytes = 0;

  /// A call began with none outstanding, at NowNs: the control worker's
  /// quiet begins.
  void beginControlQuiet(uint64_t NowNs) {
    ControlQuietUntilNs.store(NowNs + ControlQuietInCallNs, std::memory_order_relaxed);
    ControlQuiet.store(true, std::memory_order_relaxed);
  }
  /// The clock, read by whoever read it anyway: the quiet ends once past.
  void endControlQuiet(uint64_t NowNs) {
    if (ControlQuiet.load(std::memory_order_relaxed) &&
        NowNs >= ControlQuietUntilNs.load(std::memory_order_relaxed))
      ControlQuiet.store(false, std::memory_order_relaxed);
  }
};

} // namespace twochains::rt

#endif
