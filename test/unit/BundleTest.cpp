//===- BundleTest.cpp - Small frames gathered into bundles ----------------===//
//
// The bundle's wire format (wire/Bundle.h) and the bundle frame's checks,
// then aggregation between two contexts over shared memory: frames sent
// while the receiver is behind leave in bundles and run in the order sent,
// a bad frame among good ones refuses only itself, a full ring mid-bundle
// loses nothing, replies come back from bundled frames, a receiver gone
// mid-bundle is an error and no crash, and tc_peer_aggregate turns it off;
// over messages (TCP), frames to a receiver that is behind leave in
// batches, in order, and tc_peer_aggregate turns that off too.
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "path/FramePath.h"
#include "send/Bundle.h"
#include "wire/Bundle.h"
#include "wire/Frame.h"

#include <gtest/gtest.h>
#include <cstring>
#include <vector>

using namespace twochains::rt;

namespace {

constexpr size_t SlotSize = 4096;

struct alignas(64) Slot {
  uint8_t Bytes[SlotSize] = {};
};

} // namespace

TEST(Bundle, FramesAppendedAreThereAtOnceAndTheSealEndsThem) {
  Slot S;
  uint32_t V = 0;
  openBundle(S.Bytes, SlotSize, 7, 3, sizeof V, 11, &V);
  BundleHeader H;
  ASSERT_EQ(readBundleHeader(S.Bytes, SlotSize, 11, H), TC_OK);
  EXPECT_EQ(H.Package, 7u);
  EXPECT_EQ(H.Element, 3u);
  EXPECT_EQ(H.Size, 4u);
  EXPECT_EQ(H.Stride, 8u);
  EXPECT_EQ(H.Capacity, (SlotSize - 72) / 8);
  EXPECT_TRUE(bundleBegun(S.Bytes, SlotSize));
  EXPECT_TRUE(frameBegun(S.Bytes, 11)) << "an idle receiver's one load sees it";
  EXPECT_EQ(bundleCount(S.Bytes, H), 1u);
  for (V = 1; V < 5; ++V)
    appendToBundle(S.Bytes, H.Stride, V, &V, sizeof V);
  EXPECT_EQ(bundleCount(S.Bytes, H), 5u);
  EXPECT_FALSE(bundleSealed(S.Bytes, SlotSize, 11));
  sealBundle(S.Bytes, SlotSize, 11);
  EXPECT_TRUE(bundleSealed(S.Bytes, SlotSize, 11));
  EXPECT_FALSE(bundleSealed(S.Bytes, SlotSize, 12));
  for (uint32_t I = 0; I < 5; ++I) {
    uint32_t Got;
    std::memcpy(&Got, S.Bytes + FrameLine + I * H.Stride, sizeof Got);
    EXPECT_EQ(Got, I);
  }
  // Its slot is no frame of any other kind: only the bundle's own path
  // runs it.
  FrameView View;
  EXPECT_NE(checkFrame(S.Bytes, SlotSize, 11, &View), TC_OK);
  alignas(64) static uint8_t Private[SlotSize];
  EXPECT_NE(captureFrame(S.Bytes, SlotSize, 11, Private, &View), TC_OK);
  EXPECT_FALSE(captureMarkedFrame(S.Bytes, SlotSize, 11, Private, &View));
}

