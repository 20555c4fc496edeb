//===- TwoContextsTest.cpp - Handshakes, sends and calls in one process ---===//
//
// A receiver and a sender context in this process, connected over UCX on
// 127.0.0.1 (TwoContexts.h). Each test checks an effect that only a working
// runtime produces: memory written by a jam that ran on the receiver, bytes
// answered by a call, counters and events of both sides, statuses.
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "base/Log.h"
#include "base/Mappings.h"
#include "context/Context.h"
#include "core/Peer.h"
#include "wire/Frame.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

/// The handshake timeout's default grows with max_peers (3 s for each 1024):
/// past about 2,800 peers a handshake waited longer than 3 s. One chosen
/// (parameter) is kept.
TEST(ContextParams, HandshakeTimeoutDefaultGrowsWithMaxPeers) {
  auto TimeoutMs = [](uint32_t MaxPeers, uint32_t Chosen) -> uint64_t {
    tc_context_params_t P = {};
    P.version = TC_CONTEXT_PARAMS_VERSION;
    P.max_peers = MaxPeers;
    P.handshake_timeout_ms = Chosen;
    tc_context_t *Ctx = nullptr;
    if (tc_context_create(&P, &Ctx) != TC_OK)
      return 0;
    uint64_t Ms = reinterpret_cast<tc_context *>(Ctx)->Wireup->HandshakeTimeoutNs / 1'000'000;
    tc_context_destroy(Ctx);
    return Ms;
  };
  if (const char *Env = std::getenv("TC_HANDSHAKE_TIMEOUT_MS"); Env && *Env)
    GTEST_SKIP() << "TC_HANDSHAKE_TIMEOUT_MS is set";
  EXPECT_EQ(TimeoutMs(256, 0), 3000u);
  EXPECT_EQ(TimeoutMs(1024, 0), 3000u);
  EXPECT_EQ(TimeoutMs(1025, 0), 6000u);
  EXPECT_EQ(TimeoutMs(4096, 0), 12000u);
  EXPECT_EQ(TimeoutMs(4096, 500), 500u) << "a chosen timeout is kept";
}

const std::string KeyA = "two-contexts-key-number-one";
const std::string KeyB = "two-contexts-key-number-two";

/// The standard package's put: bytes at an offset of tc_stdlib_memory.
std::vector<uint8_t> putPayload(uint64_t Offset, const std::string &Bytes) {
  struct { uint64_t Offset; uint32_t Length, Reserved; } H = {Offset, uint32_t(Bytes.size()), 0};
  std::vector<uint8_t> P(sizeof H + Bytes.size());
  std::memcpy(P.data(), &H, sizeof H);
  std::memcpy(P.data() + sizeof H, Bytes.data(), Bytes.size());
  return P;
}


// Regions of tc_stdlib_memory and tc_stdlib_inbox each test uses, apart.
constexpr uint64_t SendsRegion = 4096, NoCacheRegion = 8192, ReplyRegion = 12288;
constexpr uint64_t UnknownRegion = 16384;

//===----------------------------------------------------------------------===//
// (a) the handshake
//===----------------------------------------------------------------------===//

/// Both sides end the handshake welcomed: the sender has its peer, the
/// receiver a connected peer number 1, and each counts one connection.
TEST_F(TwoContexts, HandshakeWelcomesBothSides) {
  Drive = Driver::TestThread; // the handshake answered by a helper thread
  ASSERT_NO_FATAL_FAILURE(start());
  EXPECT_NE(Port, 0);
  tc_peer_t *Accepted = nullptr;
  ASSERT_EQ(tc_context_peer(Receiver.Ctx, 1, &Accepted), TC_OK)
      << "the receiver has no welcomed peer 1\n" << describe();
  EXPECT_EQ(tc_context_peer(Receiver.Ctx, 2, &Accepted), TC_ERR_INVALID_PARAM);
  tc_stats_t R = stats(Receiver), S = stats(Sender);
  EXPECT_EQ(R.peers, 1u);
  EXPECT_EQ(R.peers_rma + R.peers_am, 1u) << "the receiver's connection, by one path";
  EXPECT_EQ(S.peers_rma + S.peers_am, 1u) << "the sender's connection, by one path";
  EXPECT_EQ(R.auth_failures + S.auth_failures, 0u);
  EXPECT_EQ(R.offers_refused + S.offers_refused, 0u);
  tc_peer_stats_t P = peerStats(Peer);
  EXPECT_EQ(P.frames_sent, 0u);
  EXPECT_TRUE(takeEvents(Receiver).empty());
  EXPECT_TRUE(takeEvents(Sender).empty());
}

/// Both sides check the segments the other's keys map here, and neither
/// lists this process's mappings to do it: UCX's own mmap says what the
/// keys mapped, and the kernel's count of the process's memory that
/// nothing else was (wireup/Mailbox.cpp). Listing them (/proc/self/maps,
/// twice per side) grew with the peers each process has, and was most of
/// the time a job of 64 ranks took to connect (docs/scaling.md).
TEST_F(TwoContexts, AHandshakeListsNoMappings) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(createContexts());
  uint64_t Lists = twochains::rt::sharedMappingLists();
  ASSERT_EQ(connect(), TC_OK) << describe();
  if (stats(Sender).peers_direct != 1)
    GTEST_SKIP() << "no shared memory between the two contexts: no key maps here";
  EXPECT_EQ(stats(Receiver).offers_refused + stats(Sender).offers_refused, 0u);
  EXPECT_EQ(twochains::rt::sharedMappingLists(), Lists)
      << "a handshake listed the process's mappings";
}

