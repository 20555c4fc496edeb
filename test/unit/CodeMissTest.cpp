//===- CodeMissTest.cpp - The code cache's miss and resend decisions ------===//
#include "wire/CodeMiss.h"

#include <gtest/gtest.h>

using namespace twochains::rt;

namespace {

TEST(MissReports, ANewReportOfAFrameInFlightIsTaken) {
  MissReports M;
  uint64_t Seq = 0;
  // Frames 100..115 are in flight in a 16-slot ring (next is 116).
  ASSERT_TRUE(M.take(/*Word=*/105 + 1, /*Next=*/116, /*Slots=*/16, Seq));
  EXPECT_EQ(Seq, 105u);
  // The oldest frame still in flight, and the newest.
  MissReports Oldest, Newest;
  EXPECT_TRUE(Oldest.take(100 + 1, 116, 16, Seq));
  EXPECT_EQ(Seq, 100u);
  EXPECT_TRUE(Newest.take(115 + 1, 116, 16, Seq));
  EXPECT_EQ(Seq, 115u);
}

TEST(MissReports, TheSameReportIsTakenOnce) {
  MissReports M;
  uint64_t Seq = 0;
  ASSERT_TRUE(M.take(106, 116, 16, Seq));
  Seq = 0;
  EXPECT_FALSE(M.take(106, 116, 16, Seq)); // read again: nothing new
  EXPECT_EQ(Seq, 0u);
  EXPECT_TRUE(M.take(108, 116, 16, Seq)); // a new one
  EXPECT_EQ(Seq, 107u);
}

TEST(MissReports, StaleOrImpossibleReportsChangeNothing) {
  uint64_t Seq = 77;
  MissReports None, Unsent, TooOld, Wrapped;
  EXPECT_FALSE(None.take(0, 116, 16, Seq));        // no report
  EXPECT_FALSE(Unsent.take(116 + 1, 116, 16, Seq)); // a frame not sent yet
  EXPECT_FALSE(TooOld.take(99 + 1, 116, 16, Seq));  // credited long ago: its slot is reused
  EXPECT_FALSE(Wrapped.take(~0ull, 116, 16, Seq));  // a peer writing anything
  EXPECT_EQ(Seq, 77u);
}

TEST(MissWait, OnlyTheFrameAskedForIsWaitedFor) {
  MissWait W;
  EXPECT_FALSE(W.awaiting(0));
  EXPECT_EQ(W.step(0, false, 1000), MissWait::Step::Run); // nothing was asked for
  W.reported(41, 1000);
  EXPECT_TRUE(W.awaiting(41));
  EXPECT_FALSE(W.awaiting(42));
  EXPECT_EQ(W.step(42, false, 1000), MissWait::Step::Run);
}

TEST(MissWait, WaitsForTheResendThenGivesUp) {
  MissWait W;
  W.reported(41, 1000);
  // Until the injected frame has landed whole, the slot is waited on...
  EXPECT_EQ(W.step(41, false, 1000), MissWait::Step::Wait);
  EXPECT_EQ(W.step(41, false, 1000 + ResendDeadlineNs), MissWait::Step::Wait);
  // ...and once it has, it runs.
  EXPECT_EQ(W.step(41, true, 1000 + 1), MissWait::Step::Run);
  // A sender that never sends it stalls its ring only until the deadline.
  EXPECT_EQ(W.step(41, false, 1000 + ResendDeadlineNs + 1), MissWait::Step::GiveUp);
  // A resend that lands late is still taken.
  EXPECT_EQ(W.step(41, true, 1000 + 2 * ResendDeadlineNs), MissWait::Step::Run);
}

} // namespace
