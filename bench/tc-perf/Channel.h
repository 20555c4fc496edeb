//===- Channel.h - One variant's way of moving a message -------------------===//
//
// Every variant (Two-Chains in three modes, UCX put, UCX active messages)
// is a Channel, so the latency, rate and wait loops are written once and
// run the same on each: the only differences measured are the channels'.
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_CHANNEL_H
#define TC_PERF_CHANNEL_H

#include "Options.h"

#include <cstdint>
#include <vector>

namespace tcperf {

// Mailbox geometry, the same for Two-Chains and the ucx-put ring: a 32 KiB
// payload with an injected image, header and trailer fits a slot.
constexpr uint32_t RingSlots = 64;
constexpr uint32_t SlotBytes = 40960;
constexpr uint32_t CreditBatch = 16;

class Channel {
public:
  virtual ~Channel() = default;
  // Before a test, on both sides: what this test sends (the same payload
  // in both directions) and what runs on arrival.
  virtual bool prepare(Workload W, const std::vector<uint8_t> &Payload) = 0;
  // Sends one message; waits (progressing) while the receiver has no room.
  virtual bool send() = 0;
  // Progresses; returns how many messages arrived and ran since the last
  // call, or -1 after a failure (printed).
  virtual int poll() = 0;
  // Client, rate test: sends of a stream may wait to leave together
  // (Two-Chains: tc_peer_cork; frames by message then share one). drain()
  // sends what waits.
  virtual bool cork(bool) { return true; }
  // Client, rate test: waits until what was sent has run on the receiver
  // (ucx-put: until it has landed, as a put has no receiver action).
  virtual bool drain() = 0;
  // Server, rate test: tells the client that it has run what was sent.
  virtual bool acknowledge() { return true; }
  // Whether the server can count a stream's messages (a ucx-put stream
  // has no flow control, so later puts overwrite unread slots: no).
  virtual bool countsStream() const { return true; }
  // Progress only, for a server that does not count.
  virtual void progress() { poll(); }
};

} // namespace tcperf

#endif
