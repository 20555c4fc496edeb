//===- Clock.h - The runtime's one clock ----------------------------------===//
#ifndef TWOCHAINS_RUNTIME_BASE_CLOCK_H
#define TWOCHAINS_RUNTIME_BASE_CLOCK_H

#include <chrono>
#include <cstdint>

namespace twochains::rt {

/// Steady-clock nanoseconds: every deadline and period in the runtime.
inline uint64_t nowNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

/// Wall-clock nanoseconds since the epoch: only for what another host
/// compares with its own (a proof's age), never for a deadline.
inline uint64_t wallNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

/// Milliseconds as the API takes them, in the clock's unit.
constexpr uint64_t msToNs(uint64_t Ms) { return Ms * 1'000'000; }

} // namespace twochains::rt

#endif