/// Keys of a domain that maps other than through ucs_mmap (System V: shmat)
/// are checked by listing the process's mappings around their unpack, as
/// before: what UcxMappings.cpp saw is not taken for all they mapped.
TEST_F(TwoContexts, SysVKeysAreCheckedByListingTheMappings) {
  Drive = Driver::TestThread;
  const char *Saved = std::getenv("UCX_ALLOC_PRIO");
  std::string Prio = Saved ? Saved : "";
  setenv("UCX_ALLOC_PRIO", "md:sysv,mmap,heap", 1);
  ASSERT_NO_FATAL_FAILURE(createContexts());
  if (Saved)
    setenv("UCX_ALLOC_PRIO", Prio.c_str(), 1);
  else
    unsetenv("UCX_ALLOC_PRIO");
  uint64_t Lists = twochains::rt::sharedMappingLists();
  ASSERT_EQ(connect(), TC_OK) << describe();
  if (stats(Sender).peers_direct != 1)
    GTEST_SKIP() << "no shared memory between the two contexts: no key maps here";
  EXPECT_EQ(stats(Receiver).offers_refused + stats(Sender).offers_refused, 0u);
  EXPECT_GT(twochains::rt::sharedMappingLists(), Lists)
      << "SysV keys were taken on what ucs_mmap saw";
}

/// The same, keyed, with the receiver's executor answering the handshake.
TEST_F(TwoContexts, HandshakeWithTheSameKeyAndTheExecutor) {
  setKey(KeyA);
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer_t *Accepted = nullptr;
  EXPECT_EQ(tc_context_peer(Receiver.Ctx, 1, &Accepted), TC_OK);
  EXPECT_EQ(stats(Receiver).peers, 1u);
  EXPECT_EQ(stats(Receiver).auth_failures, 0u);
  EXPECT_EQ(stats(Sender).auth_failures, 0u);
}

/// A wrong key, or a key on one side only: tc_connect fails with
/// TC_ERR_AUTH, both sides count the failure, and the receiver welcomes
/// nobody.
void expectRefusedForTheKey(TwoContexts &T) {
  ASSERT_NO_FATAL_FAILURE(T.createContexts());
  tc_status_t St = T.connect();
  EXPECT_EQ(St, TC_ERR_AUTH) << tc_status_string(St) << "\n" << T.describe();
  EXPECT_EQ(T.Peer, nullptr);
  EXPECT_EQ(T.stats(T.Sender).auth_failures, 1u);
  // The sender's HELLO, which tells the receiver, may still be on its way.
  ASSERT_TRUE(T.progressUntil([&] { return T.stats(T.Receiver).auth_failures == 1; },
                              "the receiver counted the authentication failure"));
  tc_peer_t *Accepted = nullptr;
  EXPECT_EQ(tc_context_peer(T.Receiver.Ctx, 1, &Accepted), TC_ERR_INVALID_PARAM);
  EXPECT_EQ(T.stats(T.Receiver).peers, 0u);
  EXPECT_TRUE(T.logged("authentication failed")) << "the receiver logs the refusal";
}

TEST_F(TwoContexts, WrongKeyIsRefused) {
  Drive = Driver::TestThread;
  Receiver.Key = KeyA;
  Sender.Key = KeyB;
  expectRefusedForTheKey(*this);
}

TEST_F(TwoContexts, KeyOnlyOnTheReceiverIsRefused) {
  Drive = Driver::Executor;
  Receiver.Key = KeyA;
  expectRefusedForTheKey(*this);
}

TEST_F(TwoContexts, KeyOnlyOnTheSenderIsRefused) {
  Drive = Driver::TestThread;
  Sender.Key = KeyB;
  expectRefusedForTheKey(*this);
}

/// A receiver sees its sender go: an event, and no peer 1 any more.
TEST_F(TwoContexts, ClosingThePeerIsAnEventOnTheReceiver) {
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer_close(Peer);
  Peer = nullptr;
  std::vector<tc_event_t> Seen;
  ASSERT_TRUE(progressUntil(
      [&] {
        for (const tc_event_t &E : takeEvents(Receiver))
          Seen.push_back(E);
        return !Seen.empty();
      },
      "the receiver posted an event for the sender that closed"));
  EXPECT_EQ(Seen[0].kind, TC_EVENT_PEER_GONE);
  EXPECT_EQ(Seen[0].peer, 1u);
  EXPECT_EQ(Seen[0].status, TC_ERR_IO);
  tc_peer_t *Accepted = nullptr;
  EXPECT_EQ(tc_context_peer(Receiver.Ctx, 1, &Accepted), TC_ERR_INVALID_PARAM);
}

/// A connection's handshake messages still queued for the control turn
/// when it is released go with it: UCX may give the next endpoint its
/// address, and a stale CHALLENGE or HELLO would be taken for the new
/// connection's (a job's connect then failed with TC_ERR_AUTH under load,
/// job-pmix-64-injected). Others stay queued.
TEST_F(TwoContexts, ReleasingAPeerDropsItsQueuedHandshakeMessages) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_context *S = Sender.Ctx;
  ucp_ep_h Ep = Peer->Ep;
  ASSERT_NE(Ep, nullptr);
  ucp_ep_h Other = reinterpret_cast<ucp_ep_h>(uintptr_t(Ep) ^ 0x40);
  S->Wireup->Handshakes.push_back({twochains::rt::AmChallenge, Ep, {}, {}});
  S->Wireup->Handshakes.push_back({twochains::rt::AmChallenge, Other, {}, {}});
  tc_peer_close(Peer);
  Peer = nullptr;
  size_t Stale = 0, Kept = 0;
  for (const auto &M : S->Wireup->Handshakes) {
    Stale += M.Ep == Ep;
    Kept += M.Ep == Other;
  }
  EXPECT_EQ(Stale, 0u) << "a released connection's message stayed queued";
  EXPECT_EQ(Kept, 1u);
  S->Wireup->Handshakes.clear();
}

