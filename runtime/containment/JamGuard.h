//===- JamGuard.h - Containing jams that fault or run too long ------------===//
//
// While a jam runs, the thread running it holds a recovery point. A fault
// (SIGSEGV, SIGBUS, SIGILL, SIGFPE; stack overflows too, on an alternate
// signal stack) or the watchdog's interrupt (the time limit) jumps back to
// it: the frame is abandoned and the receiver goes on. Signals outside a
// jam keep their normal behaviour: they go to the handler installed before
// the context's (the application's), or, if there was none, the default
// action. docs/containment.md has the contract and what it cannot promise.
//
// Per frame this costs a recovery point (a few stores) and a few more
// stores: no system call.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_JAMGUARD_H
#define TWOCHAINS_RUNTIME_JAMGUARD_H

#include <atomic>
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <pthread.h>
#include <string>

namespace twochains::rt {

/// Why a jam was abandoned.
enum class JamEnd : int { Returned = 0, Faulted = 1, TimedOut = 2 };

/// Where the thread resumes when its jam is abandoned. On x86_64 the
/// callee-saved registers, the stack pointer and the return address of the
/// function that set it, saved and restored by a few instructions of
/// JamGuardX86.cpp: a frame's recovery point is a tenth of its cost with
/// glibc's sigsetjmp, which also mangles every pointer and looks for a
/// shadow stack. No signal mask is saved or restored either way: the
/// handlers run with SA_NODEFER, so none is left blocked by jumping out.
/// Elsewhere, a sigjmp_buf.
#if defined(__x86_64__)
struct RecoveryPoint {
  uint64_t Registers[8];
};
extern "C" int twochainsSaveRecoveryPoint(RecoveryPoint *Point) __attribute__((returns_twice));
extern "C" [[noreturn]] void twochainsResumeAtRecoveryPoint(RecoveryPoint *Point, int Value);
/// 0 when set; the value resumeAtRecoveryPoint was given when resumed at.
/// A macro: it must run in the frame that resumes, like setjmp.
#define TWOCHAINS_SET_RECOVERY_POINT(Point) twochainsSaveRecoveryPoint(&(Point))
[[noreturn]] inline void resumeAtRecoveryPoint(RecoveryPoint &Point, int Value) {
  twochainsResumeAtRecoveryPoint(&Point, Value);
}
#else
struct RecoveryPoint {
  sigjmp_buf Buffer;
};
#define TWOCHAINS_SET_RECOVERY_POINT(Point) sigsetjmp((Point).Buffer, 0)
[[noreturn]] inline void resumeAtRecoveryPoint(RecoveryPoint &Point, int Value) {
  siglongjmp(Point.Buffer, Value);
}
#endif

/// What the thread running a jam publishes for the signal handler and the
/// watchdog. One per thread that runs frames.
struct JamRun {
  RecoveryPoint Recover;
  /// The code of the running jam, so a fault can be placed in it, and the
  /// watchdog interrupts only code that holds no library lock.
  uintptr_t CodeBegin = 0, CodeEnd = 0;
  /// Set while a jam runs; the watchdog compares Serial between its looks.
  std::atomic<bool> Active{false};
  std::atomic<uint64_t> Serial{0};
  /// When the watchdog first saw the frame of serial SeenSerial running
  /// (SeenNs written first): what an abandoned frame is charged from
  /// (AddressQuarantine.h), without a clock read on the frame path.
  std::atomic<uint64_t> SeenSerial{0}, SeenNs{0};
  /// The watchdog asks; the handler answers at a point inside the jam's
  /// code, or anywhere once Force is set.
  std::atomic<bool> Interrupt{false}, Force{false};
  // Filled by the handler before it jumps back.
  int Signal = 0;
  uintptr_t FaultPC = 0, FaultAddress = 0;
  pthread_t Thread;
};

/// Installs the handlers (once per process, chaining what was there) and
/// this thread's alternate signal stack (once per thread). False, with
/// Error set, if the system refuses.
bool prepareJamGuard(std::string &Error);
/// Whether this thread is prepared already: the frame path's check.
extern thread_local bool JamGuardReady __attribute__((tls_model("initial-exec")));

/// The calling thread's JamRun, made at its first use (makeJamRun).
/// (initial-exec: the handler must not be the first to touch this thread's
/// TLS, and it is read on every tc_progress.)
extern thread_local JamRun *CurrentJamRun __attribute__((tls_model("initial-exec")));
JamRun &makeJamRun();
inline JamRun &currentJamRun() {
  if (JamRun *R = CurrentJamRun)
    return *R;
  return makeJamRun();
}

/// The signal the watchdog interrupts a jam with.
int jamInterruptSignal();

/// The program counter in a signal's machine context (per ISA).
uintptr_t signalPC(const void *UContext);

/// "SIGSEGV" and the like.
const char *signalName(int Signal);

} // namespace twochains::rt

#endif
