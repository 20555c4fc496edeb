//===- RankEndpointsTest.cpp - A job's connections from worker addresses --===//
//
// Ranks of one host connect from the control worker addresses their blobs
// publish (job/RankEndpoints.cpp), not through UCX's connection manager:
// the lower rank connects, the higher one asks it to by a KNOCK. Before,
// every connection of a job was made by sockaddr, two TCP connections and
// the connection manager's sockets each, and the first all-to-all of 64
// ranks on this machine took 4.9-5.9 s (3.4-3.8 s since).
//
// A KNOCK proves nothing: one that does not come from the worker of the
// rank it names is refused, and starts no connection.
//
//===----------------------------------------------------------------------===//
#include "JobRanks.h"
#include "TwoContexts.h"

#include "context/Context.h"
#include "job/JobContext.h"
#include "wireup/Wireup.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace {

using namespace twochains::rt;
using namespace twochains::rt::test;

/// The sender (rank 1) and the receiver (rank 0, its executor running)
/// as ranks of one job on this host, each listening and publishing its
/// control worker's address. Call under ASSERT_NO_FATAL_FAILURE.
void startTwoRanks(TwoContexts &T) {
  T.Drive = TwoContexts::Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(T.startUnconnected());
  uint16_t SenderPort = 0;
  ASSERT_EQ(tc_listen(T.Sender.Ctx, "127.0.0.1", 0), TC_OK);
  ASSERT_EQ(tc_listen_port(T.Sender.Ctx, &SenderPort), TC_OK);
  std::vector<RankKey> Keys = keysOf({T.Receiver.Ctx, T.Sender.Ctx});
  std::vector<uint16_t> Ports = {T.Port, SenderPort};
  std::vector<std::vector<uint8_t>> Workers = {publishedWorker(T.Receiver.Ctx),
                                               publishedWorker(T.Sender.Ctx)};
  ASSERT_FALSE(Workers[0].empty());
  ASSERT_FALSE(Workers[1].empty());
  makeRank(T.Receiver.Ctx, 0, Keys, Ports, Workers);
  makeRank(T.Sender.Ctx, 1, Keys, Ports, Workers);
}

void ignoreEndpointError(void *, ucp_ep_h, ucs_status_t) {}

/// Whether Api's handle of Rank is bound to a welcomed connection whose
/// control endpoint is the one made from Rank's worker address.
bool boundByWorkerAddress(tc_context_t *Api, uint32_t Rank) {
  auto *Ctx = coreOf(Api);
  std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
  RouteTarget &T = Ctx->Job->Ranks[Rank];
  tc_peer *B = T.Handle ? T.Handle->Bound : nullptr;
  return B && B->Welcomed && !B->Failed && B->JobRank == Rank &&
         T.Pair.At == RankEndpoint::State::Owned && B->Ep == T.Pair.Ep;
}

/// Progresses Api (the receiver's executor runs) until Done, for WaitMs at
/// most.
template <class Fn> bool progressUntilDone(TwoContexts &T, tc_context_t *Api, Fn Done) {
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(T.WaitMs);
  while (!Done()) {
    if (std::chrono::steady_clock::now() > Deadline)
      return false;
    tc_progress(Api, nullptr);
    std::this_thread::yield();
  }
  return true;
}

template <class Fn> bool senderProgressUntil(TwoContexts &T, Fn Done) {
  return progressUntilDone(T, T.Sender.Ctx, Done);
}

/// A third context, listening on loopback (its control worker then has an
/// address a rank's could be); null on failure.
TwoContexts::Side *listeningThirdContext(TwoContexts &T, const char *Name) {
  TwoContexts::Side *S = T.createExtraSide(Name);
  if (!S || tc_listen(S->Ctx, "127.0.0.1", 0) != TC_OK)
    return nullptr;
  return S;
}

/// The higher rank wants the lower: it knocks, the lower connects from its
/// worker address, and both bind their handles to that one connection.
/// Neither listener sees a connection.
TEST_F(TwoContexts, AHigherRankIsConnectedToFromItsWorkerAddress) {
  ASSERT_NO_FATAL_FAILURE(startTwoRanks(*this));
  tc_peer_t *Handle = nullptr;
  ASSERT_EQ(tc_job_peer(Sender.Ctx, 0, &Handle), TC_OK);
  Peer = Handle;
  EXPECT_TRUE(senderProgressUntil(*this, [&] {
    return boundByWorkerAddress(Sender.Ctx, 0) && boundByWorkerAddress(Receiver.Ctx, 1);
  })) << describe();
  {
    auto *Ctx = coreOf(Sender.Ctx);
    std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
    EXPECT_TRUE(Ctx->Job->Ranks[0].Handle->Bound &&
                std::find_if(Ctx->Accepted.begin(), Ctx->Accepted.end(),
                             [&](auto &P) {
                               return P.get() == Ctx->Job->Ranks[0].Handle->Bound;
                             }) != Ctx->Accepted.end())
        << "the higher rank connected itself rather than being connected to";
  }
  ASSERT_NO_FATAL_FAILURE(sendGoodFrames(4));
  Peer = nullptr; // a job's handle: the context's
}