TEST(Bundle, AHeaderOutOfItsBoundsIsRefused) {
  struct Case {
    const char *What;
    size_t Word;
    uint64_t Value;
    tc_status_t Expect;
  } Cases[] = {
      {"kind", 0, headerWord(FrameLocal, SlotSize / FrameLine), TC_ERR_BAD_KIND},
      {"lines other than the slot's", 0, headerWord(FrameBundle, 2), TC_ERR_BAD_KIND},
      {"sequence", 2, 12, TC_ERR_SEQUENCE},
      {"payload over the bound", 3, uint64_t(MaxBundledPayload + 1) << 32, TC_ERR_BAD_LENGTH},
      {"an image", 5, uint64_t(FrameLine) << 32 | 64, TC_ERR_BAD_LENGTH},
      {"payloads elsewhere", 5, uint64_t(2 * FrameLine) << 32, TC_ERR_BAD_LENGTH},
      {"flags", 6, 1, TC_ERR_BAD_LENGTH},
      {"echo of another sequence", 7, echoWord(12), TC_ERR_INCOMPLETE},
  };
  for (const Case &C : Cases) {
    Slot S;
    uint64_t V = 1;
    openBundle(S.Bytes, SlotSize, 7, 3, sizeof V, 11, &V);
    std::memcpy(S.Bytes + 8 * C.Word, &C.Value, 8);
    BundleHeader H = {};
    EXPECT_EQ(readBundleHeader(S.Bytes, SlotSize, 11, H), C.Expect) << C.What;
    EXPECT_EQ(H.Capacity, 0u) << C.What << ": no output unless accepted";
  }
}

TEST(Bundle, TheCountIsBelievedUpToTheCapacity) {
  Slot S;
  uint64_t V = 1;
  openBundle(S.Bytes, SlotSize, 7, 3, sizeof V, 11, &V);
  BundleHeader H;
  ASSERT_EQ(readBundleHeader(S.Bytes, SlotSize, 11, H), TC_OK);
  uint64_t Lie = ~0ull;
  std::memcpy(S.Bytes + BundleCountOffset, &Lie, sizeof Lie);
  EXPECT_EQ(bundleCount(S.Bytes, H), H.Capacity);
  EXPECT_LE(FrameLine + size_t(H.Capacity) * H.Stride, SlotSize - FrameTrailerSize);
  // The largest payload: still inside the slot.
  std::vector<uint8_t> Big(MaxBundledPayload, 5);
  openBundle(S.Bytes, SlotSize, 7, 3, uint32_t(Big.size()), 12, Big.data());
  ASSERT_EQ(readBundleHeader(S.Bytes, SlotSize, 12, H), TC_OK);
  EXPECT_LE(FrameLine + size_t(H.Capacity) * H.Stride, SlotSize - FrameTrailerSize);
  EXPECT_EQ(bundleCapacity(64, 8), 0u) << "a slot of one line holds none";
}

namespace {

/// Where in the receiver's stdlib memory the replies' test keeps its word
/// (apart from TwoContextsTest.cpp's regions).
constexpr uint64_t BundleReplyRegion = 20480;

/// Two contexts whose receiver runs only when the test lets it: frames
/// sent meanwhile find it behind.
class Bundles : public TwoContexts {
public:
  void SetUp() override {
    TwoContexts::SetUp();
    Drive = Driver::TestThread;
  }

  /// The receiver's log (stdlib ried_log) from byte From: the records'
  /// payloads as 32-bit values.
  std::vector<uint32_t> logFrom(uint64_t From) {
    auto Data = reinterpret_cast<const uint8_t *(*)()>(receiverSymbol<void>("tc_stdlib_log_data"));
    auto Used = reinterpret_cast<uint64_t (*)()>(receiverSymbol<void>("tc_stdlib_log_bytes"));
    std::vector<uint32_t> Out;
    if (!Data || !Used)
      return Out;
    const uint8_t *Log = Data();
    for (uint64_t At = From; At + 8 <= Used();) {
      uint32_t Length, Value = 0;
      std::memcpy(&Length, Log + At, 4);
      if (Length == 4)
        std::memcpy(&Value, Log + At + 4, 4);
      Out.push_back(Length == 4 ? Value : ~0u);
      At += 4 + Length;
    }
    return Out;
  }
  /// The receiver's log from byte From holds the appends 0..Count-1, in
  /// order. Call under ASSERT_NO_FATAL_FAILURE.
  void expectAppendsInOrder(uint64_t From, uint32_t Count) {
    std::vector<uint32_t> Log = logFrom(From);
    ASSERT_EQ(Log.size(), Count) << describe();
    for (uint32_t I = 0; I < Count; ++I)
      ASSERT_EQ(Log[I], I) << "the log's record " << I;
  }
  uint64_t logBytes() {
    auto Used = reinterpret_cast<uint64_t (*)()>(receiverSymbol<void>("tc_stdlib_log_bytes"));
    return Used ? Used() : 0;
  }

