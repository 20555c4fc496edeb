//===- Context.h - The send layer's part of a context ---------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_CONTEXT_H
#define TWOCHAINS_RUNTIME_SEND_CONTEXT_H

#include "code/Context.h"

namespace twochains::rt {

struct SendContext : CodeContext {
  /// Called when the receiver reports a frame of Peer abandoned (fault,
  /// time limit, quarantine): the calls layer ends the call made with it.
  void (*FrameAbandoned)(tc_peer *Peer, uint64_t Sequence, tc_status_t Ended) = nullptr;
  /// Called when a call's queued frame, kept by Key (QueuedCallKey), is
  /// sent with Sequence: the calls layer keeps the call by it from now on.
  /// (A queued frame dropped ends its call through FrameAbandoned, by Key.)
  void (*CallSent)(tc_peer *Peer, uint64_t Key, uint64_t Sequence) = nullptr;
};

} // namespace twochains::rt

#endif
