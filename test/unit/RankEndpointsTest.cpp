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
#include "path/PeerPath.h"
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

/// The sender (rank 1) takes its handle of rank 0 as the test's peer and
/// both ranks bind their handles to the connection made from rank 1's
/// worker address. Call under ASSERT_NO_FATAL_FAILURE.
void bindTheRanks(TwoContexts &T) {
  tc_peer_t *Handle = nullptr;
  ASSERT_EQ(tc_job_peer(T.Sender.Ctx, 0, &Handle), TC_OK);
  T.Peer = Handle;
  ASSERT_TRUE(senderProgressUntil(T, [&] {
    return boundByWorkerAddress(T.Sender.Ctx, 0) && boundByWorkerAddress(T.Receiver.Ctx, 1);
  })) << T.describe();
}

/// The connection of a rank of this host, as Api's handle of Rank is
/// bound to it (null if it is not).
tc_peer *boundConnection(tc_context_t *Api, uint32_t Rank) {
  auto *Ctx = coreOf(Api);
  std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
  RouteTarget &T = Ctx->Job->Ranks[Rank];
  return T.Handle ? T.Handle->Bound : nullptr;
}

/// Two ranks of one host store frames and credits into each other's
/// memory files (base/SharedSegment.h): no UCX key, no endpoint between
/// their RMA workers until a payload goes there. Frames run, and a
/// payload larger than the receiver's slot goes ahead by RMA on an
/// endpoint made for it.
TEST_F(TwoContexts, RanksOfOneHostStoreIntoEachOthersMemoryFiles) {
  Receiver.Params.slot_size = 512;
  ASSERT_NO_FATAL_FAILURE(startTwoRanks(*this));
  ASSERT_NO_FATAL_FAILURE(bindTheRanks(*this));
  for (auto [Api, Rank] : {std::pair{Sender.Ctx, 0u}, std::pair{Receiver.Ctx, 1u}}) {
    tc_peer *B = boundConnection(Api, Rank);
    ASSERT_NE(B, nullptr);
    std::lock_guard<std::recursive_mutex> G(coreOf(Api)->Lock);
    EXPECT_TRUE(B->Rx->Shared) << "rank " << Rank << "'s connection is not of shared memory";
    EXPECT_EQ(B->Rx->MailboxMem, nullptr) << "its ring is a UCX allocation";
    EXPECT_NE(B->Rx->SharedMailbox.Base, nullptr);
    EXPECT_EQ(B->Rx->SharedMailbox.Fd, -1) << "its memory file's descriptor is still open";
    EXPECT_EQ(B->DataEp, nullptr) << "an RMA endpoint made before anything needed it";
    ASSERT_NE(B->Tx->MailboxMapped, nullptr);
    EXPECT_GE(B->Tx->RingDirect, B->Tx->MailboxMapped);
    EXPECT_LT(B->Tx->RingDirect, B->Tx->MailboxMapped + B->Tx->MailboxMappedBytes);
    EXPECT_EQ(reinterpret_cast<uint8_t *>(B->Rx->CreditDirect), B->Tx->MailboxMapped);
    EXPECT_NE(B->Tx->Doorbell, nullptr) << "the peer's doorbell is not mapped";
  }
  ASSERT_NO_FATAL_FAILURE(sendGoodFrames(4));
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  int64_t Before = readTotal(Total);
  auto Large = sumPayload(1000, 5);
  ASSERT_EQ(sendRetrying(Sender.Stdlib, element(Sender.Stdlib, "server_side_sum"), TC_SEND_LOCAL,
                         Large.data(), Large.size() * 4),
            TC_OK);
  ASSERT_EQ(flush(), TC_OK) << describe();
  EXPECT_EQ(readTotal(Total) - Before, sumOf(Large));
  EXPECT_EQ(stats(Sender).payloads_ahead_by_rma, 1u) << describe();
  EXPECT_NE(boundConnection(Sender.Ctx, 0)->DataEp, nullptr);
  Peer = nullptr; // a job's handle: the context's
}