/// Authenticated peers have max_peers places, which connections still
/// authenticating never take: one more authenticated peer is refused with
/// TC_ERR_TOO_MANY_PEERS, and the place is free again once the first closed.
TEST_F(TwoContexts, PeerBeyondMaxPeersIsRefusedAfterAuthenticating) {
  Receiver.Params.max_peers = 1;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer_t *Second = nullptr;
  auto ConnectSecond = [&] {
    return whileReceiverRuns(
        [&] { return tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Second); });
  };
  tc_status_t St = ConnectSecond();
  EXPECT_EQ(St, TC_ERR_TOO_MANY_PEERS) << tc_status_string(St) << "\n" << describe();
  EXPECT_EQ(Second, nullptr);
  EXPECT_EQ(stats(Receiver).connections_refused, 1u);
  EXPECT_TRUE(logged("the context's limit (max_peers)")) << "the receiver says why";
  tc_peer_close(Peer);
  Peer = nullptr;
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_peer_t *First = nullptr;
        return tc_context_peer(Receiver.Ctx, 1, &First) != TC_OK;
      },
      "the receiver let the first peer go"));
  St = ConnectSecond();
  ASSERT_EQ(St, TC_OK) << tc_status_string(St) << "\n" << describe();
  Peer = Second; // closed at teardown
}

//===----------------------------------------------------------------------===//
// (b) sends
//===----------------------------------------------------------------------===//

/// A Local frame runs the receiver's copy of put; the first Injected frame
/// carries put's code, the second names it in the receiver's code cache.
/// Each writes the receiver's memory; tc_flush then succeeds.
TEST_F(TwoContexts, LocalAndInjectedFramesRunOnTheReceiver) {
  Drive = Driver::TestThread; // counters read between progress calls
  ASSERT_NO_FATAL_FAILURE(start());
  EXPECT_STREQ(tc_mailbox_mode_name(Receiver.Ctx), "code-cache");
  auto *Memory = receiverSymbol<uint8_t>("tc_stdlib_memory");
  ASSERT_NE(Memory, nullptr);
  std::memset(Memory + SendsRegion, 0, 64);
  uint32_t Put = element(Sender.Stdlib, "put");

  auto Local = putPayload(SendsRegion, "local frame ran");
  auto First = putPayload(SendsRegion + 16, "injected, code");
  auto Second = putPayload(SendsRegion + 32, "injected, cache");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Local.data(), Local.size()), TC_OK);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_INJECTED, First.data(), First.size()), TC_OK);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_INJECTED, Second.data(), Second.size()),
            TC_OK);
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_stats_t R = stats(Receiver);
        return R.frames_executed_local == 1 && R.frames_executed_injected == 2;
      },
      "the receiver ran one Local and two Injected frames"));
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SendsRegion), "local frame ran");
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SendsRegion + 16), "injected, code");
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SendsRegion + 32), "injected, cache");

  tc_stats_t R = stats(Receiver), S = stats(Sender);
  EXPECT_EQ(S.frames_sent, 3u);
  EXPECT_EQ(S.frames_sent_with_code, 1u) << "code travels in the first Injected frame only";
  EXPECT_EQ(S.frames_sent_cached, 1u);
  EXPECT_EQ(R.frames_executed_cached, 1u);
  EXPECT_EQ(R.cache_installs, 1u);
  EXPECT_EQ(R.frames_rejected, 0u);

  EXPECT_EQ(flush(), TC_OK);
  EXPECT_EQ(peerStats(Peer).frames_sent, 3u);
  tc_peer_t *Accepted = nullptr;
  ASSERT_EQ(tc_context_peer(Receiver.Ctx, 1, &Accepted), TC_OK);
  EXPECT_EQ(peerStats(Accepted).frames_executed, 3u);
  EXPECT_EQ(peerStats(Accepted).frames_rejected, 0u);
}

/// A receiver without a code cache: every Injected frame carries its code,
/// and runs.
TEST_F(TwoContexts, NoCacheMailboxTakesCodeInEveryFrame) {
  Drive = Driver::TestThread;
  setMailboxMode(TC_MAILBOX_NO_CACHE);
  ASSERT_NO_FATAL_FAILURE(start());
  EXPECT_STREQ(tc_mailbox_mode_name(Receiver.Ctx), "no-cache");
  auto *Memory = receiverSymbol<uint8_t>("tc_stdlib_memory");
  ASSERT_NE(Memory, nullptr);
  std::memset(Memory + NoCacheRegion, 0, 32);
  uint32_t Put = element(Sender.Stdlib, "put");
  auto One = putPayload(NoCacheRegion, "no cache, one");
  auto Two = putPayload(NoCacheRegion + 16, "no cache, two");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_INJECTED, One.data(), One.size()), TC_OK);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_INJECTED, Two.data(), Two.size()), TC_OK);
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_executed_injected == 2; },
                            "the receiver ran two Injected frames"));
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + NoCacheRegion), "no cache, one");
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + NoCacheRegion + 16), "no cache, two");
  EXPECT_EQ(stats(Sender).frames_sent_with_code, 2u);
  EXPECT_EQ(stats(Sender).frames_sent_cached, 0u);
  EXPECT_EQ(stats(Receiver).frames_executed_cached, 0u);
  EXPECT_EQ(stats(Receiver).cache_installs, 0u);
  EXPECT_EQ(flush(), TC_OK);
}

