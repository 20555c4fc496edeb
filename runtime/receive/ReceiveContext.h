//===- ReceiveContext.h - The receive layer's part of a context -----------===//
#ifndef TWOCHAINS_RUNTIME_RECEIVE_RECEIVECONTEXT_H
#define TWOCHAINS_RUNTIME_RECEIVE_RECEIVECONTEXT_H

#include "base/Log.h"
#include "containment/ContainmentContext.h"
#include "path/PathContext.h"

#include <cstdlib>
#include <list>
#include <memory>

namespace twochains::rt {

struct ReceiveContext {
  /// The frame being run, copied out of the ring: the jam reads this,
  /// which no peer can write (docs/security.md). Under TC_CODE_TRUST_JOB
  /// only its header (and an injected frame's image): the jam reads its
  /// payload in the ring.
  std::unique_ptr<uint8_t[], void (*)(void *)> Private{nullptr, free};
  bool RunningJam = false; // tc_progress is not re-entered from a jam
  /// Addresses quarantined (receive/Quarantine.cpp): one line each, but an
  /// attacker may have many addresses.
  LogLimit QuarantineLog;
  /// Payloads sent ahead of their frames (receive/PayloadAhead.h): arriving
  /// or arrived, or refused (Status; no bytes), each for one frame of one
  /// peer (null: released while its bytes were fetched), and the bytes all
  /// of them hold.
  struct ArrivingPayload {
    CoreContext *Ctx;
    tc_peer *Peer;
    uint64_t Sequence;
    uint32_t Size;
    bool Received;
    tc_status_t Status;
    std::unique_ptr<uint8_t[]> Bytes;
    /// Since when its peer has made no progress while it is held: no frame
    /// of the peer ran (ExpectedAt is where its ring stood), none waits.
    uint64_t StalledSinceNs = 0;
    uint64_t ExpectedAt = 0;
    bool OnControl = false; // its body comes on the control worker
  };
  std::list<ArrivingPayload> PayloadsArriving;
  uint64_t PayloadAheadHeld = 0;
  /// PAYLOAD messages are taken on the RMA worker too (its handler is set:
  /// not where threads progress it on channels): offered to RMA peers.
  bool PayloadsByRma = false;
};

} // namespace twochains::rt

#endif