  /// Count appends sent to a receiver held back, then a flush: each ran
  /// once, in order. Call under ASSERT_NO_FATAL_FAILURE.
  void sendAppendsAndExpectThemRunInOrder(uint32_t Count) {
    uint64_t From = logBytes();
    uint64_t Before = stats(Receiver).frames_executed_local;
    ASSERT_NO_FATAL_FAILURE(sendAppends(Count));
    ASSERT_EQ(flush(), TC_OK) << describe();
    ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, Count));
    EXPECT_EQ(stats(Receiver).frames_executed_local - Before, Count);
  }

  /// start() over TCP alone, with rings of 16 slots: frames by message.
  /// Skips where frames travel by RMA even so. Call under
  /// ASSERT_NO_FATAL_FAILURE, then return if IsSkipped().
  void startOverMessages() {
    ScopedEnv Tcp("UCX_TLS", "tcp");
    setSlots(16);
    ASSERT_NO_FATAL_FAILURE(start());
    if (Peer->Path != PathAm)
      GTEST_SKIP() << "frames travel by RMA here, even over TCP";
  }

  /// Sends Count appends of 0..Count-1 without letting the receiver run,
  /// except where the ring is full (sendRetrying).
  void sendAppends(uint32_t Count, unsigned *Refused = nullptr) {
    uint32_t Append = element(Sender.Stdlib, "append");
    for (uint32_t I = 0; I < Count; ++I) {
      tc_status_t St = tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I);
      if (St == TC_ERR_NO_CREDIT) {
        if (Refused)
          ++*Refused;
        St = sendRetrying(Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I);
      }
      ASSERT_EQ(St, TC_OK) << "frame " << I << "\n" << describe();
    }
  }
};

} // namespace

TEST_F(Bundles, FramesToABusyReceiverLeaveInBundlesAndRunInOrder) {
  setSlots(16);
  ASSERT_NO_FATAL_FAILURE(start());
  constexpr uint32_t Count = 3000;
  ASSERT_NO_FATAL_FAILURE(sendAppendsAndExpectThemRunInOrder(Count));
  EXPECT_EQ(stats(Sender).frames_sent, Count);
  uint64_t Coalesced = stats(Sender).frames_coalesced;
  EXPECT_GT(Coalesced, Count / 2) << "most frames left in bundles\n" << describe();
  tc_peer_frames_t F = {};
  ASSERT_EQ(tc_peer_frames(Peer, &F), TC_OK);
  EXPECT_EQ(F.sent, Count) << "counted in frames, not slots";
  EXPECT_EQ(F.finished, Count);
  EXPECT_EQ(F.queued, 0u);
}

/// The same under TC_CODE_TRUST_JOB, whose jams read their payload where
/// it landed in the ring: the bundle's records are read there too.
TEST_F(Bundles, UnderTheJobPolicyBundledFramesRunInTheRing) {
  setSlots(16);
  Receiver.Params.code_trust = TC_CODE_TRUST_JOB;
  ASSERT_NO_FATAL_FAILURE(start());
  uint64_t From = logBytes();
  constexpr uint32_t Count = 2000;
  ASSERT_NO_FATAL_FAILURE(sendAppends(Count));
  ASSERT_EQ(flush(), TC_OK) << describe();
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, Count));
  EXPECT_GT(stats(Sender).frames_coalesced, Count / 2) << describe();
}

