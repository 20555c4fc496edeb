//===- AddressQuarantine.h - Abandoned-frame time kept per peer address ---===//
//
// A peer whose frames loop or fault is stopped frame by frame (the time
// limit, the jam guard) and, per connection, element by element
// (quarantine_faults). Neither survives a reconnect: an attacker with the
// key that reconnects gets a fresh count each time, and every looping frame
// holds the executor for a whole time limit. So the time abandoned frames
// take is also charged to the peer's identity (core/PeerIdentity.h: its
// address), which outlives its connections: an address whose abandoned
// frames took more than its budget within a window is refused, frames and
// connections, for a window from then. Addresses that are certainly one host
// (loopback's 127.0.0.0/8) are charged together too, with a larger budget,
// so that a host cannot multiply its budget by its addresses.
//
// The table is bounded (MaxEntries); docs/containment.md says what happens
// when it is full and what this costs a good peer of the same address.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTAINMENT_ADDRESSQUARANTINE_H
#define TWOCHAINS_RUNTIME_CONTAINMENT_ADDRESSQUARANTINE_H

#include "core/PeerIdentity.h"

#include <cstddef>
#include <cstdint>
#include <map>

namespace twochains::rt {

class AddressQuarantine {
public:
  /// Defaults of tc_context_params_t's quarantine_budget_ms and
  /// quarantine_window_ms: four time limits (of the default 1000 ms) a
  /// minute. The containment tests' longest honest case, a jam stopped
  /// inside a library call, takes eleven limits of 200 ms.
  static constexpr uint32_t DefaultBudgetMs = 4000;
  static constexpr uint32_t DefaultWindowMs = 60000;
  /// A host's addresses together may take this many budgets of one.
  static constexpr unsigned HostBudgets = 2;
  /// Addresses and host groups kept at once: 1024 entries of some 100
  /// bytes. The time in all charges of a window is at most the window's
  /// length per thread that runs frames, so when the table is full the
  /// least-charged entry holds at most about a thousandth of that.
  static constexpr size_t MaxEntries = 1024;
  /// A fault ends a frame in microseconds, before anything measures it:
  /// each abandoned frame is charged at least this, so that a flood of
  /// fast faults over many connections is counted too.
  static constexpr uint64_t MinChargeNs = 1'000'000;

  /// Budget 0: never quarantines.
  void setBudget(uint64_t BudgetNs, uint64_t WindowNs) {
    this->BudgetNs = BudgetNs;
    this->WindowNs = WindowNs;
  }
  bool enabled() const { return BudgetNs != 0; }
  uint64_t budgetNs() const { return BudgetNs; }
  uint64_t windowNs() const { return WindowNs; }

  /// What a charge did.
  struct Verdict {
    /// Until when Who is refused (its address or its host group); 0: it
    /// is not.
    uint64_t RefusedUntilNs = 0;
    /// What the charge put past its budget just now (an address or a host
    /// group: every peer within it is refused), and what that had taken.
    bool NewlyRefused = false;
    PeerIdentity Refused;
    uint64_t ChargedNs = 0, BudgetNs = 0;
  };
  /// Charges an abandoned frame of SpentNs (at least MinChargeNs) to Who
  /// and to its host group.
  Verdict charge(const PeerIdentity &Who, uint64_t SpentNs, uint64_t NowNs);
  /// Until when Who is refused, by its address or its host group (0: not).
  uint64_t refusedUntil(const PeerIdentity &Who, uint64_t NowNs) const;
  size_t size() const { return Entries.size(); }

private:
  struct Entry {
    uint64_t WindowStartNs = 0, ChargedNs = 0;
    uint64_t RefusedUntilNs = 0; // 0: not refused
  };
  void chargeOne(const PeerIdentity &Key, uint64_t BudgetNs, uint64_t SpentNs, uint64_t NowNs,
                 Verdict &V);
  bool stale(const Entry &E, uint64_t NowNs) const;
  void makeRoom(uint64_t NowNs);
  uint64_t BudgetNs = 0, WindowNs = 0;
  std::map<PeerIdentity, Entry> Entries;
};

} // namespace twochains::rt

#endif
