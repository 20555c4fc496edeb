//===- Context.h - A whole context: every part, and the executor ----------===//
//
// tc_context_t is this struct: the part of every layer (core/Context.h
// lists them), and what only the top needs: the executor thread, how it
// waits, and the counters of tc_progress's turns.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTEXT_CONTEXT_H
#define TWOCHAINS_RUNTIME_CONTEXT_CONTEXT_H

#include "base/Wait.h"
#include "calls/CallsContext.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

struct tc_context : twochains::rt::CoreContext {
  tc_context() {
    Image = &ImagePart;
    Control = &ControlPart;
    Containment = &ContainmentPart;
    Package = &PackagePart;
    Code = &CodePart;
    Path = &PathPart;
    Receive = &ReceivePart;
    Wireup = &WireupPart;
    Job = &JobPart;
    Calls = &CallsPart;
  }
  tc_context(const tc_context &) = delete;
  tc_context &operator=(const tc_context &) = delete;

  // Made in this order, and ended in the reverse: a part may use those
  // made before it while it ends.
  twochains::rt::ImageContext ImagePart;
  twochains::rt::ControlContext ControlPart;
  twochains::rt::ContainmentContext ContainmentPart;
  twochains::rt::PackageContext PackagePart;
  twochains::rt::CodeContext CodePart;
  twochains::rt::PathContext PathPart;
  twochains::rt::ReceiveContext ReceivePart;
  twochains::rt::WireupContext WireupPart;
  twochains::rt::JobContext JobPart;
  twochains::rt::CallsContext CallsPart;

  std::thread Executor;
  std::atomic<bool> StopExecutor{false};
  tc_wait_mode_t WaitMode = TC_WAIT_AUTO;
  std::unique_ptr<twochains::rt::Waiter> Wait;
  unsigned ControlPolls = 0;  // tc_progress calls since reports were looked for
  unsigned ClockPolls = 0;    // tc_progress calls since the clock was read
  uint64_t ControlTurnNs = 0; // when the control worker last progressed
  unsigned RanSinceClock = 0; // frames run since the clock was read
};

namespace twochains::rt {
/// The API hands out tc_context pointers, which layers below, where the
/// whole is not defined, read as its core (coreOf): true when the core
/// lies at the start of the whole (its one base: checked at creation).
inline bool coreAtStart(tc_context *Ctx) {
  return static_cast<void *>(static_cast<CoreContext *>(Ctx)) == static_cast<void *>(Ctx);
}

/// tc_progress's work (context/Progress.cpp): one turn of the context.
tc_status_t progressContext(tc_context *Ctx, unsigned *Executed);
/// Lets the layers below progress the context (CoreContext::Progress).
void setupProgress(tc_context *Ctx);
/// Makes quiet peers' rings cold (core/Polled.h says when), and sweeps
/// the cold ones (Polling.cpp).
void setupPolling(tc_context *Ctx);
/// tc_executor_stop's work.
void stopExecutor(tc_context *Ctx);
} // namespace twochains::rt

#endif
