//===- Watchdog.h - The time limit of running jams ------------------------===//
//
// A thread per context that looks, every quarter of the limit, at the jam
// the context is running: one still running with the same serial after the
// limit has passed is interrupted with jamInterruptSignal() (JamGuard.h).
// The running thread only bumps a serial per frame: the limit costs the
// frame path no clock read and no system call.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_WATCHDOG_H
#define TWOCHAINS_RUNTIME_WATCHDOG_H

#include "containment/JamGuard.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace twochains::rt {

class Watchdog {
public:
  /// LimitMs 0: no watchdog at all.
  explicit Watchdog(unsigned LimitMs) : LimitMs(LimitMs) {}
  ~Watchdog() { stop(); }
  void start();
  void stop();
  /// The thread that runs this context's frames now (or null).
  void watch(JamRun *Run) { Watched.store(Run, std::memory_order_release); }
  unsigned limitMs() const { return LimitMs; }

private:
  void loop();
  unsigned LimitMs;
  std::atomic<JamRun *> Watched{nullptr};
  std::thread Thread;
  std::mutex M;
  std::condition_variable Wake;
  bool Stopping = false;
};

} // namespace twochains::rt

#endif
