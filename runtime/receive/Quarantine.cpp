//===- Quarantine.cpp - Abandoned frames charged to their peer's address --===//
#include "receive/Quarantine.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "base/Timeouts.h"
#include "core/Stats.h"

#include <algorithm>

using namespace twochains::rt;

/// Every peer within Refused (an address, or a host's addresses), accepted
/// or connected to, is refused until its address's refusal ends. Returns
/// how many.
static unsigned markPeers(CoreContext *Ctx, const PeerIdentity &Refused, uint64_t NowNs) {
  unsigned Marked = 0;
  auto Mark = [&](tc_peer *P) {
    if (!P->Identity.within(Refused))
      return;
    P->Receiving->AddressRefusedUntilNs = Ctx->Containment->Addresses.refusedUntil(P->Identity,
                                                                                   NowNs);
    P->Receiving->AddressRefusalTold = false;
    Marked += P->Welcomed && !P->Failed;
  };
  for (auto &P : Ctx->Accepted)
    Mark(P.get());
  for (tc_peer *P : Ctx->Connected)
    Mark(P);
  return Marked;
}

static std::string ms(uint64_t Ns) { return std::to_string(Ns / 1'000'000) + " ms"; }

void twochains::rt::chargeAbandoned(CoreContext *Ctx, tc_peer *Peer, const JamRun &Run) {
  AddressQuarantine &Q = Ctx->Containment->Addresses;
  if (!Q.enabled())
    return;
  uint64_t Now = nowNs();
  // Seen by the watchdog: it ran at least since then (a quarter limit
  // more at most). Not seen: it faulted within a quarter limit, charged
  // the least.
  bool Seen = Run.SeenSerial.load(std::memory_order_acquire) ==
              Run.Serial.load(std::memory_order_relaxed);
  uint64_t Spent = Seen ? Now - std::min(Now, Run.SeenNs.load(std::memory_order_relaxed)) : 0;
  AddressQuarantine::Verdict V = Q.charge(Peer->Identity, Spent, Now);
  if (!V.NewlyRefused)
    return;
  countHeld(Ctx, &tc_stats_t::addresses_quarantined);
  unsigned Peers = markPeers(Ctx, V.Refused, Now);
  bool Host = !(V.Refused == Peer->Identity);
  logLimited(
      Ctx->Receive->QuarantineLog, TC_LOG_ERROR,
      "quarantined " +
          (Host ? "host " + V.Refused.str() + " (the addresses of " + Peer->Identity.str() +
                      "'s host together)"
           : V.Refused.Family == PeerIdentity::FamilyJobRank ? V.Refused.str()
                                                             : "address " + V.Refused.str()) +
          " for " + std::to_string(Q.windowNs() / NsPerS) + " s: its abandoned frames took " +
          ms(V.ChargedNs) + " within " + std::to_string(Q.windowNs() / NsPerS) +
          " s, past its budget of " + ms(V.BudgetNs) + " (quarantine_budget_ms); the last from " +
          Peer->Name + ". Its frames (of " + std::to_string(Peers) +
          " peers connected now) and new connections are refused");
}

bool twochains::rt::addressStillRefused(tc_peer *Peer) {
  if (nowNs() < Peer->Receiving->AddressRefusedUntilNs)
    return true;
  Peer->Receiving->AddressRefusedUntilNs = 0;
  return false;
}

uint64_t twochains::rt::addressRefusedUntil(CoreContext *Ctx, const PeerIdentity &Who) {
  return Ctx->Containment->Addresses.enabled()
             ? Ctx->Containment->Addresses.refusedUntil(Who, nowNs())
             : 0;
}