/// tc_flush waits for the receiver: while nothing progresses it, its frames
/// cannot have run, and a flush ends at its timeout with TC_ERR_TIMED_OUT;
/// with the receiver running it returns TC_OK, once all of them ran.
TEST_F(TwoContexts, FlushWaitsUntilTheReceiverRanEveryFrame) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  int64_t Before = readTotal(Total), Expected = 0;
  constexpr int Frames = 10;
  for (int I = 0; I < Frames; ++I) {
    auto V = sumPayload(3, 100 * I);
    Expected += sumOf(V);
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Sum, I % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL, V.data(),
                      V.size() * sizeof V[0]),
              TC_OK);
  }
  EXPECT_EQ(tc_flush(Peer, 20), TC_ERR_TIMED_OUT) << "flushed with the receiver stopped";
  EXPECT_EQ(stats(Receiver).frames_executed_local + stats(Receiver).frames_executed_injected, 0u);
  ASSERT_EQ(flush(), TC_OK) << describe();
  EXPECT_EQ(stats(Receiver).frames_executed_local, uint64_t(Frames / 2));
  EXPECT_EQ(stats(Receiver).frames_executed_injected, uint64_t(Frames / 2));
  EXPECT_EQ(readTotal(Total) - Before, Expected);
}

/// A receiver whose loop does more than poll (here it sleeps 50 µs a turn,
/// as a loop with work of its own or another worker to progress takes)
/// reports a frame's credits within a few of its polls, as it does within
/// a few microseconds in a loop that only polls: not after 64 polls, for
/// which a sender's tc_flush waited (258 µs where the loop turned UCX's
/// TCP worker too).
TEST_F(TwoContexts, ASlowReceiverLoopReportsCreditsWithinAFewPolls) {
  ASSERT_NO_FATAL_FAILURE(startWithOneFrame());
  unsigned Polls = 0;
  tc_peer_frames_t F = {};
  for (; Polls < 200; ++Polls) {
    tc_progress(Receiver.Ctx, nullptr);
    tc_progress(Sender.Ctx, nullptr);
    ASSERT_EQ(tc_peer_frames(Peer, &F), TC_OK);
    if (F.finished == 1)
      break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  EXPECT_EQ(stats(Receiver).frames_executed_local, 1u);
  EXPECT_EQ(F.finished, 1u) << "no credits after 200 polls\n" << describe();
  EXPECT_LT(Polls, 16u) << "the credits waited for the receiver's polls, not for time";
}

/// The same loop, counted from the frame's run: the idle report's clock is
/// read at the first and second empty poll (then the fourth, eighth, ...),
/// so a loop whose turns outlast the 5 us bound reports at its second;
/// read at every fourth poll only, a receiver that turned UCX's TCP
/// worker too (4 us a turn) answered a sender's flush after 32 us, not 8.
TEST_F(TwoContexts, ASlowReceiverLoopReportsCreditsAtItsSecondEmptyPoll) {
  ASSERT_NO_FATAL_FAILURE(startWithOneFrame());
  ASSERT_TRUE(
      progressUntil([&] { return stats(Receiver).frames_executed_local == 1; }, "the frame ran"));
  unsigned EmptyPolls = 0;
  tc_peer_frames_t F = {};
  for (; EmptyPolls < 200; ++EmptyPolls) {
    ASSERT_EQ(tc_peer_frames(Peer, &F), TC_OK);
    if (F.finished == 1)
      break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    tc_progress(Receiver.Ctx, nullptr);
  }
  EXPECT_EQ(F.finished, 1u) << "no credits after 200 polls\n" << describe();
  EXPECT_LE(EmptyPolls, 2u) << "the credits waited for polls the clock was not read at";
}

/// A sender that waits in tc_flush asks for its credits (it rings the
/// receiver's doorbell): the receiver reports them in the very turn that
/// runs the frame, not after its idle polls. Here a flush of no time
/// rings, and one turn of the receiver both runs the frame and reports.
TEST_F(TwoContexts, AFlushingSenderGetsItsCreditsInTheTurnThatRanItsFrame) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  if (!Peer->Tx->DoorbellWord)
    GTEST_SKIP() << "no doorbell to ring here (no shared memory)";
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  auto V = sumPayload(3, 7);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, V.data(), V.size() * sizeof V[0]),
            TC_OK);
  EXPECT_EQ(tc_flush(Peer, 0), TC_ERR_TIMED_OUT) << "the receiver has not run";
  tc_progress(Receiver.Ctx, nullptr);
  EXPECT_EQ(stats(Receiver).frames_executed_local, 1u);
  tc_peer_frames_t F = {};
  ASSERT_EQ(tc_peer_frames(Peer, &F), TC_OK);
  EXPECT_EQ(F.finished, 1u) << "the credits waited for idle polls\n" << describe();
}

/// More frames than the ring has slots, both modes, with the executor: when
/// tc_flush returns TC_OK every one of them has run.
TEST_F(TwoContexts, FlushReturnsOnceEveryFrameRan) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  constexpr int Frames = 200; // the ring has 64 slots: credits must come back
  int64_t Before = readTotal(Total), Expected = 0;
  for (int I = 0; I < Frames; ++I) {
    auto V = sumPayload(4, I);
    Expected += sumOf(V);
    tc_send_mode_t Mode = I % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL;
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, Mode, V.data(), V.size() * sizeof V[0]), TC_OK)
        << "frame " << I << "\n" << describe();
  }
  ASSERT_EQ(flush(), TC_OK) << describe();
  tc_stats_t R = stats(Receiver);
  EXPECT_EQ(R.frames_executed_local, uint64_t(Frames / 2));
  EXPECT_EQ(R.frames_executed_injected, uint64_t(Frames / 2));
  EXPECT_EQ(readTotal(Total) - Before, Expected);
  EXPECT_EQ(stats(Sender).frames_sent, uint64_t(Frames));
}

