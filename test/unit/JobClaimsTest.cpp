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
#include "JobRanks.h"
#include "RawMessage.h"
#include "TwoContexts.h"

#include "context/Context.h"
#include "job/JobContext.h"
#include "receive/Quarantine.h"

#include <arpa/inet.h>
#include <initializer_list>

namespace {

using namespace twochains::rt;
using namespace twochains::rt::test;

/// A job of three contexts, not yet connected and not yet ranks: the
/// sender, the receiver (its executor answering) and a third, Rank2; Keys
/// what the three publish, in that order. Call under
/// ASSERT_NO_FATAL_FAILURE.
void startThreeContexts(TwoContexts &T, TwoContexts::Side *&Rank2, std::vector<RankKey> &Keys) {
  T.Drive = TwoContexts::Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(T.startUnconnected());
  ASSERT_NO_FATAL_FAILURE(Rank2 = T.createExtraSide("rank 2"));
  ASSERT_NE(Rank2, nullptr);
  Keys = keysOf({T.Sender.Ctx, T.Receiver.Ctx, Rank2->Ctx});
}

/// The three as a job: the receiver rank 1, listening; the third the real
/// rank 2; the sender an impostor, holding the job's key, that claims
/// rank 2. Call under ASSERT_NO_FATAL_FAILURE.
void startWithAnImpostor(TwoContexts &T, TwoContexts::Side *&Rank2) {
  std::vector<RankKey> Keys;
  ASSERT_NO_FATAL_FAILURE(startThreeContexts(T, Rank2, Keys));
  std::vector<uint16_t> Ports = {0, T.Port, 0};
  makeRank(T.Receiver.Ctx, 1, Keys, Ports);
  makeRank(T.Sender.Ctx, 2, Keys, Ports);
  makeRank(Rank2->Ctx, 2, Keys, Ports);
}

/// Connects From to the receiver's port, closes what it got; the status.
tc_status_t connectOnce(tc_context_t *From, uint16_t Port, int TimeoutMs) {
  tc_peer_t *P = nullptr;
  tc_status_t St = tc_connect(From, "127.0.0.1", Port, TimeoutMs, &P);
  if (P)
    tc_peer_close(P);
  return St;
}

/// Whether the receiver holds a welcomed connection taken for Rank.
bool holdsRank(tc_context_t *Api, uint32_t Rank) {
  auto *Ctx = coreOf(Api);
  std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
  for (auto &P : Ctx->Accepted)
    if (P->Welcomed && !P->Failed && P->JobRank == Rank)
      return true;
  return false;
}

/// A connection from another process claiming the receiver's own rank is
/// refused, saying why; the receiver's connect to itself is still taken.
TEST_F(TwoContexts, AClaimOfTheReceiversOwnRankIsRefused) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(startUnconnected());
  std::vector<RankKey> Keys = keysOf({Receiver.Ctx, Sender.Ctx});
  makeRank(Receiver.Ctx, 0, Keys);
  makeRank(Sender.Ctx, 0, Keys); // the impostor: same job, rank 0
  EXPECT_EQ(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_ERR_AUTH)
      << "a connection from elsewhere was taken as rank 0 itself";
  EXPECT_TRUE(logged("claims rank 0 and does not prove it")) << describe();

  // Even a claim that proves rank 0 (the receiver is told that rank 0's
  // key is the sender's) is refused: it is not the receiver's own connect.
  std::vector<RankKey> Lied = keysOf({Sender.Ctx, Sender.Ctx});
  makeRank(Receiver.Ctx, 0, Lied);
  EXPECT_NE(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_OK);
  EXPECT_TRUE(logged("claims this process's own rank 0")) << describe();

