//===- WaitAArch64.cpp - YIELD, WFE ---------------------------------------===//
#include "base/Wait.h"

#include <cstdint>

namespace twochains::rt {
namespace {

class Poll final : public Waiter {
  const char *name() const override { return "poll"; }
  void wait(const volatile void *) override {}
};

class Yield final : public Waiter {
  const char *name() const override { return "yield"; }
  void wait(const volatile void *) override { asm volatile("yield" ::: "memory"); }
};

class Wfe final : public Waiter {
  const char *name() const override { return "wfe"; }
  void wait(const volatile void *W) override {
    // An exclusive load arms the monitor on the word's granule; a write to
    // it (the frame landing) clears the monitor and sends the event WFE
    // waits for. The generic timer's event stream bounds the sleep.
    uint64_t V;
    asm volatile("ldaxr %0, [%1]\n\twfe" : "=&r"(V) : "r"(W) : "memory");
    (void)V;
  }
};

} // namespace

std::unique_ptr<Waiter> createWaiter(tc_wait_mode_t Mode) {
  switch (Mode) {
  case TC_WAIT_POLL:
    return std::make_unique<Poll>();
  case TC_WAIT_PAUSE:
    return std::make_unique<Yield>();
  case TC_WAIT_LOWPOWER:
  case TC_WAIT_AUTO:
    return std::make_unique<Wfe>();
  }
  return nullptr;
}

} // namespace twochains::rt