/// A jam that replies (tc_jam_reply): fetch_add runs on the receiver, and
/// its deliver runs on the sender when the sender progresses; whoami says
/// who sent the frame and its sequence.
TEST_F(TwoContexts, RepliesRunOnTheSender) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Memory = receiverSymbol<uint8_t>("tc_stdlib_memory");
  auto *Inbox = receiverSymbol<uint8_t>("tc_stdlib_inbox");
  auto *Deliveries = receiverSymbol<volatile uint64_t>("tc_stdlib_inbox_deliveries");
  ASSERT_TRUE(Memory && Inbox && Deliveries);
  int64_t Word = 40;
  std::memcpy(Memory + ReplyRegion, &Word, sizeof Word);
  std::memset(Inbox + ReplyRegion, 0xee, 32);
  uint64_t DeliveredBefore = *Deliveries;

  struct { uint64_t Offset; int64_t Value; uint64_t ReplyOffset; } Add = {ReplyRegion, 2,
                                                                           ReplyRegion};
  uint64_t WhoamiReply = ReplyRegion + 8;
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, element(Sender.Stdlib, "fetch_add"), TC_SEND_LOCAL, &Add,
                    sizeof Add),
            TC_OK);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, element(Sender.Stdlib, "whoami"), TC_SEND_INJECTED,
                    &WhoamiReply, sizeof WhoamiReply),
            TC_OK);
  ASSERT_TRUE(progressUntil([&] { return *Deliveries == DeliveredBefore + 2; },
                            "two replies delivered to the sender's inbox"));
  int64_t After, Old;
  std::memcpy(&After, Memory + ReplyRegion, sizeof After);
  std::memcpy(&Old, Inbox + ReplyRegion, sizeof Old);
  EXPECT_EQ(After, 42) << "fetch_add ran on the receiver";
  EXPECT_EQ(Old, 40) << "its reply carried the old value";
  struct { uint32_t Sender, Reserved; uint64_t Sequence; } Me;
  std::memcpy(&Me, Inbox + WhoamiReply, sizeof Me);
  EXPECT_EQ(Me.Sender, 1u) << "the receiver's first peer";
  EXPECT_EQ(Me.Sequence, 1u) << "the second frame on the connection";
  EXPECT_EQ(stats(Sender).frames_executed_local, 2u) << "the delivers ran on the sender";
  EXPECT_EQ(stats(Receiver).frames_executed_local, 1u);
  EXPECT_EQ(stats(Receiver).frames_executed_injected, 1u);
}

/// An element the package does not have, or one that is no jam (a ried),
/// is refused before anything leaves; the connection goes on.
TEST_F(TwoContexts, UnknownElementIsRefusedAtTheSender) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  uint32_t Ried = element(Sender.Stdlib, "array");
  uint32_t Nothing = 9999, Payload = 7;
  for (tc_send_mode_t Mode : {TC_SEND_LOCAL, TC_SEND_INJECTED, TC_SEND_INJECTED_FULL})
    for (uint32_t Element : {Nothing, Ried}) {
      EXPECT_EQ(tc_send(Peer, Sender.Stdlib, Element, Mode, &Payload, sizeof Payload),
                TC_ERR_UNKNOWN_ELEMENT)
          << "element " << Element << ", mode " << Mode;
      char Reply[8];
      size_t Size = 0;
      EXPECT_EQ(tc_call(Peer, Sender.Stdlib, Element, Mode, &Payload, sizeof Payload, Reply,
                        sizeof Reply, &Size, 100),
                TC_ERR_UNKNOWN_ELEMENT)
          << "element " << Element << ", mode " << Mode;
    }
  EXPECT_EQ(stats(Sender).frames_sent, 0u);
  EXPECT_EQ(stats(Sender).calls_answered + stats(Sender).calls_failed, 0u);
  auto Sum = sumPayload(2, 1);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, element(Sender.Stdlib, "server_side_sum"),
                    TC_SEND_LOCAL, Sum.data(), Sum.size() * sizeof Sum[0]),
            TC_OK);
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_executed_local == 1; },
                            "the receiver ran the next, good frame"));
  EXPECT_EQ(stats(Receiver).frames_rejected, 0u);
}

/// A frame of a package the receiver has not loaded reaches it and is
/// dropped there: TC_ERR_UNKNOWN_PACKAGE, in the counters and an event;
/// the ring goes on with the next frame.
TEST_F(TwoContexts, FrameOfAPackageTheReceiverLacksIsRejected) {
  Drive = Driver::TestThread;
  tc_package_t *Missing = nullptr;
  ASSERT_NO_FATAL_FAILURE(connectWithSenderOnlyPackage(Missing));
  auto *Memory = receiverSymbol<uint8_t>("tc_stdlib_memory");
  ASSERT_NE(Memory, nullptr);
  std::memset(Memory + UnknownRegion, 0, 16);

  uint32_t Lonely = element(Missing, "lonely"), Payload = 5;
  ASSERT_EQ(tc_send(Peer, Missing, Lonely, TC_SEND_LOCAL, &Payload, sizeof Payload), TC_OK);
  auto Put = putPayload(UnknownRegion, "after the drop");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, element(Sender.Stdlib, "put"), TC_SEND_LOCAL, Put.data(),
                    Put.size()),
            TC_OK);
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_executed_local == 1; },
                            "the receiver ran the frame after the dropped one"));
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + UnknownRegion), "after the drop");
  EXPECT_EQ(stats(Receiver).frames_rejected, 1u);
  tc_peer_t *Accepted = nullptr;
  ASSERT_EQ(tc_context_peer(Receiver.Ctx, 1, &Accepted), TC_OK);
  EXPECT_EQ(peerStats(Accepted).frames_rejected, 1u);
  std::vector<tc_event_t> Events = takeEvents(Receiver);
  ASSERT_EQ(Events.size(), 1u) << describe();
  EXPECT_EQ(Events[0].kind, TC_EVENT_FRAME_REJECTED);
  EXPECT_EQ(Events[0].status, TC_ERR_UNKNOWN_PACKAGE) << tc_status_string(Events[0].status);
  EXPECT_EQ(Events[0].peer, 1u);
  EXPECT_EQ(Events[0].element, Lonely);
  EXPECT_EQ(Events[0].sequence, 0u);
  EXPECT_TRUE(logged("dropped frame 0"));
  // The sender is told why, once; the dropped frame is credited like one
  // that ran.
  EXPECT_EQ(flush(), TC_ERR_UNKNOWN_PACKAGE) << "the sender was not told of the refusal";
  EXPECT_EQ(flush(), TC_OK) << "a dropped frame is credited like one that ran";
  tc_jam_fault_t Fault = {};
  ASSERT_EQ(tc_peer_last_fault(Peer, &Fault), TC_OK);
  EXPECT_EQ(Fault.kind, uint32_t(TC_JAM_REFUSED));
  EXPECT_EQ(Fault.status, TC_ERR_UNKNOWN_PACKAGE);
  EXPECT_EQ(Fault.element, Lonely);
  EXPECT_EQ(Fault.sequence, 0u);
  EXPECT_EQ(Fault.signal, 0);
}

