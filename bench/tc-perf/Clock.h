//===- Clock.h - Cheap timestamps for per-iteration timing -----------------===//
//
// A round trip here is a few hundred nanoseconds, so the clock must cost
// far less than that: on x86_64 with an invariant TSC (constant_tsc and
// nonstop_tsc) it is RDTSC, calibrated against CLOCK_MONOTONIC at start;
// elsewhere CLOCK_MONOTONIC itself (a vDSO call, about 20 ns).
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_CLOCK_H
#define TC_PERF_CLOCK_H

#include <cstdint>
#include <ctime>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace tcperf {

class Clock {
public:
  // Decides the source and, for the TSC, measures its rate (about 50 ms).
  static void init();
  static uint64_t ticks() {
#if defined(__x86_64__)
    if (UseTsc) {
      _mm_lfence(); // no earlier instruction finishes after the read
      return __rdtsc();
    }
#endif
    return monotonicNs();
  }
  static double toNs(uint64_t Ticks) { return double(Ticks) * NsPerTick; }
  static uint64_t monotonicNs() {
    timespec T;
    clock_gettime(CLOCK_MONOTONIC, &T);
    return uint64_t(T.tv_sec) * 1000000000u + uint64_t(T.tv_nsec);
  }
  static const char *source() { return UseTsc ? "rdtsc" : "clock_gettime"; }

private:
  static bool UseTsc;
  static double NsPerTick;
};

} // namespace tcperf

#endif
