//===- Watchdog.cpp -------------------------------------------------------===//
#include "containment/Watchdog.h"

#include "base/Clock.h"

#include <chrono>
#include <csignal>

namespace twochains::rt {

void Watchdog::start() {
  if (!LimitMs || Thread.joinable())
    return;
  Thread = std::thread([this] { loop(); });
}

void Watchdog::stop() {
  if (!Thread.joinable())
    return;
  {
    std::lock_guard<std::mutex> G(M);
    Stopping = true;
  }
  Wake.notify_all();
  Thread.join();
}

void Watchdog::loop() {
  // Looks four times a limit; a jam is interrupted after 4 to 5 looks at
  // the same serial, so between the limit and 1.25 times it.
  const auto Period = std::chrono::microseconds(uint64_t(LimitMs) * 250);
  constexpr unsigned LooksPerLimit = 4;
  // Interrupted only at its own code, a jam inside a library call is
  // given this many limits to come back before it is stopped wherever it is.
  constexpr unsigned ForceAfterLimits = 10;
  uint64_t Serial = 0;
  unsigned Looks = 0;
  std::unique_lock<std::mutex> L(M);
  while (!Stopping) {
    Wake.wait_for(L, Period);
    if (Stopping)
      break;
    JamRun *R = Watched.load(std::memory_order_acquire);
    if (!R || !R->Active.load(std::memory_order_acquire)) {
      Looks = 0;
      continue;
    }
    uint64_t Now = R->Serial.load(std::memory_order_acquire);
    if (Now != Serial) {
      Serial = Now;
      Looks = 0;
      R->SeenNs.store(nowNs(), std::memory_order_relaxed);
      R->SeenSerial.store(Now, std::memory_order_release);
      continue;
    }
    if (++Looks < LooksPerLimit)
      continue;
    R->Interrupt.store(true, std::memory_order_release);
    if (Looks >= LooksPerLimit * ForceAfterLimits)
      R->Force.store(true, std::memory_order_release);
    if (R->Serial.load(std::memory_order_acquire) == Serial)
      pthread_kill(R->Thread, jamInterruptSignal());
  }
}

} // namespace twochains::rt