/// The receiver writes the sender's credit line: a fault report of a frame
/// the sender never sent is false, and must not end up as a fault (or an
/// ended call) on the sender.
TEST_F(TwoContexts, FaultReportOfAFrameNeverSentIsIgnored) {
  ASSERT_NO_FATAL_FAILURE(start());
  uint32_t Put = element(Sender.Stdlib, "put");
  auto Payload = putPayload(UnknownRegion, "one frame");
  ASSERT_EQ(sendRetrying(Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
            TC_OK);
  ASSERT_EQ(flush(), TC_OK) << describe();
  // A hostile receiver's report of frame 1000 (only frame 0 was sent).
  ASSERT_NE(Peer->Tx->CreditWord, nullptr);
  Peer->Tx->CreditWord[twochains::rt::CreditWordFault] = twochains::rt::faultWord(1000, Put, 11,
                                                                                  TC_JAM_FAULTED);
  tc_jam_fault_t Fault = {};
  EXPECT_EQ(tc_peer_last_fault(Peer, &Fault), TC_ERR_INVALID_PARAM)
      << "reported a fault of frame " << Fault.sequence;
  EXPECT_EQ(stats(Sender).faults_reported, 0u);
  EXPECT_EQ(flush(), TC_OK);
  EXPECT_TRUE(logged("which this side never sent"));
}

/// A fault word naming a frame credited long ago is as false as one naming
/// a frame never sent: a true report is read before a ring of credits
/// passes it.
TEST_F(TwoContexts, FaultReportOfAFrameLongFinishedIsIgnored) {
  setSlots(4);
  ASSERT_NO_FATAL_FAILURE(start());
  // Fault words name frames by sequence: one frame a slot (no bundles).
  ASSERT_EQ(tc_peer_aggregate(Peer, 0), TC_OK);
  uint32_t Put = element(Sender.Stdlib, "put");
  auto Payload = putPayload(UnknownRegion, "a frame");
  for (int I = 0; I < 12; ++I)
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
              TC_OK);
  ASSERT_EQ(flush(), TC_OK) << describe();
  // A hostile receiver's report of frame 2, credited two rings ago.
  Peer->Tx->CreditWord[twochains::rt::CreditWordFault] = twochains::rt::faultWord(2, Put, 11,
                                                                                  TC_JAM_FAULTED);
  tc_jam_fault_t Fault = {};
  EXPECT_EQ(tc_peer_last_fault(Peer, &Fault), TC_ERR_INVALID_PARAM)
      << "reported a fault of frame " << Fault.sequence;
  EXPECT_EQ(stats(Sender).faults_reported, 0u);
  EXPECT_TRUE(logged("finished a ring of frames ago"));
}

/// A receiver that reports fault after fault costs its sender's log a few
/// lines a second, not one a report: every report is still counted.
TEST_F(TwoContexts, FaultReportsDoNotFloodTheSendersLog) {
  ASSERT_NO_FATAL_FAILURE(start());
  // Fault words name frames by sequence: one frame a slot (no bundles).
  ASSERT_EQ(tc_peer_aggregate(Peer, 0), TC_OK);
  uint32_t Put = element(Sender.Stdlib, "put");
  auto Payload = putPayload(UnknownRegion, "a frame");
  constexpr uint64_t Frames = 60;
  for (uint64_t I = 0; I < Frames; ++I)
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
              TC_OK);
  ASSERT_EQ(flush(), TC_OK) << describe();
  auto Start = std::chrono::steady_clock::now();
  tc_jam_fault_t Fault = {};
  for (uint64_t Seq = 0; Seq < Frames; ++Seq) {
    Peer->Tx->CreditWord[twochains::rt::CreditWordFault] = twochains::rt::faultWord(Seq, Put, 11,
                                                                                    TC_JAM_FAULTED);
    ASSERT_EQ(tc_peer_last_fault(Peer, &Fault), TC_OK);
    ASSERT_EQ(Fault.sequence, Seq);
  }
  auto Seconds = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::steady_clock::now() - Start).count();
  EXPECT_EQ(stats(Sender).faults_reported, Frames);
  size_t Lines = loggedCount("abandoned frame");
  EXPECT_GE(Lines, 1u);
  EXPECT_LE(Lines, twochains::rt::LogLimit::Burst * size_t(Seconds + 2)) << describe();
}

