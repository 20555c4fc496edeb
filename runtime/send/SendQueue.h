//===- SendQueue.h - Frames waiting to leave for one peer ------------------===//
//
// Frames jams sent to a peer while its ring was full, and frames behind
// code being shipped ahead (send/Send.cpp, queueFrame): sent, in order, as
// credits come back and the code is installed; bounded. The queue keeps
// its own counts (the payload bytes it holds, and per origin the frames
// and bytes jams of other peers forwarded here), so that no writer keeps
// them by hand: every change goes through push, erase, clear or moveTo.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_SENDQUEUE_H
#define TWOCHAINS_RUNTIME_SEND_SENDQUEUE_H

#include "twochains/twochains.h"

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

struct tc_package;

namespace twochains::rt {

class SendQueue {
public:
  struct Frame {
    const tc_package *Package; // null: an answer to call CallSequence
    uint32_t Element;
    std::vector<uint8_t> Payload;
    uint64_t CallSequence = 0;
    /// A frame a jam forwarded here (tc_jam_forward): the number of the
    /// peer whose frame ran it; 0 for this peer's own (tc_jam_reply).
    unsigned Origin = 0;
    tc_send_mode_t Mode = TC_SEND_LOCAL;
    /// A call's frame (tc_call_start): the key its call is kept by until
    /// the frame is sent and has a sequence (0: not a call).
    uint64_t CallKey = 0;
  };
  /// What one origin's forwarded frames hold here.
  struct Held {
    size_t Frames = 0, Bytes = 0;
  };
  using iterator = std::deque<Frame>::iterator;

  bool empty() const { return Frames.empty(); }
  size_t size() const { return Frames.size(); }
  /// The payload bytes of every frame queued.
  size_t bytes() const { return Bytes; }
  Held heldBy(unsigned Origin) const {
    auto It = ByOrigin.find(Origin);
    return It == ByOrigin.end() ? Held{} : It->second;
  }

  Frame &front() { return Frames.front(); }
  iterator begin() { return Frames.begin(); }
  iterator end() { return Frames.end(); }

  /// Queues F last (the caller checked the limits).
  void push(Frame F) {
    count(F, +1);
    Frames.push_back(std::move(F));
  }
  /// The frame at It leaves the queue (sent, dropped, or failed for good).
  iterator erase(iterator It) {
    count(*It, -1);
    return Frames.erase(It);
  }
  void clear() {
    Frames.clear();
    ByOrigin.clear();
    Bytes = 0;
  }
  /// Every frame here moves to To, ahead of To's own, in order.
  void moveTo(SendQueue &To) {
    for (auto It = Frames.rbegin(); It != Frames.rend(); ++It) {
      To.count(*It, +1);
      To.Frames.push_front(std::move(*It));
    }
    clear();
  }

private:
  void count(const Frame &F, int Sign) {
    size_t Size = F.Payload.size();
    Bytes = Sign > 0 ? Bytes + Size : Bytes - Size;
    if (!F.Origin)
      return;
    Held &H = ByOrigin[F.Origin];
    if (Sign > 0) {
      ++H.Frames;
      H.Bytes += Size;
    } else if (--H.Frames == 0) {
      ByOrigin.erase(F.Origin);
    } else {
      H.Bytes -= Size;
    }
  }

  std::deque<Frame> Frames;
  size_t Bytes = 0;
  std::map<unsigned, Held> ByOrigin;
};

} // namespace twochains::rt

#endif