/// A ring of 4 slots fills while bundles wait: tc_send says
/// TC_ERR_NO_CREDIT, nothing is lost or run twice.
TEST_F(Bundles, AFullRingMidBundleLosesNothing) {
  setSlots(4);
  ASSERT_NO_FATAL_FAILURE(start());
  uint64_t From = logBytes();
  constexpr uint32_t Count = 5000;
  unsigned Refused = 0;
  ASSERT_NO_FATAL_FAILURE(sendAppends(Count, &Refused));
  ASSERT_EQ(flush(), TC_OK) << describe();
  EXPECT_GT(Refused, 0u) << "the ring was full at times";
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, Count));
  EXPECT_GT(stats(Sender).frames_coalesced, 0u);
}

/// A frame of a package the receiver lacks, between good ones that go in
/// bundles: refused alone, told to the sender; the others run, in order.
TEST_F(Bundles, ABadFrameAmongGoodOnesRefusesOnlyItself) {
  setSlots(32); // every frame of the other package seals a bundle and takes a slot
  tc_package_t *Missing = nullptr;
  ASSERT_NO_FATAL_FAILURE(connectWithSenderOnlyPackage(Missing));
  uint64_t From = logBytes();
  uint32_t Append = element(Sender.Stdlib, "append"), Lonely = element(Missing, "lonely");
  // The receiver behind first: a quarter of its ring not yet run.
  for (uint32_t I = 0; I < 2; ++I)
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
  for (uint32_t I = 2; I < 40; ++I) {
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
    if (I % 10 == 5)
      ASSERT_EQ(tc_send(Peer, Missing, Lonely, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
  }
  EXPECT_EQ(tc_flush(Peer, 1), TC_ERR_TIMED_OUT) << "nothing ran yet";
  EXPECT_EQ(flush(), TC_ERR_UNKNOWN_PACKAGE) << describe();
  std::vector<uint32_t> Log = logFrom(From);
  ASSERT_EQ(Log.size(), 40u) << describe();
  for (uint32_t I = 0; I < 40; ++I)
    EXPECT_EQ(Log[I], I);
  EXPECT_EQ(stats(Receiver).frames_rejected, 4u) << describe();
  EXPECT_EQ(stats(Receiver).frames_executed_local, 40u);
  EXPECT_GT(stats(Sender).frames_coalesced, 0u) << "the good frames went in bundles";
  EXPECT_TRUE(logged("dropped frame"));
}

/// Jams of bundled frames reply to the sender: every reply comes back.
TEST_F(Bundles, RepliesComeBackFromBundledFrames) {
  setSlots(8);
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Memory = receiverSymbol<uint8_t>("tc_stdlib_memory");
  auto *Deliveries = receiverSymbol<volatile uint64_t>("tc_stdlib_inbox_deliveries");
  ASSERT_TRUE(Memory && Deliveries);
  int64_t Zero = 0;
  std::memcpy(Memory + BundleReplyRegion, &Zero, sizeof Zero);
  uint64_t DeliveredBefore = *Deliveries;
  uint32_t FetchAdd = element(Sender.Stdlib, "fetch_add");
  constexpr int Count = 200;
  struct {
    uint64_t Offset;
    int64_t Value;
    uint64_t ReplyOffset;
  } Add = {BundleReplyRegion, 1, BundleReplyRegion + 8};
  for (int I = 0; I < Count; ++I)
    ASSERT_EQ(sendRetrying(Sender.Stdlib, FetchAdd, TC_SEND_LOCAL, &Add, sizeof Add), TC_OK);
  ASSERT_TRUE(progressUntil([&] { return *Deliveries == DeliveredBefore + Count; },
                            "every reply delivered to the sender's inbox"))
      << describe();
  int64_t After;
  std::memcpy(&After, Memory + BundleReplyRegion, sizeof After);
  EXPECT_EQ(After, Count) << "each fetch_add ran once";
  EXPECT_GT(stats(Sender).frames_coalesced, 0u) << describe();
}

/// tc_peer_aggregate(peer, 0): every frame takes a slot of its own again.
TEST_F(Bundles, TurnedOffForAPeerEveryFrameLeavesAlone) {
  setSlots(16);
  ASSERT_NO_FATAL_FAILURE(start());
  ASSERT_EQ(tc_peer_aggregate(Peer, 0), TC_OK);
  uint64_t From = logBytes();
  ASSERT_NO_FATAL_FAILURE(sendAppends(500));
  ASSERT_EQ(flush(), TC_OK) << describe();
  EXPECT_EQ(logFrom(From).size(), 500u);
  EXPECT_EQ(stats(Sender).frames_coalesced, 0u);
  EXPECT_EQ(tc_peer_aggregate(nullptr, 1), TC_ERR_INVALID_PARAM);
}

/// The receiver goes away with a bundle open: the sender's next turn
/// finds the peer gone, its sends and flush say TC_ERR_IO; no crash.
TEST_F(Bundles, AReceiverGoneMidBundleIsAnErrorNotACrash) {
  setSlots(16);
  ASSERT_NO_FATAL_FAILURE(start());
  uint32_t Append = element(Sender.Stdlib, "append");
  for (uint32_t I = 0; I < 30; ++I)
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
  ASSERT_TRUE(twochains::rt::bundleOpen(Peer)) << describe();
  tc_context_destroy(Receiver.Ctx);
  Receiver.Ctx = nullptr;
  tc_status_t St = TC_OK;
  for (int I = 0; I < 2000 && St == TC_OK; ++I) {
    tc_progress(Sender.Ctx, nullptr);
    uint32_t V = 1000 + I;
    St = tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &V, sizeof V);
    if (St == TC_ERR_NO_CREDIT)
      St = TC_OK;
    usleep(1000);
  }
  EXPECT_EQ(St, TC_ERR_IO) << describe();
  EXPECT_EQ(tc_flush(Peer, 100), TC_ERR_IO);
}

/// A jam that faults in the middle of a bundle's run is abandoned alone:
/// the frames before and after it in the run run, in order, and the
/// sender hears of the fault.
TEST_F(Bundles, AFrameThatFaultsMidRunIsAbandonedAlone) {
  setSlots(8);
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Count = receiverSymbol<volatile uint64_t>("tc_unit_tally_count", Receiver.Calls);
  auto *Last = receiverSymbol<volatile uint64_t>("tc_unit_tally_last", Receiver.Calls);
  ASSERT_TRUE(Count && Last);
  *Count = 0;
  *Last = 0;
  uint32_t Tally = element(Sender.Calls, "tally");
  constexpr uint32_t Frames = 300, Dead = 0xdead;
  unsigned Faults = 0;
  for (uint32_t V = 1; V <= Frames; ++V) {
    ASSERT_EQ(sendRetrying(Sender.Calls, Tally, TC_SEND_LOCAL, &V, sizeof V), TC_OK);
    if (V % 120 == 0) { // two: a third would quarantine the element
      ASSERT_EQ(sendRetrying(Sender.Calls, Tally, TC_SEND_LOCAL, &Dead, sizeof Dead), TC_OK);
      ++Faults;
    }
  }
  EXPECT_EQ(flush(), TC_ERR_JAM_FAULT) << describe();
  EXPECT_EQ(*Count, Frames) << describe();
  EXPECT_EQ(*Last, Frames) << "the frames ran in the order sent";
  EXPECT_EQ(stats(Receiver).jams_faulted, Faults);
  EXPECT_GT(stats(Sender).frames_coalesced, 0u) << "the faulting frames were bundled";
  EXPECT_TRUE(logged("abandoned frame"));
}

/// A stream of tc_send_wait takes turns of its context while it lasts:
/// frames that came to the sender meanwhile run, though the application
/// never progresses and no send waited for credit.
TEST_F(Bundles, AStreamOfWaitingSendsRunsWhatArrivesMeanwhile) {
  setSlots(16);
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer_t *Back = nullptr;
  ASSERT_EQ(tc_context_peer(Receiver.Ctx, 1, &Back), TC_OK);
  uint32_t Append = element(Receiver.Stdlib, "append");
  for (uint32_t I = 0; I < 10; ++I)
    ASSERT_EQ(tc_send(Back, Receiver.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
  ASSERT_EQ(tc_progress(Receiver.Ctx, nullptr), TC_OK); // what it bundled leaves
  ASSERT_EQ(stats(Sender).frames_executed_local, 0u);
  uint32_t Forward = element(Sender.Stdlib, "append");
  for (uint32_t I = 0; I < 2048; ++I)
    ASSERT_EQ(tc_send_wait(Peer, Sender.Stdlib, Forward, TC_SEND_LOCAL, &I, sizeof I, WaitMs),
              TC_OK);
  EXPECT_EQ(stats(Sender).frames_executed_local, 10u) << describe();
  EXPECT_EQ(flush(), TC_OK) << describe();
}

/// The turns a stream of tc_send_wait takes leave its bundle open: the
/// frames fill their slots, and the stream takes no more slots than they
/// need (a bundle sealed at each turn would leave most of its slot empty).
TEST_F(Bundles, AStreamOfWaitingSendsFillsItsSlots) {
  setSlots(64);
  ASSERT_NO_FATAL_FAILURE(start());
  uint64_t From = logBytes();
  uint32_t Append = element(Sender.Stdlib, "append");
  constexpr uint32_t Count = 3 * 1024; // three turns of the stream at least
  for (uint32_t I = 0; I < Count; ++I)
    ASSERT_EQ(tc_send_wait(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I, WaitMs),
              TC_OK);
  ASSERT_TRUE(twochains::rt::bundleOpen(Peer)) << describe();
  uint64_t Slots = Peer->Tx->Send->next();
  uint32_t Alone = 64 / 8; // before the receiver is behind
  uint32_t Capacity = bundleCapacity(Peer->Tx->SlotSize, sizeof(uint32_t));
  EXPECT_LE(Slots, Alone + (Count - Alone + Capacity - 1) / Capacity) << describe();
  ASSERT_EQ(flush(), TC_OK) << describe();
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, Count));
}

/// Frames that went into a bundle run though the sender never calls the
/// library again (a program that sends, then waits in MPI): the receiver
/// alone takes them, and the bundle's slot once the sender seals it.
TEST_F(Bundles, BundledFramesRunWithoutTheSendersNextCall) {
  setSlots(16);
  ASSERT_NO_FATAL_FAILURE(start());
  uint64_t From = logBytes();
  uint32_t Append = element(Sender.Stdlib, "append");
  constexpr uint32_t Count = 300;
  for (uint32_t I = 0; I < Count; ++I)
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
  ASSERT_TRUE(twochains::rt::bundleOpen(Peer)) << describe();
  // Only the receiver runs from here on.
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(WaitMs);
  while (logFrom(From).size() < Count && std::chrono::steady_clock::now() < Deadline)
    tc_progress(Receiver.Ctx, nullptr);
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, Count));
  EXPECT_EQ(flush(), TC_OK) << describe();
  EXPECT_GT(stats(Sender).frames_coalesced, Count / 2);
}