/// A payload by RMA over a connection of shared memory names the
/// connection by the receiver's mailbox token, and the receiver takes the
/// endpoint it came on as the connection's. From a third process's
/// endpoint, one naming a token no connection has is refused; once the
/// real sender's payload has come, one naming the right token from
/// another endpoint is refused too, and nothing of either is run.
TEST_F(TwoContexts, APayloadNamingAConnectionItIsNotOnIsRefused) {
  Receiver.Params.slot_size = 512;
  ASSERT_NO_FATAL_FAILURE(startTwoRanks(*this));
  Side *Impostor = nullptr;
  ASSERT_NO_FATAL_FAILURE(Impostor = listeningThirdContext(*this, "impostor"));
  ASSERT_NE(Impostor, nullptr);
  ASSERT_NO_FATAL_FAILURE(bindTheRanks(*this));
  tc_peer *Real = boundConnection(Receiver.Ctx, 1);
  ASSERT_TRUE(Real && Real->Rx->Shared);
  uint8_t Token[SegmentTokenBytes];
  std::memcpy(Token, Real->Rx->SharedMailbox.Token, sizeof Token);
  auto *Ictx = coreOf(Impostor->Ctx);
  auto *Rctx = coreOf(Receiver.Ctx);
  ucp_ep_h Ep = nullptr;
  {
    std::lock_guard<std::recursive_mutex> G(Ictx->Lock);
    ucp_ep_params_t P = {};
    P.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    P.address = reinterpret_cast<const ucp_address_t *>(Rctx->WorkerAddress);
    ASSERT_EQ(ucp_ep_create(Ictx->DataWorker, &P, &Ep), UCS_OK);
  }
  static std::vector<uint8_t> Bytes(600, 7);
  auto ForgeWith = [&](const uint8_t *Named) {
    // For the frame the ring expects next: a payload the connection may
    // send now, refused only for where it came from.
    uint64_t Next = 0;
    {
      std::lock_guard<std::recursive_mutex> G(Rctx->Lock);
      Next = Real->Rx->Receive->expected();
    }
    static SharedPayloadHeader H;
    H.Header = {PayloadMagic, uint32_t(Bytes.size()), Next};
    std::memcpy(H.Token, Named, sizeof H.Token);
    uint64_t Refused = stats(Receiver).messages_refused;
    ucp_request_param_t P = {};
    P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    P.flags = UCP_AM_SEND_FLAG_REPLY;
    ucs_status_ptr_t R = ucp_am_send_nbx(Ep, AmPayload, &H, sizeof H, Bytes.data(), Bytes.size(),
                                         &P);
    // The receiver's data worker turns as it would with a frame waiting
    // for its payload (an idle receiver does not watch it).
    bool Seen = progressUntilDone(*this, Impostor->Ctx, [&] {
      tc_progress(Receiver.Ctx, nullptr);
      std::lock_guard<std::recursive_mutex> G(Ictx->Lock);
      ucp_worker_progress(Ictx->DataWorker);
      return stats(Receiver).messages_refused != Refused;
    });
    if (UCS_PTR_IS_PTR(R))
      ucp_request_free(R);
    return Seen;
  };
  uint8_t Wrong[SegmentTokenBytes];
  std::memcpy(Wrong, Token, sizeof Wrong);
  Wrong[3] ^= 0x10;
  EXPECT_TRUE(ForgeWith(Wrong)) << "a payload naming no connection was not refused\n" << describe();
  EXPECT_EQ(Real->DataEp, nullptr) << "a forged payload gave the connection its endpoint";
  auto Large = sumPayload(200, 3);
  ASSERT_EQ(sendRetrying(Sender.Stdlib, element(Sender.Stdlib, "server_side_sum"), TC_SEND_LOCAL,
                         Large.data(), Large.size() * 4),
            TC_OK);
  ASSERT_EQ(flush(), TC_OK) << describe();
  ASSERT_NE(Real->DataEp, nullptr);
  EXPECT_TRUE(ForgeWith(Token)) << "a payload from another endpoint was taken as the sender's\n"
                                << describe();
  EXPECT_TRUE(logged("a payload naming no connection of shared memory of its endpoint"));
  EXPECT_EQ(stats(Receiver).payloads_ahead_received, 1u);
  std::lock_guard<std::recursive_mutex> G(Ictx->Lock);
  closeEndpointByForce(Ictx->DataWorker, Ep);
  Peer = nullptr;
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