  // A rank that claims its own rank (as rank 1 would its: here the
  // sender, made rank 1) is taken.
  makeRank(Receiver.Ctx, 0, Keys);
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

/// A job of three: the receiver is rank 1, a third context the real rank
/// 2, and the sender holds the job's key (all share it) but not rank 2's
/// private key. Its claim of rank 2 is refused.
TEST_F(TwoContexts, AClaimOfAnotherRankWithoutItsKeyIsRefused) {
  Side *Rank2 = nullptr;
  std::vector<RankKey> Keys;
  ASSERT_NO_FATAL_FAILURE(startThreeContexts(*this, Rank2, Keys));
  makeRank(Receiver.Ctx, 1, Keys);
  makeRank(Sender.Ctx, 2, Keys); // the impostor
  uint64_t Failures = stats(Receiver).auth_failures;
  EXPECT_EQ(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_ERR_AUTH)
      << "a key holder was taken for rank 2";
  EXPECT_TRUE(logged("claims rank 2 and does not prove it")) << describe();
  EXPECT_GT(stats(Receiver).auth_failures, Failures);
  EXPECT_FALSE(holdsRank(Receiver.Ctx, 2));
}

/// The same impostor connecting as the job connects, to the rank it
/// names: its proof is a MAC under the key rank 2 and rank 1 agree, which
/// it cannot make. Refused; the real rank 2's proof (the next test) is
/// taken.
TEST_F(TwoContexts, AJobConnectClaimingAnotherRankIsRefused) {
  Side *Rank2 = nullptr;
  ASSERT_NO_FATAL_FAILURE(startWithAnImpostor(*this, Rank2));
  uint64_t Failures = stats(Receiver).auth_failures;
  tc_peer_t *Handle = nullptr;
  ASSERT_EQ(tc_job_peer(Sender.Ctx, 1, &Handle), TC_OK);
  EXPECT_NE(tc_flush(Handle, WaitMs), TC_OK) << "a key holder was taken for rank 2";
  EXPECT_TRUE(logged("claims rank 2 and does not prove it")) << describe();
  EXPECT_GT(stats(Receiver).auth_failures, Failures);
  EXPECT_FALSE(holdsRank(Receiver.Ctx, 2));
}

/// The impostor reaches rank 1 first and keeps its connection; the real
/// rank 2's connection to rank 1 (its handle, in the background) is still
/// made and taken as rank 2's. Before, rank 1 refused it as crossed while
/// the impostor's stayed, and its frames and calls timed out.
TEST_F(TwoContexts, TheRealRankIsTakenAfterAnImpostorsClaim) {
  Side *Rank2 = nullptr;
  ASSERT_NO_FATAL_FAILURE(startWithAnImpostor(*this, Rank2));

  tc_peer_t *Impostor = nullptr;
  tc_status_t St = tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Impostor);
  EXPECT_NE(St, TC_OK) << "a key holder was taken for rank 2";
  // Kept open, if it was taken, while the real rank connects.
  tc_peer_t *Handle = nullptr;
  ASSERT_EQ(tc_job_peer(Rank2->Ctx, 1, &Handle), TC_OK);
  EXPECT_EQ(tc_flush(Handle, WaitMs), TC_OK)
      << "the real rank 2 did not reach rank 1\n" << describe();
  auto *Ctx1 = coreOf(Receiver.Ctx);
  EXPECT_TRUE(progressUntil(
      [&] {
        std::lock_guard<std::recursive_mutex> G(Ctx1->Lock);
        RouteTarget &T = Ctx1->Job->Ranks[2];
        return T.Handle && T.Handle->Bound && !T.Handle->Bound->Failed &&
               T.Handle->Bound->JobRank == 2;
      },
      "rank 1 bound its handle of rank 2 to the real rank's connection"));
  if (Impostor)
    tc_peer_close(Impostor);
}

/// The real rank 2, which proves its rank, is taken as rank 2; it checks
/// in turn that the receiver proves rank 1.
TEST_F(TwoContexts, AProvedClaimIsTaken) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(startUnconnected());
  std::vector<RankKey> Keys = keysOf({Receiver.Ctx, Sender.Ctx});
  makeRank(Receiver.Ctx, 0, Keys);
  makeRank(Sender.Ctx, 1, Keys);
  tc_peer_t *P = nullptr;
  ASSERT_EQ(tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &P), TC_OK)
      << describe();
  EXPECT_TRUE(progressUntil([&] { return holdsRank(Receiver.Ctx, 1); },
                            "the receiver took the connection as rank 1's"));
  tc_peer_close(P);
}

/// A receiver that claims a rank it cannot prove (the sender was told
/// another key for rank 0) is refused by the sender: a WELCOME proves the
/// receiver's rank as a HELLO proves the sender's.
TEST_F(TwoContexts, AWelcomeThatDoesNotProveItsRankIsRefused) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(startUnconnected());
  Side *Other = nullptr;
  ASSERT_NO_FATAL_FAILURE(Other = createExtraSide("the real rank 0"));
  ASSERT_NE(Other, nullptr);
  makeRank(Receiver.Ctx, 0, {publishedKey(Receiver.Ctx), publishedKey(Sender.Ctx)});
  makeRank(Sender.Ctx, 1, {publishedKey(Other->Ctx), publishedKey(Sender.Ctx)});
  EXPECT_EQ(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_ERR_AUTH);
  EXPECT_TRUE(logged("the receiver claims rank 0 and does not prove it")) << describe();
}