/// A peer that sends frame after frame the receiver refuses costs the
/// receiver's log a few lines a second, not one a frame: every frame is
/// still counted, and the lines let through say how many were held back.
TEST_F(TwoContexts, RefusedFramesDoNotFloodTheLog) {
  Drive = Driver::TestThread;
  tc_package_t *Missing = nullptr;
  ASSERT_NO_FATAL_FAILURE(connectWithSenderOnlyPackage(Missing));
  uint32_t Lonely = element(Missing, "lonely"), Payload = 5;
  constexpr uint64_t Frames = 400;
  auto Start = std::chrono::steady_clock::now();
  for (uint64_t I = 0; I < Frames; ++I)
    ASSERT_EQ(sendRetrying(Missing, Lonely, TC_SEND_LOCAL, &Payload, sizeof Payload), TC_OK);
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_rejected == Frames; },
                            "the receiver refused every frame"));
  auto Seconds = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::steady_clock::now() - Start).count();
  size_t Lines = loggedCount("dropped frame");
  EXPECT_GE(Lines, 1u);
  // At most a burst per second that passed (and one window begun).
  EXPECT_LE(Lines, twochains::rt::LogLimit::Burst * size_t(Seconds + 2)) << describe();
  EXPECT_LT(Lines, Frames);
}

//===----------------------------------------------------------------------===//
// (c) calls
//===----------------------------------------------------------------------===//

/// tc_call of echo, Local and Injected: the answer is the payload.
TEST_F(TwoContexts, CallReturnsTheJamsAnswer) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(start());
  uint32_t Echo = element(Sender.Calls, "echo");
  for (tc_send_mode_t Mode : {TC_SEND_LOCAL, TC_SEND_INJECTED, TC_SEND_INJECTED}) {
    std::string Question = "echo this, mode " + std::to_string(Mode);
    char Reply[64] = {};
    size_t Size = 0;
    ASSERT_EQ(tc_call(Peer, Sender.Calls, Echo, Mode, Question.data(), Question.size(), Reply,
                      sizeof Reply, &Size, WaitMs),
              TC_OK)
        << describe();
    EXPECT_EQ(std::string(Reply, Size), Question);
  }
  EXPECT_EQ(stats(Sender).calls_answered, 3u);
  EXPECT_EQ(stats(Sender).calls_failed, 0u);
  EXPECT_EQ(stats(Receiver).replies_sent, 3u);
  EXPECT_EQ(stats(Receiver).frames_executed_cached, 1u) << "the second Injected call";
}

/// An answer larger than the sender's own slot travels as a message, not a
/// frame into its ring: still the same bytes.
TEST_F(TwoContexts, CallAnswerLargerThanTheCallersSlot) {
  Drive = Driver::Executor;
  Sender.Params.slot_size = 256; // the ring answers come back into
  ASSERT_NO_FATAL_FAILURE(start());
  std::vector<uint8_t> Question(1000), Reply(2000);
  for (size_t I = 0; I < Question.size(); ++I)
    Question[I] = uint8_t(I * 7 + 3);
  size_t Size = 0;
  ASSERT_EQ(tc_call(Peer, Sender.Calls, element(Sender.Calls, "echo"), TC_SEND_LOCAL,
                    Question.data(), Question.size(), Reply.data(), Reply.size(), &Size, WaitMs),
            TC_OK)
      << describe();
  ASSERT_EQ(Size, Question.size());
  EXPECT_TRUE(std::equal(Question.begin(), Question.end(), Reply.begin()));
}

/// Many calls outstanding at once, each answered with its own bytes, with
/// the receiver progressed by a helper thread.
TEST_F(TwoContexts, ManyCallsOutstanding) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  uint32_t Echo = element(Sender.Calls, "echo");
  constexpr int Calls = 16;
  uint64_t Questions[Calls], Answers[Calls];
  tc_call_t *Pending[Calls] = {};
  for (int I = 0; I < Calls; ++I) {
    Questions[I] = 0x1000 + uint64_t(I) * 0x10001;
    Answers[I] = 0;
    ASSERT_EQ(tc_call_start(Peer, Sender.Calls, Echo, I % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL,
                            &Questions[I], sizeof Questions[I], &Answers[I], sizeof Answers[I],
                            &Pending[I]),
              TC_OK)
        << "call " << I;
  }
  whileReceiverRuns([&] {
    // Waited for last first: the others are answered meanwhile.
    for (int I = Calls - 1; I >= 0; --I) {
      size_t Size = 0;
      EXPECT_EQ(tc_call_wait(Pending[I], WaitMs, &Size), TC_OK) << "call " << I;
      EXPECT_EQ(Size, sizeof(uint64_t));
    }
  });
  for (int I = 0; I < Calls; ++I) {
    EXPECT_EQ(Answers[I], Questions[I]) << "call " << I;
    tc_call_release(Pending[I]);
  }
  EXPECT_EQ(stats(Sender).calls_answered, uint64_t(Calls));
  EXPECT_EQ(stats(Receiver).replies_sent, uint64_t(Calls));
}

/// An answer larger than the call's capacity ends it with TC_ERR_TOO_LARGE
/// (nothing copied); one that fits exactly is taken.
TEST_F(TwoContexts, ReplyCapacityTooSmallIsTooLarge) {
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(start());
  uint32_t Echo = element(Sender.Calls, "echo");
  const char Question[32] = "thirty-one bytes and a NUL byte";
  char Reply[sizeof Question];
  std::memset(Reply, '#', sizeof Reply);
  size_t Size = 12345;
  EXPECT_EQ(tc_call(Peer, Sender.Calls, Echo, TC_SEND_LOCAL, Question, sizeof Question, Reply,
                    sizeof Question - 1, &Size, WaitMs),
            TC_ERR_TOO_LARGE)
      << describe();
  EXPECT_EQ(Size, 12345u) << "outputs are set only on success";
  EXPECT_EQ(Reply[0], '#') << "nothing of an answer too large is copied";
  EXPECT_EQ(stats(Sender).calls_failed, 1u);
  EXPECT_TRUE(logged("the call allowed 31"));
  ASSERT_EQ(tc_call(Peer, Sender.Calls, Echo, TC_SEND_INJECTED, Question, sizeof Question, Reply,
                    sizeof Question, &Size, WaitMs),
            TC_OK);
  EXPECT_EQ(Size, sizeof Question);
  EXPECT_STREQ(Reply, Question);
  EXPECT_EQ(stats(Sender).calls_answered, 1u);
}

