//===- Spin.h - Waiting between polls, and giving up on a silent peer ------===//
#ifndef TC_PERF_SPIN_H
#define TC_PERF_SPIN_H

#include "Clock.h"
#include "Control.h"
#include "Options.h"

#include <cstdint>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tcperf {

// Between empty polls of the server's own loop: nothing (poll) or the
// spin-wait hint, 16 times as the runtime's TC_WAIT_PAUSE does. The own
// loop has no low-power wait, so auto is pause here (as the runtime's
// TC_WAIT_AUTO is on a CPU without WAITPKG or MONITORX, like this one).
inline void relax(WaitKind K) {
  if (K == WaitKind::Poll)
    return;
  for (int I = 0; I < 16; ++I) {
#if defined(__x86_64__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
}

// Says when waiting has gone on too long without anything arriving (the
// other side hung), or the other side's bootstrap socket has something to
// say (it failed, or exited and closed it). alive() is a plain store; the
// clock and the socket are looked at only every 64Ki calls of expired(), to
// stay off the hot path.
class Watchdog {
public:
  Watchdog(unsigned Seconds, const Control &Ctl)
      : Ctl(Ctl), Limit(uint64_t(Seconds) * 1000000000u),
        Deadline(Clock::monotonicNs() + Limit) {}
  void alive() { Alive = true; }
  bool expired() {
    if (++Calls & 0xffff)
      return false;
    uint64_t Now = Clock::monotonicNs();
    if (Alive) {
      Alive = false;
      Deadline = Now + Limit;
    }
    return Now > Deadline || Ctl.readable();
  }

private:
  const Control &Ctl;
  uint64_t Limit, Deadline;
  uint64_t Calls = 0;
  bool Alive = false;
};

} // namespace tcperf

#endif
