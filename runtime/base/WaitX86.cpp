//===- WaitX86.cpp - PAUSE, UMWAIT (WAITPKG), MWAITX (AMD) ----------------===//
#include "base/Wait.h"

#include <cpuid.h>
#include <immintrin.h>
#include <x86intrin.h>

namespace twochains::rt {
namespace {

bool hasWaitpkg() { // CPUID.(EAX=7,ECX=0):ECX[5]
  unsigned A, B, C, D;
  return __get_cpuid_count(7, 0, &A, &B, &C, &D) && (C & (1u << 5));
}

bool hasMonitorx() { // CPUID.80000001H:ECX[29]
  unsigned A, B, C, D;
  return __get_cpuid(0x80000001, &A, &B, &C, &D) && (C & (1u << 29));
}

class Poll final : public Waiter {
  const char *name() const override { return "poll"; }
  void wait(const volatile void *) override {}
};

class Pause final : public Waiter {
  const char *name() const override { return "pause"; }
  void wait(const volatile void *) override {
    for (int I = 0; I < 16; ++I)
      _mm_pause();
  }
};

class Umwait final : public Waiter {
  const char *name() const override { return "umwait"; }
  __attribute__((target("waitpkg"))) void wait(const volatile void *W) override {
    _umonitor(const_cast<void *>(W));
    // C0.2 (control 0), woken by a write to the monitored line or after
    // about 10 us of TSC time, so other rings are polled too.
    _umwait(0, __rdtsc() + 20000);
  }
};

class Mwaitx final : public Waiter {
  const char *name() const override { return "mwaitx"; }
  __attribute__((target("mwaitx"))) void wait(const volatile void *W) override {
    _mm_monitorx(const_cast<void *>(W), 0, 0);
    _mm_mwaitx(2 /* timer enabled */, 0, 20000 /* TSC ticks */);
  }
};

} // namespace

std::unique_ptr<Waiter> createWaiter(tc_wait_mode_t Mode) {
  switch (Mode) {
  case TC_WAIT_POLL:
    return std::make_unique<Poll>();
  case TC_WAIT_PAUSE:
    return std::make_unique<Pause>();
  case TC_WAIT_LOWPOWER:
  case TC_WAIT_AUTO:
    if (hasWaitpkg())
      return std::make_unique<Umwait>();
    if (hasMonitorx())
      return std::make_unique<Mwaitx>();
    if (Mode == TC_WAIT_AUTO)
      return std::make_unique<Pause>();
    return nullptr;
  }
  return nullptr;
}

} // namespace twochains::rt
