//===- JobClaimsTest.cpp - What a connection may claim to be in a job -----===//
//
// A connection of a job claims a rank in its HELLO, and the receiver's
// WELCOME claims the receiver's. Holding the job's key is not enough to
// be taken for a rank (issue 41, item 3): each rank publishes the public
// half of its rank key with its address, and a claim of rank r carries
// r's signature of the handshake's nonces. Before, a key holder claiming
// rank 2 that reached rank 1 first was taken for rank 2, and the real
// rank 2 was then locked out of rank 1.
//
// Claims of the receiver's own rank are also taken only from the
// receiver's own connects (issue 41, item 2): a connection from elsewhere
// that claimed rank 0 to rank 0 was taken as rank 0 itself, and five
// frames over it made every later tc_job_quiesce of the job time out.
//
// The contexts are made ranks of one job by hand (JobId, the ranks, their
// published keys and addresses), as tc_job_join would leave them, without
// a launcher.
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "context/Context.h"
#include "job/Context.h"

namespace {

using namespace twochains::rt;

constexpr uint64_t TestJob = 0x7e57'10b5'0000'0001ull;

using RankKey = std::array<uint8_t, RankKeySize>;

/// The public rank key a context publishes with its address.
RankKey publishedKey(tc_context_t *Api) { return partOf<JobContext>(Api)->RankKey.publicKey(); }

/// Ctx as rank Rank of a job whose ranks published Keys (what tc_job_join
/// sets from their blobs).
void makeRank(tc_context_t *Api, uint32_t Rank, const std::vector<RankKey> &Keys) {
  auto *Ctx = partOf<JobContext>(Api);
  std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
  Ctx->JobId = TestJob;
  Ctx->JobRank = Rank;
  Ctx->JobSize = uint32_t(Keys.size());
  Ctx->Joined = true;
  Ctx->RankKeys = Keys;
  Ctx->Ranks.resize(Keys.size());
  for (uint32_t R = 0; R < Keys.size(); ++R)
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
  std::vector<RankKey> Keys = {publishedKey(Receiver.Ctx), publishedKey(Sender.Ctx)};
  makeRank(Receiver.Ctx, 0, Keys);
  makeRank(Sender.Ctx, 0, Keys); // the impostor: same job, rank 0
  EXPECT_EQ(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_ERR_AUTH)
      << "a connection from elsewhere was taken as rank 0 itself";
  EXPECT_TRUE(logged("claims rank 0 and does not prove it")) << describe();

  // A rank that claims its own rank (as rank 1 would its: here the
  // sender, made rank 1) is taken.
  makeRank(Sender.Ctx, 1, Keys);
  EXPECT_EQ(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_OK) << describe();
}

/// The receiver's own connect to itself, claiming its rank, is taken: the
/// nonces of its handshake are its own connect's, and it holds the key.
TEST_F(TwoContexts, AProcessConnectingToItselfKeepsItsRank) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  makeRank(Receiver.Ctx, 0, {publishedKey(Receiver.Ctx), publishedKey(Sender.Ctx)});
  EXPECT_EQ(connectOnce(Receiver.Ctx, Port, ConnectTimeoutMs), TC_OK) << describe();
}

} // namespace