//===----------------------------------------------------------------------===//
// Over messages (UCX_TLS=tcp): frames gathered into batches
//===----------------------------------------------------------------------===//

/// Frames by message to a receiver that is behind leave many to a message
/// (the batch of tc_peer_cork, without corking) and run once each, in the
/// order sent.
TEST_F(Bundles, OverMessagesFramesToABusyReceiverLeaveInBatchesAndRunInOrder) {
  ASSERT_NO_FATAL_FAILURE(startOverMessages());
  if (IsSkipped())
    return;
  constexpr uint32_t Count = 3000;
  ASSERT_NO_FATAL_FAILURE(sendAppendsAndExpectThemRunInOrder(Count));
  // Half the ring goes frame by frame before the receiver is behind, each
  // time the credits come back: about half the frames are batched.
  EXPECT_GT(stats(Sender).frames_coalesced, Count / 4) << "frames left in batches\n" << describe();
  EXPECT_EQ(stats(Receiver).frames_rejected, 0u);
}

/// A call after gathered frames leaves at once (the batch before it) and
/// is answered; the frames before it have all run.
TEST_F(Bundles, OverMessagesACallAfterGatheredFramesIsAnsweredAfterThem) {
  ASSERT_NO_FATAL_FAILURE(startOverMessages());
  if (IsSkipped())
    return;
  uint64_t From = logBytes();
  ASSERT_NO_FATAL_FAILURE(sendAppends(12)); // behind from the 3rd: gathered
  EXPECT_GT(Peer->Tx->BatchFrames, 0u) << "frames wait in the batch";
  uint32_t Echo = element(Sender.Calls, "echo");
  const char Question[] = "after the batch";
  char Reply[64] = {};
  size_t Size = 0;
  ASSERT_EQ(whileReceiverRuns([&] {
              return tc_call(Peer, Sender.Calls, Echo, TC_SEND_LOCAL, Question, sizeof Question,
                             Reply, sizeof Reply, &Size, WaitMs);
            }),
            TC_OK)
      << describe();
  EXPECT_EQ(std::string(Reply, Size), std::string(Question, sizeof Question));
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, 12));
}

