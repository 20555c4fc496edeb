//===- ContainmentContext.h - The containment layer's part of a context ===//
#ifndef TWOCHAINS_RUNTIME_CONTAINMENT_CONTAINMENTCONTEXT_H
#define TWOCHAINS_RUNTIME_CONTAINMENT_CONTAINMENTCONTEXT_H

#include "containment/AddressQuarantine.h"
#include "containment/Watchdog.h"

#include <cstdint>
#include <memory>

namespace twochains::rt {

/// Jams that fault or overrun their time limit are abandoned (JamGuard.h,
/// Watchdog.h); an element abandoned QuarantineFaults times for one sender
/// is refused from it; an address whose abandoned frames took more than
/// its budget is refused, frames and connections (AddressQuarantine.h).
struct ContainmentContext {
  std::unique_ptr<Watchdog> Dog; // null: no time limit
  uint32_t QuarantineFaults = 3;
  AddressQuarantine Addresses;
};

} // namespace twochains::rt

#endif
