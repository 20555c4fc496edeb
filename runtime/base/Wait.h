//===- Wait.h - Waiting for a frame between empty polls -------------------===//
//
// Each ISA's waits live in their own file (WaitX86.cpp, WaitAArch64.cpp);
// WaitGeneric.cpp serves other hosts. The executor asks for a Waiter once
// and calls wait() with the word a frame's arrival will change.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_WAIT_H
#define TWOCHAINS_RUNTIME_WAIT_H

#include "twochains/twochains.h"
#include <memory>

namespace twochains::rt {

class Waiter {
public:
  virtual ~Waiter() = default;
  virtual const char *name() const = 0;
  /// Returns when *Watched may have changed, or after a short while.
  virtual void wait(const volatile void *Watched) = 0;
};

/// The waiter for Mode on this CPU, or null if the CPU cannot do it.
std::unique_ptr<Waiter> createWaiter(tc_wait_mode_t Mode);

} // namespace twochains::rt

#endif
