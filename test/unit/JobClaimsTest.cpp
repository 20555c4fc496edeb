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

/// A connection from another process claiming the receiver's own rank is
/// refused, saying why; the receiver's connect to itself is still taken.
TEST_F(TwoContexts, AClaimOfTheReceiversOwnRankIsRefused) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer_close(Peer);
  Peer = nullptr;
  makeRank(Receiver.Ctx, 0);
  makeRank(Sender.Ctx, 0); // the impostor: same job, rank 0
  tc_peer_t *Impostor = nullptr;
  tc_status_t St = tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Impostor);
  EXPECT_NE(St, TC_OK) << "a connection from elsewhere was taken as rank 0 itself";
  if (St == TC_OK)
    tc_peer_close(Impostor);
  EXPECT_TRUE(logged("claims this process's own rank 0")) << describe();

  // A rank that claims its own rank (as rank 1 would its: here the
  // sender, made rank 1) is taken.
  makeRank(Sender.Ctx, 1);
  tc_peer_t *Rank1 = nullptr;
  EXPECT_EQ(tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Rank1), TC_OK)
      << describe();
  if (Rank1)
    tc_peer_close(Rank1);
}

/// The receiver's own connect to itself, claiming its rank, is taken: the
/// nonces of its handshake are its own connect's.
TEST_F(TwoContexts, AProcessConnectingToItselfKeepsItsRank) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  makeRank(Receiver.Ctx, 0);
  tc_peer_t *Self = nullptr;
  EXPECT_EQ(tc_connect(Receiver.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Self), TC_OK)
      << describe();
  if (Self)
    tc_peer_close(Self);
}

} // namespace
