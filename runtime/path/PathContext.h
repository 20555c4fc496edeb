//===- PathContext.h - The frame path's part of a context -----------------===//
//
// What happens to a frame on its way, told to whoever keeps a call by it:
// send/ and receive/ raise these, the calls layer subscribes.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_PATH_PATHCONTEXT_H
#define TWOCHAINS_RUNTIME_PATH_PATHCONTEXT_H

#include "code/CodeContext.h"
#include "path/PeerPath.h"

namespace twochains::rt {

struct PathContext {
  /// A call's queued frame, kept by Key (QueuedCallKey), was sent with
  /// Sequence (send/Queue.cpp): the call is kept by it from now on. (A
  /// queued frame dropped ends its call through FrameAbandoned, by Key.)
  Subscribers<tc_peer *, uint64_t, uint64_t> CallSent;
  /// The receiver reported a frame of Peer abandoned (fault, time limit,
  /// quarantine; send/FaultReport.cpp): the call made with it ends.
  Subscribers<tc_peer *, uint64_t, tc_status_t> FrameAbandoned;
  /// An answer frame arrived from Peer, checked (receive/Receive.cpp): the
  /// call of CallSequence ends with it.
  Subscribers<tc_peer *, uint64_t, const uint8_t *, size_t> AnswerFrame;
};

} // namespace twochains::rt

#endif