/// Abandoned frames of a proved rank are charged to its rank, not to its
/// address, which every rank of its node shares (issue 41, item 8): the
/// quarantined rank is refused, another rank on the same address is not.
/// Before, the address (127.0.0.1, and loopback's host group) was refused,
/// and with it every rank on the node for the quarantine's window.
TEST_F(TwoContexts, AQuarantinedRankDoesNotLockOutTheOtherRanksOfItsNode) {
  Side *Rank2 = nullptr;
  std::vector<RankKey> Keys;
  ASSERT_NO_FATAL_FAILURE(startThreeContexts(*this, Rank2, Keys));
  makeRank(Sender.Ctx, 0, Keys);
  makeRank(Receiver.Ctx, 1, Keys);
  makeRank(Rank2->Ctx, 2, Keys);
  tc_peer_t *Bad = nullptr;
  ASSERT_EQ(tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Bad), TC_OK)
      << describe();
  ASSERT_TRUE(progressUntil([&] { return holdsRank(Receiver.Ctx, 0); },
                            "the receiver took rank 0's connection"));
  {
    // One abandoned frame of rank 0's past a budget of one charge.
    auto *Ctx = coreOf(Receiver.Ctx);
    std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
    Ctx->Containment->Addresses.setBudget(AddressQuarantine::MinChargeNs, 60'000'000'000ull);
    tc_peer *From = nullptr;
    for (auto &P : Ctx->Accepted)
      if (P->Welcomed && !P->Failed && P->JobRank == 0)
        From = P.get();
    ASSERT_NE(From, nullptr);
    JamRun Run;
    Run.Serial = 1; // not seen by the watchdog: charged the least
    chargeAbandoned(Ctx, From, Run);
  }
  EXPECT_TRUE(logged("quarantined rank 0")) << describe();
  tc_peer_close(Bad);
  EXPECT_EQ(connectOnce(Rank2->Ctx, Port, ConnectTimeoutMs), TC_OK)
      << "rank 2, on rank 0's address, was refused\n"
      << describe();
  EXPECT_EQ(connectOnce(Sender.Ctx, Port, ConnectTimeoutMs), TC_ERR_QUARANTINED)
      << "rank 0 came back\n"
      << describe();
}

/// Quiescence speaks only over the connection the pair keeps (issue 41,
/// item 2). A connection of rank 1's own that the receiver (rank 0)
/// welcomed but never kept (tc_connect to its address sends no READY)
/// carries a report of rank 1's: it is refused, not counted in the wave.
TEST_F(TwoContexts, AQuiesceReportOnAConnectionNotKeptIsRefused) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(startUnconnected());
  std::vector<RankKey> Keys = keysOf({Receiver.Ctx, Sender.Ctx});
  makeRank(Receiver.Ctx, 0, Keys);
  makeRank(Sender.Ctx, 1, Keys);
  {
    auto *Ctx = coreOf(Receiver.Ctx);
    std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
    // As tc_job_join sizes them.
    Ctx->Job->Quiesce.ReportWave.assign(2, -1);
    Ctx->Job->Quiesce.Sent.assign(2, 0);
    Ctx->Job->Quiesce.Done.assign(2, 0);
    Ctx->Job->Quiesce.Unchanged.assign(2, 0);
  }
  tc_peer_t *P = nullptr;
  ASSERT_EQ(tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &P), TC_OK)
      << describe();
  ASSERT_TRUE(progressUntil([&] { return holdsRank(Receiver.Ctx, 1); },
                            "the receiver took the connection as rank 1's"));
  uint64_t Refused = stats(Receiver).messages_refused;
  QuiesceMessage M = {QuiesceMagic, 1 /* report */, 0, 0, 1, 0, 0};
  EXPECT_NO_FATAL_FAILURE(sendRawMessage(P, AmQuiesce, &M, sizeof M));
  EXPECT_TRUE(progressUntil(
      [&] {
        ucp_worker_progress(Sender.Ctx->Worker);
        return stats(Receiver).messages_refused > Refused;
      },
      "the receiver refused the report"))
      << describe();
  EXPECT_TRUE(logged("not the one kept with rank 1")) << describe();
  {
    auto *Ctx = coreOf(Receiver.Ctx);
    std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
    EXPECT_EQ(Ctx->Job->Quiesce.ReportWave[1], -1) << "the report was counted in the wave";
  }
  tc_peer_close(P);
}

} // namespace
