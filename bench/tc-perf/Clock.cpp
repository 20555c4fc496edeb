//===- Clock.cpp - Cheap timestamps for per-iteration timing ---------------===//
#include "Clock.h"

#include <fstream>
#include <string>

namespace tcperf {

bool Clock::UseTsc = false;
double Clock::NsPerTick = 1.0;

// The TSC is a usable clock only if it ticks at one rate whatever the
// core's frequency and power state; Linux says so in the flags.
static bool invariantTsc() {
  std::ifstream In("/proc/cpuinfo");
  std::string Line;
  while (std::getline(In, Line))
    if (Line.rfind("flags", 0) == 0)
      return Line.find(" constant_tsc") != std::string::npos &&
             Line.find(" nonstop_tsc") != std::string::npos;
  return false;
}

void Clock::init() {
#if defined(__x86_64__)
  if (!invariantTsc())
    return;
  uint64_t N0 = monotonicNs(), T0 = __rdtsc();
  while (monotonicNs() - N0 < 50000000)
    ;
  uint64_t N1 = monotonicNs(), T1 = __rdtsc();
  NsPerTick = double(N1 - N0) / double(T1 - T0);
  UseTsc = true;
#endif
}

} // namespace tcperf
