//===- PeerReceive.h - The receive layer's part of a peer -----------------===//
//
// What running a peer's frames leaves behind: how its ring was polled, the
// package its frames last named, the frames of it that wait (for code, for
// a payload, cut short), those abandoned, and the refusals not yet told.
// Read and written by receive/ alone (context/ reads it to decide whether
// the ring may go cold). Every peer has one (wireup's newPeer makes it).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_RECEIVE_PEERRECEIVE_H
#define TWOCHAINS_RUNTIME_RECEIVE_PEERRECEIVE_H

#include "core/Peer.h"
#include "wire/Bundle.h"
#include "wire/CodeMiss.h"

#include <map>

namespace twochains::rt {

/// The bundle in the ring's expected slot, as first seen (wire/Bundle.h),
/// and how many of its frames have run.
struct OpenBundleView {
  uint64_t SequencePlusOne = 0; // 0: none
  BundleHeader Header = {};
  uint32_t Ran = 0;
  uint32_t Seen = 0; // its count at the last look
};

struct PeerReceive {
  // First, on one line: what an idle poll reads (Receive.h, pollRing).
  unsigned IdlePolls = 0;       // empty polls since a frame last ran
  unsigned IncompletePolls = 0; // polls that found the expected frame incomplete
  uint64_t IdleSinceNs = 0;     // the first of the IdlePolls (Receive.h, idleReportDue)
  bool CreditsAsked = false;    // the sender waits for them (Receive.h, creditsAsked)
  /// A cached frame naming code not held, asked for (CodeMiss.h): a
  /// sender that never sends it again cannot stall the ring for ever.
  MissWait CodeWait;
  /// The package this peer's last frame named, and how many packages the
  /// context had then (Receive.cpp, receiverPackage).
  tc_package *RunPackage = nullptr;
  size_t RunPackagesSeen = 0;
  /// A bundle being run (Receive.cpp, serveBundle).
  OpenBundleView Bundle;
  /// Frames in the slots before the expected one: a bundle's count, else
  /// one a slot (tc_jam_sequence).
  uint64_t FramesBefore = 0;
  /// When the expected frame was first seen incomplete while the next one
  /// was already complete (0: not stalled). Past a deadline, it was cut
  /// short: dropped.
  uint64_t StalledSinceNs = 0;
  /// Since when the expected frame waits for its payload, sent ahead of it
  /// (PayloadAhead.h; 0: it does not).
  uint64_t PayloadWaitSinceNs = 0;
  /// Frames of each element abandoned (faults, overruns), for quarantine.
  std::map<uint32_t, uint32_t> Abandoned;
  uint64_t AbandonedCount = 0;
  /// The fault word of the last frame of this peer's refused (kind
  /// TC_JAM_REFUSED), not yet told: its report waits for the one in
  /// flight, never for the peer (Receive.cpp, tellRefusal).
  uint64_t RefusalPending = 0;
  /// Until when the peer's address is quarantined (0: it is not), set for
  /// every peer of the address when it is (containment/AddressQuarantine.h):
  /// its frames are refused; the sender is told once.
  uint64_t AddressRefusedUntilNs = 0;
  bool AddressRefusalTold = false;
  /// What its frames can make this side log again and again: refusals,
  /// abandonments (base/Log.h, logLimited).
  LogLimit RefusedFrameLog, AbandonedFrameLog;
};

/// Makes the receive layer's part of a new peer.
inline void makePeerReceive(tc_peer *Peer) {
  Peer->Receiving.reset(new PeerReceive, [](PeerReceive *Part) { delete Part; });
}

} // namespace twochains::rt

#endif
