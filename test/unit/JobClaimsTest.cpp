//===- JobClaimsTest.cpp - What a connection may claim to be in a job -----===//
//
// A peer that holds the job's key may claim any rank in its HELLO. Claims
// of the receiver's own rank are taken only from the receiver's own
// connects (issue 41, item 2): a connection from elsewhere that claimed
// rank 0 to rank 0 was taken as rank 0 itself, and five frames over it
// made every later tc_job_quiesce of the job time out.
//
// Both contexts are made members of one job of two by hand (JobId, the
// ranks), as tc_job_join would leave them, without a launcher.
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "context/Context.h"
#include "job/Context.h"

namespace {

using namespace twochains::rt;

constexpr uint64_t TestJob = 0x7e57'10b5'0000'0001ull;

/// Ctx as rank Rank of a job of two (what tc_job_join sets).
void makeRank(tc_context_t *Api, uint32_t Rank) {
  auto *Ctx = partOf<JobContext>(Api);
  std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
  Ctx->JobId = TestJob;
  Ctx->JobRank = Rank;
  Ctx->JobSize = 2;
  Ctx->Joined = true;
  Ctx->Ranks.resize(2);
  for (uint32_t R = 0; R < 2; ++R)
    Ctx->Ranks[R].Rank = R;
}

/// Connects From to the receiver's port, closes what it got; the status.
tc_status_t connectOnce(tc_context_t *From, uint16_t Port, int TimeoutMs) {
  tc_peer_t *P = nullptr;
  tc_status_t St = tc_connect(From, "127.0.0.1", Port, TimeoutMs, &P);
  if (P)
    tc_peer_close(P);
  return St;
}

/// A connection from another process claiming the receiver's own rank is
/// refused, saying why; the receiver's connect to itself is still taken.
TEST_F(TwoContexts, AClaimOfTheReceiversOwnRankIsRefused) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer_close(Peer);
  Peer = nullptr;
  makeRank(Receiver.Ctx, 0);
  makeRank(Sender.Ctx, 0); // the impostor: same job, rank 0
  EXPECT_NE(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_OK)
      << "a connection from elsewhere was taken as rank 0 itself";
  EXPECT_TRUE(logged("claims this process's own rank 0")) << describe();

  // A rank that claims its own rank (as rank 1 would its: here the
  // sender, made rank 1) is taken.
  makeRank(Sender.Ctx, 1);
  EXPECT_EQ(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_OK) << describe();
}

/// The receiver's own connect to itself, claiming its rank, is taken: the
/// nonces of its handshake are its own connect's.
TEST_F(TwoContexts, AProcessConnectingToItselfKeepsItsRank) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  makeRank(Receiver.Ctx, 0);
  EXPECT_EQ(connectOnce(Receiver.Ctx, Port, ConnectTimeoutMs), TC_OK) << describe();
}

} // namespace
