//===- ContainmentTest.cpp - Faults and overruns inside and outside jams ---===//
#include "containment/JamGuard.h"
#include "containment/Watchdog.h"
#include "twochains/twochains.h"

#include <gtest/gtest.h>
#include <atomic>
#include <csignal>
#include <unistd.h>

using namespace twochains::rt;

namespace {

/// Runs Fn as the executor runs a jam: inside the thread's recovery point.
template <typename Fn> JamEnd runGuarded(Fn F, uintptr_t Begin = 0, uintptr_t End = 0) {
  std::string Error;
  EXPECT_TRUE(prepareJamGuard(Error)) << Error;
  JamRun &R = currentJamRun();
  R.Interrupt = false;
  R.Force = false;
  R.CodeBegin = Begin;
  R.CodeEnd = End;
  R.Serial = R.Serial + 1;
  int How = TWOCHAINS_SET_RECOVERY_POINT(R.Recover);
  if (How == 0) {
    R.Active = true;
    F();
    R.Active = false;
    return JamEnd::Returned;
  }
  return JamEnd(How);
}

volatile int *volatile BadPointer = reinterpret_cast<int *>(8);
volatile int Zero = 0;

__attribute__((noinline)) unsigned deep(volatile char *Up, unsigned N) {
  volatile char Frame[1024];
  Frame[0] = char(N);
  Frame[1023] = Up[0];
  return deep(Frame, N + 1) + Frame[N % 1024];
}

TEST(JamGuard, FaultsInsideAJamAreContained) {
  EXPECT_EQ(runGuarded([] { *BadPointer = 1; }), JamEnd::Faulted);
  EXPECT_EQ(currentJamRun().Signal, SIGSEGV);
  EXPECT_EQ(currentJamRun().FaultAddress, 8u);
  EXPECT_EQ(runGuarded([] { Zero = 7 / Zero; }), JamEnd::Faulted);
  EXPECT_EQ(currentJamRun().Signal, SIGFPE);
  EXPECT_EQ(runGuarded([] { __builtin_trap(); }), JamEnd::Faulted);
  EXPECT_EQ(currentJamRun().Signal, SIGILL);
  // And the thread goes on: the same fault again, then a normal run.
  EXPECT_EQ(runGuarded([] { *BadPointer = 1; }), JamEnd::Faulted);
  EXPECT_EQ(runGuarded([] {}), JamEnd::Returned);
}

TEST(JamGuard, StackOverflowRunsTheHandlerOnItsOwnStack) {
  volatile char Top = 0;
  EXPECT_EQ(runGuarded([&] { Zero = int(deep(&Top, 0)); }), JamEnd::Faulted);
  EXPECT_EQ(currentJamRun().Signal, SIGSEGV);
}

TEST(JamGuard, TheWatchdogStopsALoopInsideTheJamsCode) {
  Watchdog Dog(50);
  Dog.start();
  Dog.watch(&currentJamRun());
  std::atomic<uint64_t> Spins{0};
  // The whole address space counts as the jam's code here.
  EXPECT_EQ(runGuarded([&] { for (;;) Spins++; }, 0, UINTPTR_MAX), JamEnd::TimedOut);
  EXPECT_GT(Spins.load(), 0u);
  Dog.stop();
}

TEST(JamGuard, OutsideAJamAFaultKeepsItsDefaultAction) {
  EXPECT_EXIT(
      {
        std::string Error;
        prepareJamGuard(Error);
        *BadPointer = 1;
      },
      ::testing::KilledBySignal(SIGSEGV), "");
}

void exitWith42(int) { _exit(42); }

TEST(JamGuard, OutsideAJamTheApplicationsHandlerRuns) {
  EXPECT_EXIT(
      {
        struct sigaction A = {};
        A.sa_handler = exitWith42;
        sigaction(SIGSEGV, &A, nullptr);
        tc_context_t *Ctx = nullptr; // installs the runtime's handlers, chained
        tc_context_create(nullptr, &Ctx);
        *BadPointer = 1;
      },
      ::testing::ExitedWithCode(42), "");
}

} // namespace