/// Over messages too, while the sender keeps sending, a gathered frame
/// waits at most about GatherAgeUs: the batch leaves when the next frame
/// comes after that.
TEST_F(Bundles, OverMessagesAGatheredFrameLeavesWithTheNextOnceItIsOld) {
  ASSERT_NO_FATAL_FAILURE(startOverMessages());
  if (IsSkipped())
    return;
  uint64_t From = logBytes();
  uint32_t Append = element(Sender.Stdlib, "append");
  uint32_t I = 0;
  for (; I < 8 && !Peer->Tx->BatchFrames; ++I)
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
  ASSERT_GT(Peer->Tx->BatchFrames, 0u) << "frames wait in the batch\n" << describe();
  uint64_t Sent = stats(Sender).frames_sent;
  std::this_thread::sleep_for(std::chrono::microseconds(50 * GatherAgeUs));
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
  ++I;
  EXPECT_EQ(Peer->Tx->BatchFrames, 1u) << "the old batch left\n" << describe();
  EXPECT_EQ(stats(Sender).frames_sent, Sent + 1);
  ASSERT_EQ(flush(), TC_OK) << describe();
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, I));
}

/// A corked peer's batch has no age bound: its frames wait for the
/// uncork (or a flush, or a full batch), however slowly they come.
TEST_F(Bundles, OverMessagesACorkedBatchWaitsWhateverItsAge) {
  ASSERT_NO_FATAL_FAILURE(startOverMessages());
  if (IsSkipped())
    return;
  uint64_t From = logBytes();
  ASSERT_EQ(tc_peer_cork(Peer, 1), TC_OK);
  uint32_t Append = element(Sender.Stdlib, "append");
  for (uint32_t I = 0; I < 2; ++I) {
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Append, TC_SEND_LOCAL, &I, sizeof I), TC_OK);
    std::this_thread::sleep_for(std::chrono::microseconds(50 * GatherAgeUs));
  }
  EXPECT_EQ(Peer->Tx->BatchFrames, 2u) << "both wait in the batch\n" << describe();
  ASSERT_EQ(tc_peer_cork(Peer, 0), TC_OK);
  ASSERT_EQ(flush(), TC_OK) << describe();
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, 2));
}

/// tc_peer_aggregate(peer, 0) over messages: every frame leaves alone.
TEST_F(Bundles, OverMessagesTurnedOffForAPeerEveryFrameLeavesAlone) {
  ASSERT_NO_FATAL_FAILURE(startOverMessages());
  if (IsSkipped())
    return;
  ASSERT_EQ(tc_peer_aggregate(Peer, 0), TC_OK);
  uint64_t From = logBytes();
  ASSERT_NO_FATAL_FAILURE(sendAppends(500));
  ASSERT_EQ(flush(), TC_OK) << describe();
  ASSERT_NO_FATAL_FAILURE(expectAppendsInOrder(From, 500));
  EXPECT_EQ(stats(Sender).frames_coalesced, 0u);
}
