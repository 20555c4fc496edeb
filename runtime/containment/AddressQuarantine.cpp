//===- AddressQuarantine.cpp ----------------------------------------------===//
#include "containment/AddressQuarantine.h"

#include <algorithm>

using namespace twochains::rt;

/// An entry that says nothing any more: its refusal is over, or it was
/// never refused and its window has passed.
bool AddressQuarantine::stale(const Entry &E, uint64_t NowNs) const {
  return E.RefusedUntilNs ? NowNs >= E.RefusedUntilNs : NowNs - E.WindowStartNs >= WindowNs;
}

/// A full table: stale entries go; if none was, the least-charged entry
/// not refused (little is forgiven: see MaxEntries); if every entry is
/// refused, the one whose refusal ends first.
void AddressQuarantine::makeRoom(uint64_t NowNs) {
  for (auto I = Entries.begin(); I != Entries.end();)
    I = stale(I->second, NowNs) ? Entries.erase(I) : std::next(I);
  if (Entries.size() < MaxEntries)
    return;
  auto Victim = Entries.end();
  for (auto I = Entries.begin(); I != Entries.end(); ++I) {
    if (Victim == Entries.end()) {
      Victim = I;
      continue;
    }
    const Entry &E = I->second, &V = Victim->second;
    bool Better = !E.RefusedUntilNs != !V.RefusedUntilNs ? !E.RefusedUntilNs
                  : E.RefusedUntilNs                     ? E.RefusedUntilNs < V.RefusedUntilNs
                                                         : E.ChargedNs < V.ChargedNs;
    if (Better)
      Victim = I;
  }
  Entries.erase(Victim);
}

void AddressQuarantine::chargeOne(const PeerIdentity &Key, uint64_t Budget, uint64_t SpentNs,
                                  uint64_t NowNs, Verdict &V) {
  auto It = Entries.find(Key);
  if (It == Entries.end()) {
    if (Entries.size() >= MaxEntries)
      makeRoom(NowNs);
    It = Entries.emplace(Key, Entry{NowNs, 0, 0}).first;
  } else if (stale(It->second, NowNs)) {
    It->second = {NowNs, 0, 0};
  }
  Entry &E = It->second;
  E.ChargedNs += SpentNs;
  if (!E.RefusedUntilNs && E.ChargedNs >= Budget) {
    // Refused for a whole window from now, wherever in its window it
    // passed its budget: the end of the window may be a moment away.
    E.RefusedUntilNs = NowNs + WindowNs;
    if (!V.NewlyRefused) {
      V.NewlyRefused = true;
      V.Refused = Key;
      V.ChargedNs = E.ChargedNs;
      V.BudgetNs = Budget;
    }
  }
  V.RefusedUntilNs = std::max(V.RefusedUntilNs, E.RefusedUntilNs);
}

AddressQuarantine::Verdict AddressQuarantine::charge(const PeerIdentity &Who, uint64_t SpentNs,
                                                     uint64_t NowNs) {
  Verdict V;
  if (!enabled())
    return V;
  SpentNs = std::max(SpentNs, MinChargeNs);
  PeerIdentity Host;
  // The host group first: when both pass their budgets at once, the log
  // names the wider refusal.
  if (Who.hostGroup(Host))
    chargeOne(Host, BudgetNs * HostBudgets, SpentNs, NowNs, V);
  chargeOne(Who, BudgetNs, SpentNs, NowNs, V);
  return V;
}

uint64_t AddressQuarantine::refusedUntil(const PeerIdentity &Who, uint64_t NowNs) const {
  uint64_t Until = 0;
  auto Look = [&](const PeerIdentity &Key) {
    auto It = Entries.find(Key);
    if (It != Entries.end() && It->second.RefusedUntilNs > NowNs)
      Until = std::max(Until, It->second.RefusedUntilNs);
  };
  Look(Who);
  PeerIdentity Host;
  if (Who.hostGroup(Host))
    Look(Host);
  return Until;
}
