//===- Polled.cpp - Which rings every pass polls --------------------------===//
#include "core/Polled.h"

#include "base/Log.h"
#include "base/SharedSegment.h"
#include "core/Sleep.h"
#include "core/Stats.h"

#include <algorithm>
#include <cstring>

namespace twochains::rt {

void startPolling(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->PolledAt >= 0)
    return;
  if (Peer->Cold) {
    Ctx->RingOpened.notify(Peer);
    Peer->Cold = false;
    --Ctx->ColdPeers;
    countHeld(Ctx, &tc_stats_t::rings_warmed);
  }
  Peer->QuietTurns = 0;
  Peer->PolledAt = int(Ctx->Polled.size());
  Ctx->Polled.push_back(Peer);
  polledChanged(Ctx);
}

void stopPolling(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->PolledAt < 0)
    return;
  size_t At = size_t(Peer->PolledAt);
  tc_peer *Last = Ctx->Polled.back();
  Ctx->Polled[At] = Last;
  Last->PolledAt = int(At);
  Ctx->Polled.pop_back();
  Peer->PolledAt = -1;
}

void makeCold(CoreContext *Ctx, tc_peer *Peer) {
  stopPolling(Ctx, Peer);
  Peer->Cold = true;
  ++Ctx->ColdPeers;
}

void stopPollingAll(CoreContext *Ctx) {
  for (tc_peer *P : Ctx->Polled)
    P->PolledAt = -1;
  Ctx->Polled.clear();
}

bool quietLongEnough(tc_peer *Peer, uint64_t Received, uint64_t Sent, uint64_t Now) {
  if (Received != Peer->QuietReceived || Sent != Peer->QuietSent) {
    Peer->QuietReceived = Received;
    Peer->QuietSent = Sent;
    Peer->QuietTurns = 0;
    return false;
  }
  if (Peer->QuietTurns++ == 0)
    Peer->QuietSinceNs = Now;
  return Peer->QuietTurns >= QuietTurnsBeforeCold && Now - Peer->QuietSinceNs >= QuietBeforeColdNs;
}

void notQuiet(tc_peer *Peer) { Peer->QuietTurns = 0; }

/// The doorbell's places: one per peer this side may have at once, each
/// way (max_peers accepted, as many connected), at least a line's worth.
static uint32_t doorbellPlaces(const CoreContext *Ctx) {
  uint64_t Places = std::max<uint64_t>(uint64_t(Ctx->MaxPeers) * 2, 512);
  return uint32_t(std::min<uint64_t>(Places, MaxDoorbellPlaces));
}

static bool mapDoorbell(CoreContext *Ctx) {
  uint32_t Places = doorbellPlaces(Ctx);
  size_t Length = doorbellSegmentBytes(Places);
  std::string Why;
  if (!createSharedSegment(SegmentKind::Doorbell, Length, doorbellTokenAt(Length),
                           Ctx->DoorbellSegment, Why)) {
    logWarning("no doorbell (" + Why + "): every ring is polled");
    return false;
  }
  Ctx->Doorbell = reinterpret_cast<uint64_t *>(Ctx->DoorbellSegment.Base);
  Ctx->DoorbellPeers.assign(Places, nullptr);
  Ctx->OwnSegmentFiles[Ctx->DoorbellSegment.File] = 0;
  return true;
}

uint32_t takeDoorbellPlace(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->DoorbellPlace != NoDoorbell)
    return Peer->DoorbellPlace;
  if (!Ctx->Doorbell && (!Ctx->RmaUcp || !mapDoorbell(Ctx)))
    return NoDoorbell;
  auto Free = std::find(Ctx->DoorbellPeers.begin(), Ctx->DoorbellPeers.end(), nullptr);
  if (Free == Ctx->DoorbellPeers.end())
    return NoDoorbell;
  *Free = Peer;
  Peer->DoorbellPlace = uint32_t(Free - Ctx->DoorbellPeers.begin());
  return Peer->DoorbellPlace;
}

void giveBackDoorbellPlace(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->DoorbellPlace == NoDoorbell)
    return;
  if (Peer->DoorbellPlace < Ctx->DoorbellPeers.size() &&
      Ctx->DoorbellPeers[Peer->DoorbellPlace] == Peer)
    Ctx->DoorbellPeers[Peer->DoorbellPlace] = nullptr;
  Peer->DoorbellPlace = NoDoorbell;
  if (Peer->Cold) {
    Peer->Cold = false;
    --Ctx->ColdPeers;
  }
}

unsigned answerDoorbell(CoreContext *Ctx, void (*RangWhilePolled)(tc_peer *)) {
  uint64_t *D = Ctx->Doorbell;
  // Cleared before the bits are read: a sender that rings after the read
  // sets it again, so its frame is seen at a later pass.
  __atomic_store_n(&D[DoorbellSummary], 0, __ATOMIC_RELAXED);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  unsigned Warmed = 0;
  size_t Words = (Ctx->DoorbellPeers.size() + 63) / 64;
  for (size_t W = 0; W < Words; ++W) {
    if (!__atomic_load_n(&D[DoorbellBits + W], __ATOMIC_RELAXED))
      continue;
    uint64_t Bits = __atomic_exchange_n(&D[DoorbellBits + W], 0, __ATOMIC_ACQ_REL);
    while (Bits) {
      size_t Place = W * 64 + size_t(__builtin_ctzll(Bits));
      Bits &= Bits - 1;
      // A bit of a place given back: nothing.
      tc_peer *Peer = Place < Ctx->DoorbellPeers.size() ? Ctx->DoorbellPeers[Place] : nullptr;
      if (!Peer || !Peer->Welcomed)
        continue;
      if (Peer->PolledAt >= 0) {
        RangWhilePolled(Peer);
        continue;
      }
      startPolling(Ctx, Peer);
      ++Warmed;
    }
  }
  return Warmed;
}

void releaseDoorbell(CoreContext *Ctx) {
  Ctx->OwnSegmentFiles.erase(Ctx->DoorbellSegment.File);
  releaseSharedSegment(Ctx->DoorbellSegment);
  Ctx->Doorbell = nullptr;
  Ctx->DoorbellPeers.clear();
}

} // namespace twochains::rt
