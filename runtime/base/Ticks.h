//===- Ticks.h - A cheap counter of the CPU's time ------------------------===//
//
// For short gaps on a hot path, where the steady clock costs too much (a
// system call on some virtual machines): the CPU's own counter, read in a
// few cycles, and how many of its ticks make a microsecond (about: only
// for gaps that need no precision).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_BASE_TICKS_H
#define TWOCHAINS_RUNTIME_BASE_TICKS_H

#include "base/Clock.h"

#include <cstdint>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace twochains::rt {

inline uint64_t cpuTicks() {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  uint64_t Ticks;
  asm volatile("mrs %0, cntvct_el0" : "=r"(Ticks));
  return Ticks;
#else
  return nowNs();
#endif
}

/// Ticks in about a microsecond: the time-stamp counter runs at the
/// nominal clock (1-4 GHz; 2 GHz assumed); aarch64's generic timer says
/// its rate.
inline uint64_t ticksPerMicrosecond() {
#if defined(__x86_64__)
  return 2000;
#elif defined(__aarch64__)
  uint64_t Hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(Hz));
  return Hz / 1'000'000 ? Hz / 1'000'000 : 1;
#else
  return 1000;
#endif
}

} // namespace twochains::rt

#endif
