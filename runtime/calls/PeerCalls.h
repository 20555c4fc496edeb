//===- PeerCalls.h - The calls layer's part of a peer ---------------------===//
//
// The calls made to a peer and awaiting its answer, and the answers its
// jams sent back here and not yet delivered: read and written by calls/
// alone. Made on a peer's first call or answer (callsOf).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CALLS_PEERCALLS_H
#define TWOCHAINS_RUNTIME_CALLS_PEERCALLS_H

#include "core/Peer.h"

#include <deque>
#include <map>

struct tc_call;

namespace twochains::rt {

struct PeerCalls {
  /// Calls awaiting an answer, by the sequence of their frame.
  std::map<uint64_t, struct tc_call *> Waiting;
  /// Calls released before their answer came (timed out): the latest few,
  /// so that an answer that comes late is told from one to a frame that
  /// was no call.
  std::deque<uint64_t> GivenUp;
  /// Answers of jams (tc_jam_return) in flight to this peer, and bytes.
  size_t RepliesInFlight = 0, ReplyBytesInFlight = 0;
};

/// The calls layer's part of Peer, made on first use.
inline PeerCalls &callsOf(tc_peer *Peer) {
  if (!Peer->Calls)
    Peer->Calls.reset(new PeerCalls, [](PeerCalls *Part) { delete Part; });
  return *Peer->Calls;
}
/// Whether a call to Peer awaits its answer, or an answer to it is in
/// flight: its ring may not go cold.
inline bool callsAwaited(const tc_peer *Peer) {
  return Peer->Calls && (!Peer->Calls->Waiting.empty() || Peer->Calls->RepliesInFlight);
}

} // namespace twochains::rt

#endif
