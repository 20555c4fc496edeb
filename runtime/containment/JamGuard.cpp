//===- JamGuard.cpp -------------------------------------------------------===//
#include "containment/JamGuard.h"

#include "containment/PeerMappings.h"

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

namespace twochains::rt {

namespace {

/// SIGTRAP: int3, which pads sandboxed x86-64 code (docs/sandbox.md).
constexpr int FaultSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP};

struct sigaction Previous[NSIG];

/// initial-exec: the handler must not be the first to touch this thread's
/// TLS (the general-dynamic model may allocate then).
__attribute__((tls_model("initial-exec"))) thread_local bool StackReady = false;

bool insideJam(const JamRun &R, uintptr_t PC) { return PC >= R.CodeBegin && PC < R.CodeEnd; }

/// Hands a signal on as if the context had never installed a handler.
void chain(int Signal, siginfo_t *Info, void *UContext) {
  const struct sigaction &P = Previous[Signal];
  if (P.sa_flags & SA_SIGINFO) {
    if (P.sa_sigaction)
      return P.sa_sigaction(Signal, Info, UContext);
  } else if (P.sa_handler == SIG_IGN) {
    // An ignored fault would return to the faulting instruction for ever.
    if (Signal == jamInterruptSignal())
      return;
  } else if (P.sa_handler != SIG_DFL && P.sa_handler) {
    return P.sa_handler(Signal);
  }
  // Default action: restore it and let the signal happen again on return.
  signal(Signal, SIG_DFL);
  if (Signal == jamInterruptSignal())
    raise(Signal);
}

void onSignal(int Signal, siginfo_t *Info, void *UContext) {
  // A peer shrank its segment under one of this side's accesses (inside a
  // jam's call too): the access goes on into private pages.
  if (Signal == SIGBUS && Info &&
      replaceBrokenPeerMapping(reinterpret_cast<uintptr_t>(Info->si_addr)))
    return;
  JamRun *R = CurrentJamRun;
  if (!R || !R->Active.load(std::memory_order_relaxed))
    return chain(Signal, Info, UContext);
  uintptr_t PC = signalPC(UContext);
  if (Signal == jamInterruptSignal()) {
    if (!R->Interrupt.load(std::memory_order_relaxed))
      return; // stale: the jam it was meant for has ended
    // Inside a library call (malloc, a lock held) the jam is left to get
    // back to its own code; the watchdog forces it after a while.
    if (!insideJam(*R, PC) && !R->Force.load(std::memory_order_relaxed))
      return;
  }
  R->Active.store(false, std::memory_order_relaxed);
  R->Signal = Signal;
  R->FaultPC = PC;
  R->FaultAddress = reinterpret_cast<uintptr_t>(Info ? Info->si_addr : nullptr);
  // SA_NODEFER: no signal is left blocked by jumping out of the handler,
  // so the recovery point needs no saved mask (and no system call).
  resumeAtRecoveryPoint(R->Recover, Signal == jamInterruptSignal() ? int(JamEnd::TimedOut)
                                                                   : int(JamEnd::Faulted));
}

std::once_flag Installed;
bool InstallFailed = false;

void install() {
  struct sigaction A = {};
  A.sa_sigaction = onSignal;
  A.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER | SA_RESTART;
  sigemptyset(&A.sa_mask);
  for (int S : FaultSignals)
    InstallFailed |= sigaction(S, &A, &Previous[S]) != 0;
  InstallFailed |= sigaction(jamInterruptSignal(), &A, &Previous[jamInterruptSignal()]) != 0;
}

} // namespace

__attribute__((tls_model("initial-exec"))) thread_local JamRun *CurrentJamRun = nullptr;

thread_local bool JamGuardReady __attribute__((tls_model("initial-exec"))) = false;

int jamInterruptSignal() { return SIGRTMIN + 5; }

JamRun &makeJamRun() {
  if (!CurrentJamRun) {
    CurrentJamRun = new JamRun; // one per thread, for the life of the thread
    CurrentJamRun->Thread = pthread_self();
  }
  return *CurrentJamRun;
}

bool prepareJamGuard(std::string &Error) {
  std::call_once(Installed, install);
  if (InstallFailed) {
    Error = "cannot install the jam fault handlers";
    return false;
  }
  currentJamRun();
  if (StackReady)
    return JamGuardReady = true;
  // A jam that overflows its stack faults on the guard page: the handler
  // needs a stack of its own. An alternate stack the thread already has
  // (the application's) is kept.
  stack_t Old;
  if (sigaltstack(nullptr, &Old) == 0 && !(Old.ss_flags & SS_DISABLE)) {
    StackReady = true;
    return JamGuardReady = true;
  }
  size_t Size = 64 * 1024;
  void *Stack = mmap(nullptr, Size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  stack_t New = {};
  New.ss_sp = Stack;
  New.ss_size = Size;
  if (Stack == MAP_FAILED || sigaltstack(&New, nullptr) != 0) {
    Error = "cannot give this thread an alternate signal stack";
    return false;
  }
  StackReady = true;
  return JamGuardReady = true;
}

const char *signalName(int Signal) {
  switch (Signal) {
  case SIGSEGV: return "SIGSEGV";
  case SIGBUS: return "SIGBUS";
  case SIGILL: return "SIGILL";
  case SIGFPE: return "SIGFPE";
  case SIGTRAP: return "SIGTRAP";
  case SIGSYS: return "SIGSYS"; // a sandboxed jam's service call, refused
  default: return Signal == jamInterruptSignal() ? "the time limit" : "a signal";
  }
}

} // namespace twochains::rt