//===----------------------------------------------------------------------===//
// (d) frames and slots
//===----------------------------------------------------------------------===//

/// The largest payload a frame without code carries in a slot of Bytes.
size_t largestPayload(size_t Bytes) {
  size_t P = 0;
  while (twochains::rt::imagelessFrameSize(P + 1) <= Bytes)
    ++P;
  return P;
}

/// Frames are sized against the receiver's slots (here 256 bytes, the
/// sender's own 4096): the largest payload that fits runs; four bytes more
/// is TC_ERR_TOO_LARGE in every mode, and for a call, and nothing is sent.
TEST_F(TwoContexts, FrameTooLargeForTheReceiversSlot) {
  Drive = Driver::Executor;
  Receiver.Params.slot_size = 256;
  // A receiver that takes no payloads ahead of their frames (else a larger
  // payload goes ahead: PayloadAheadTest.cpp).
  Receiver.Params.payload_ahead_bytes = TC_NO_PAYLOADS_AHEAD;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  size_t Fits = largestPayload(256) / 4 * 4;
  ASSERT_GT(Fits, 64u);
  auto Fitting = sumPayload(Fits / 4, 1), TooMany = sumPayload(Fits / 4 + 1, 1);

  int64_t Before = readTotal(Total);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, Fitting.data(), Fits), TC_OK);
  ASSERT_EQ(flush(), TC_OK);
  EXPECT_EQ(readTotal(Total) - Before, sumOf(Fitting));
  EXPECT_EQ(stats(Sender).frames_sent, 1u);

  for (tc_send_mode_t Mode : {TC_SEND_LOCAL, TC_SEND_INJECTED, TC_SEND_INJECTED_FULL}) {
    EXPECT_EQ(tc_send(Peer, Sender.Stdlib, Sum, Mode, TooMany.data(), Fits + 4), TC_ERR_TOO_LARGE)
        << "mode " << Mode;
    char Reply[8];
    size_t Size;
    EXPECT_EQ(tc_call(Peer, Sender.Calls, element(Sender.Calls, "echo"), Mode, TooMany.data(),
                      Fits + 4, Reply, sizeof Reply, &Size, 100),
              TC_ERR_TOO_LARGE)
        << "mode " << Mode;
  }
  // The code does not fit beside a payload that fills the slot: carried in
  // every frame (INJECTED_FULL), it never goes.
  EXPECT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_INJECTED_FULL, Fitting.data(), Fits),
            TC_ERR_TOO_LARGE);
  EXPECT_EQ(stats(Sender).frames_sent, 1u) << "nothing more was sent";
  EXPECT_TRUE(logged("the receiver's slots hold 256"));
}

} // namespace

/// The descriptor this process holds for the shared-memory segment mapped
/// at Address (UCX's POSIX segments are kept open by their owner), or -1.
static int segmentDescriptorAt(const void *Address) {
  uint64_t Inode = 0;
  for (const twochains::rt::SharedMapping &M : twochains::rt::sharedMappings())
    if (uintptr_t(Address) >= M.Begin && uintptr_t(Address) < M.End)
      Inode = M.Inode;
  DIR *D = Inode ? opendir("/proc/self/fd") : nullptr;
  int Found = -1;
  while (D && Found < 0)
    if (dirent *E = readdir(D)) {
      struct stat St;
      int Fd = std::atoi(E->d_name);
      if (E->d_name[0] != '.' && fstat(Fd, &St) == 0 && St.st_ino == Inode && S_ISREG(St.st_mode))
        Found = Fd;
    } else {
      break;
    }
  if (D)
    closedir(D);
  return Found;
}

/// A receiver that truncates its ring's segment after the handshake makes
/// the sender's next store into it fault outside any jam (SIGBUS). The
/// sender survives: the store lands in private pages, and the peer ends.
TEST_F(TwoContexts, APeerThatShrinksItsSegmentIsEndedNotACrash) {
  Drive = Driver::TestThread;
  // UCX allocates rings from SysV first, which cannot shrink; a hostile
  // receiver allocates from POSIX shared memory, which can.
  const char *Saved = std::getenv("UCX_ALLOC_PRIO");
  std::string Prio = Saved ? Saved : "";
  setenv("UCX_ALLOC_PRIO", "md:posix,mmap,heap", 1);
  ASSERT_NO_FATAL_FAILURE(start());
  if (Saved)
    setenv("UCX_ALLOC_PRIO", Prio.c_str(), 1);
  else
    unsetenv("UCX_ALLOC_PRIO");
  if (!Peer->Tx->RingDirect)
    GTEST_SKIP() << "no direct stores here (the ring is not mapped into this process)";
  int Fd = segmentDescriptorAt(Peer->Tx->RingDirect);
  if (Fd < 0)
    GTEST_SKIP() << "the ring's segment is not a POSIX file here (SysV segments cannot shrink)";
  struct stat Before;
  ASSERT_EQ(fstat(Fd, &Before), 0);
  // The hostile receiver: its ring's segment is now empty. Only the sender
  // runs from here on (the receiver's own reads of it would fault too).
  ASSERT_EQ(ftruncate(Fd, 0), 0);
  uint32_t Put = element(Sender.Stdlib, "put");
  auto Payload = putPayload(UnknownRegion, "into a shrunk ring");
  (void)tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size());
  for (int I = 0; I < 1000 && !Peer->Failed; ++I)
    tc_progress(Sender.Ctx, nullptr);
  EXPECT_TRUE(Peer->Failed) << describe();
  EXPECT_TRUE(logged("shrank its shared memory")) << describe();
  EXPECT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
            TC_ERR_IO);
  // The receiver's own mapping works again for the teardown.
  ASSERT_EQ(ftruncate(Fd, Before.st_size), 0);
}
