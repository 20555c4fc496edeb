//===- Context.h - The send layer's part of a context ---------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_CONTEXT_H
#define TWOCHAINS_RUNTIME_SEND_CONTEXT_H

#include "code/Context.h"

namespace twochains::rt {

struct SendContext : CodeContext {
  /// The receiver reported a frame of Peer abandoned (fault, time limit,
  /// quarantine): the calls layer subscribes, to end the call made with it.
  Subscribers<tc_peer *, uint64_t, tc_status_t> FrameAbandoned;
  /// A call's queued frame, kept by Key (QueuedCallKey), was sent with
  /// Sequence: the calls layer subscribes, to keep the call by it from now
  /// on. (A queued frame dropped ends its call through FrameAbandoned, by
  /// Key.)
  Subscribers<tc_peer *, uint64_t, uint64_t> CallSent;
};

} // namespace twochains::rt

#endif