/// The lower rank wants the higher: it connects from the higher's worker
/// address at once (its KNOCK goes ahead of its AUTH).
TEST_F(TwoContexts, ALowerRankConnectsFromTheHigherRanksWorkerAddress) {
  ASSERT_NO_FATAL_FAILURE(startTwoRanks(*this));
  // The receiver is rank 0 here: its handle of rank 1, the sender.
  tc_peer_t *Handle = nullptr;
  ASSERT_EQ(tc_job_peer(Receiver.Ctx, 1, &Handle), TC_OK);
  EXPECT_TRUE(senderProgressUntil(*this, [&] {
    return boundByWorkerAddress(Receiver.Ctx, 1) && boundByWorkerAddress(Sender.Ctx, 0);
  })) << describe();
}

/// A KNOCK naming rank 1 from a worker that is not rank 1's (a third
/// context's endpoint to the receiver) is refused: counted, logged, and
/// no connection to rank 1 is started.
TEST_F(TwoContexts, AKnockFromAnotherRanksWorkerIsRefused) {
  ASSERT_NO_FATAL_FAILURE(startTwoRanks(*this));
  Side *Impostor = nullptr;
  ASSERT_NO_FATAL_FAILURE(Impostor = listeningThirdContext(*this, "impostor"));
  ASSERT_NE(Impostor, nullptr);
  auto *Ictx = coreOf(Impostor->Ctx);
  uint64_t Refused = stats(Receiver).messages_refused;
  ucp_ep_h Ep = nullptr;
  {
    std::lock_guard<std::recursive_mutex> G(Ictx->Lock);
    Ep = connectToControlWorker(Ictx, publishedWorker(Receiver.Ctx), ignoreEndpointError, nullptr);
  }
  ASSERT_NE(Ep, nullptr);
  static RankKnock K = {KnockMagic, 1, TestJob};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t R = ucp_am_send_nbx(Ep, AmKnock, &K, sizeof K, nullptr, 0, &P);
  progressUntilDone(*this, Impostor->Ctx,
                    [&] { return stats(Receiver).messages_refused != Refused; });
  EXPECT_GT(stats(Receiver).messages_refused, Refused) << describe();
  EXPECT_TRUE(logged("refused a KNOCK claiming rank 1: it did not come from that rank's worker"))
      << describe();
  {
    auto *Ctx = coreOf(Receiver.Ctx);
    std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
    EXPECT_FALSE(Ctx->Job->Ranks[1].Started) << "the KNOCK started a connection to rank 1";
    EXPECT_FALSE(Ctx->Job->Ranks[1].Knocked);
  }
  if (UCS_PTR_IS_PTR(R))
    ucp_request_free(R);
  std::lock_guard<std::recursive_mutex> G(Ictx->Lock);
  closeEndpointByForce(Ictx->Worker, Ep);
}

/// Rank 1's worker address, as rank 0 was told it, is a worker that is
/// gone: rank 0's connect from it fails, and its handle is connected by
/// port instead (rank 1's listener), not left failed.
TEST_F(TwoContexts, ARankWhoseWorkerAddressFailsIsConnectedByPort) {
  ASSERT_NO_FATAL_FAILURE(startTwoRanks(*this));
  Side *Gone = nullptr;
  ASSERT_NO_FATAL_FAILURE(Gone = listeningThirdContext(*this, "a worker that goes"));
  ASSERT_NE(Gone, nullptr);
  std::vector<uint8_t> Dead = publishedWorker(Gone->Ctx);
  ASSERT_FALSE(Dead.empty());
  tc_context_destroy(Gone->Ctx);
  Gone->Ctx = nullptr;
  auto *Ctx0 = coreOf(Receiver.Ctx);
  {
    std::lock_guard<std::recursive_mutex> G(Ctx0->Lock);
    Ctx0->Job->Ranks[1].WorkerAddress = Dead;
  }
  tc_peer_t *Handle = nullptr;
  ASSERT_EQ(tc_job_peer(Receiver.Ctx, 1, &Handle), TC_OK);
  EXPECT_TRUE(senderProgressUntil(*this, [&] {
    std::lock_guard<std::recursive_mutex> G(Ctx0->Lock);
    RouteTarget &T = Ctx0->Job->Ranks[1];
    tc_peer *B = T.Handle ? T.Handle->Bound : nullptr;
    return B && B->Welcomed && !B->Failed && T.Pair.At == RankEndpoint::State::Spent;
  })) << describe();
}

} // namespace
