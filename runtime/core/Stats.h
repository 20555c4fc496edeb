//===- Stats.h - The one way statistics are counted -----------------------===//
//
// tc_context_stats and tc_peer_stats read what these count. Threads on
// different channels may count into the context at once: atomically then,
// plainly otherwise (an atomic add waits for the frame just stored to
// leave the core). A peer's statistics are counted by whoever holds it.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_STATS_H
#define TWOCHAINS_RUNTIME_CORE_STATS_H

#include "core/CoreContext.h"

namespace twochains::rt {

using ContextStat = uint64_t tc_stats_t::*;
using PeerStat = uint64_t tc_peer_stats_t::*;

/// Adds N to one of the context's statistics, from any thread.
inline void count(CoreContext *Ctx, ContextStat Stat, uint64_t N = 1) {
  if (Ctx->Channels)
    __atomic_fetch_add(&(Ctx->Stats.*Stat), N, __ATOMIC_RELAXED);
  else
    Ctx->Stats.*Stat += N;
}

/// The same for the holder of the context's lock, where no channel counts
/// into Stat: the executor's own counters.
inline void countHeld(CoreContext *Ctx, ContextStat Stat, uint64_t N = 1) {
  Ctx->Stats.*Stat += N;
}

/// Adds N to one of a peer's statistics; the caller holds the peer.
inline void count(tc_peer *Peer, PeerStat Stat, uint64_t N = 1) { Peer->Stats.*Stat += N; }

} // namespace twochains::rt

#endif
