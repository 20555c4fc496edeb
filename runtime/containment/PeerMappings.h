//===- PeerMappings.h - Peers' memory mapped here, that may shrink --------===//
//
// UCX maps a peer's shared-memory segment into this process, and this side
// stores into it (frames, answers, credits) and reads frames back from it.
// The peer owns the segment: truncating it makes the next access here
// fault (SIGBUS), outside any jam. Each such mapping is registered; a
// SIGBUS inside one replaces it with private zero pages and marks it
// broken, and the access goes on there, touching nothing of anyone's.
// Housekeeping then ends the peer (wireup/Connection.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTAINMENT_PEERMAPPINGS_H
#define TWOCHAINS_RUNTIME_CONTAINMENT_PEERMAPPINGS_H

#include <cstdint>

namespace twochains::rt {

/// Registers [Begin, End), page-aligned; a handle, or -1 if the table of
/// every context in the process is full.
int guardPeerMapping(uintptr_t Begin, uintptr_t End);
/// Forgets a registration (before the mapping goes).
void releasePeerMapping(int Handle);
/// Whether the peer shrank the mapping under this side: it is now private
/// zero pages, and the peer must go.
bool peerMappingBroken(int Handle);
/// For the fault handler (async-signal-safe): if Address lies in a
/// registered mapping, replaces it and says so; the access then retries.
bool replaceBrokenPeerMapping(uintptr_t Address);

} // namespace twochains::rt

#endif
