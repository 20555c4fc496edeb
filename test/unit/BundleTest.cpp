//===- BundleTest.cpp - Small frames gathered into bundles ----------------===//
//
// The bundle's wire format (wire/Bundle.h) and the bundle frame's checks,
// then aggregation between two contexts over shared memory: frames sent
// while the receiver is behind leave in bundles and run in the order sent,
// a bad frame among good ones refuses only itself, a full ring mid-bundle
// loses nothing, replies come back from bundled frames, a receiver gone
// mid-bundle is an error and no crash, and tc_peer_aggregate turns it off.
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "send/Bundle.h"
#include "wire/Bundle.h"
#include "wire/Frame.h"

#include <gtest/gtest.h>
#include <cstring>
#include <vector>

using namespace twochains::rt;

namespace {

std::vector<BundleRecord> readAll(const uint8_t *Runs, size_t Size, BundleReader::Next &Last) {
  BundleReader R(Runs, Size);
  std::vector<BundleRecord> Out;
  BundleRecord Rec;
  while ((Last = R.next(Rec)) == BundleReader::Next::Record)
    Out.push_back(Rec);
  return Out;
}

} // namespace

TEST(Bundle, RecordsOfOneElementShareARunAndComeBackInOrder) {
  std::vector<uint8_t> Bytes(512);
  BundleBuilder B;
  B.reset(Bytes.data(), Bytes.size());
  for (uint32_t I = 0; I < 5; ++I)
    ASSERT_TRUE(B.append(7, 1, &I, sizeof I));
  uint64_t Wide = 99;
  ASSERT_TRUE(B.append(7, 2, &Wide, sizeof Wide)); // another element: a run of its own
  ASSERT_TRUE(B.append(8, 1, nullptr, 0));         // another package, no payload
  EXPECT_EQ(B.frames(), 7u);
  // Three runs: 3 headers, five 4-byte records at 8 bytes each, 8, and 8.
  EXPECT_EQ(B.size(), 3 * sizeof(BundleRun) + 5 * 8 + 8 + 8);
  BundleReader::Next Last;
  std::vector<BundleRecord> Got = readAll(B.data(), B.size(), Last);
  EXPECT_EQ(Last, BundleReader::Next::End);
  ASSERT_EQ(Got.size(), 7u);
  for (uint32_t I = 0; I < 5; ++I) {
    uint32_t V;
    std::memcpy(&V, Got[I].Payload, sizeof V);
    EXPECT_EQ(V, I);
    EXPECT_EQ(Got[I].Package, 7u);
    EXPECT_EQ(Got[I].Element, 1u);
    EXPECT_EQ(Got[I].Size, 4u);
    EXPECT_EQ(uintptr_t(Got[I].Payload) % 8, uintptr_t(B.data()) % 8) << "8-byte aligned";
  }
  EXPECT_EQ(Got[5].Element, 2u);
  EXPECT_EQ(Got[6].Package, 8u);
  EXPECT_EQ(Got[6].Size, 0u);
}

TEST(Bundle, ABuilderNeverWritesPastItsCapacity) {
  std::vector<uint8_t> Bytes(64 + 8, 0xcc);
  BundleBuilder B;
  B.reset(Bytes.data(), 64);
  uint64_t V = 1;
  unsigned Taken = 0;
  while (B.append(1, 1, &V, sizeof V))
    ++Taken;
  EXPECT_EQ(Taken, (64 - sizeof(BundleRun)) / 8);
  EXPECT_LE(B.size(), 64u);
  for (size_t I = 64; I < Bytes.size(); ++I)
    EXPECT_EQ(Bytes[I], 0xcc) << "byte " << I << " past the capacity";
  EXPECT_FALSE(B.fitsEmpty(64));
  EXPECT_TRUE(B.fitsEmpty(48));
}

/// A run header that claims more records than the bytes left, or no
/// records: the records before it are handed out, then Malformed, and
/// nothing after is read.
TEST(Bundle, ARunLongerThanTheBundleEndsIt) {
  std::vector<uint8_t> Bytes(256);
  BundleBuilder B;
  B.reset(Bytes.data(), Bytes.size());
  uint64_t V = 5;
  ASSERT_TRUE(B.append(1, 1, &V, sizeof V));
  ASSERT_TRUE(B.append(1, 2, &V, sizeof V));
  size_t Second = sizeof(BundleRun) + 8;
  for (uint16_t Count : {uint16_t(2), uint16_t(0), uint16_t(UINT16_MAX)}) {
    std::vector<uint8_t> Bad(B.data(), B.data() + B.size());
    BundleRun Run;
    std::memcpy(&Run, Bad.data() + Second, sizeof Run);
    Run.Count = Count;
    std::memcpy(Bad.data() + Second, &Run, sizeof Run);
    BundleReader::Next Last;
    std::vector<BundleRecord> Got = readAll(Bad.data(), Bad.size(), Last);
    EXPECT_EQ(Last, BundleReader::Next::Malformed) << "count " << Count;
    EXPECT_EQ(Got.size(), 1u) << "count " << Count;
  }
  // A header cut short.
  BundleReader::Next Last;
  std::vector<BundleRecord> Got = readAll(B.data(), Second + 8, Last);
  EXPECT_EQ(Last, BundleReader::Next::Malformed);
  EXPECT_EQ(Got.size(), 1u);
  // Zero-size records take 8 bytes each: a bundle holds no more frames
  // than it has words.
  BundleRun Empty = {1, 1, 0, 10};
  std::vector<uint8_t> Runs(sizeof Empty + 9 * 8);
  std::memcpy(Runs.data(), &Empty, sizeof Empty);
  EXPECT_TRUE(readAll(Runs.data(), Runs.size(), Last).empty());
  EXPECT_EQ(Last, BundleReader::Next::Malformed);
}

TEST(Bundle, ABundleFrameIsCheckedLikeAnyOther) {
  constexpr size_t SlotSize = 4096;
  alignas(64) static uint8_t Slot[SlotSize], Private[SlotSize];
  std::vector<uint8_t> Runs(200, 3);
  FrameSpec Spec;
  Spec.Kind = FrameBundle;
  Spec.Payload = Runs.data();
  Spec.PayloadSize = uint32_t(Runs.size());
  Spec.Sequence = 9;
  Spec.Ordered = true;
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(Slot, SlotSize, Spec, &Size), TC_OK);
  EXPECT_EQ(Size, imagelessFrameSize(Runs.size()));
  FrameView V;
  ASSERT_EQ(checkFrame(Slot, SlotSize, 9, &V), TC_OK);
  EXPECT_EQ(V.Header.Kind, FrameBundle);
  EXPECT_EQ(V.Header.PayloadSize, Runs.size());
  EXPECT_EQ(std::memcmp(V.Payload, Runs.data(), Runs.size()), 0);
  // The receiver's fast path takes what storeMarkedFrame stores.
  std::memset(Slot, 0, SlotSize);
  storeMarkedFrame(Slot, FrameBundle, 0, 0, 0, Runs.data(), uint32_t(Runs.size()), 9);
  ASSERT_TRUE(captureMarkedFrame(Slot, SlotSize, 9, Private, &V));
  EXPECT_EQ(V.Header.Kind, FrameBundle);
  ASSERT_TRUE(captureMarkedFrameInRing(Slot, SlotSize, 9, &V));
  // Its own package, element or flags are not a bundle's.
  for (int Field = 0; Field < 3; ++Field) {
    std::memset(Slot, 0, SlotSize);
    storeMarkedFrame(Slot, FrameBundle, 0, 0, 0, Runs.data(), uint32_t(Runs.size()), 9);
    FrameHeader H;
    std::memcpy(&H, Slot, sizeof H);
    if (Field == 0)
      H.Package = 1;
    else if (Field == 1)
      H.Element = 1;
    else
      H.Inline[0] = FramePayloadAhead;
    std::memcpy(Slot, &H, sizeof H);
    EXPECT_FALSE(captureMarkedFrame(Slot, SlotSize, 9, Private, &V)) << "field " << Field;
    EXPECT_NE(checkFrame(Slot, SlotSize, 9, &V), TC_OK) << "field " << Field;
  }
  // Never one line.
  std::memset(Slot, 0, SlotSize);
  storeMarkedLine(Slot, FrameLocal, 0, 9, 0, nullptr, 0, 9);
  uint64_t First = headerWord(FrameBundle, 1);
  std::memcpy(Slot, &First, sizeof First);
  EXPECT_NE(checkFrame(Slot, SlotSize, 9, &V), TC_OK);
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
  uint64_t logBytes() {
    auto Used = reinterpret_cast<uint64_t (*)()>(receiverSymbol<void>("tc_stdlib_log_bytes"));
    return Used ? Used() : 0;
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
  uint64_t From = logBytes();
  constexpr uint32_t Count = 3000;
  ASSERT_NO_FATAL_FAILURE(sendAppends(Count));
  ASSERT_EQ(flush(), TC_OK) << describe();
  std::vector<uint32_t> Log = logFrom(From);
  ASSERT_EQ(Log.size(), Count) << describe();
  for (uint32_t I = 0; I < Count; ++I)
    ASSERT_EQ(Log[I], I) << "the log's record " << I;
  EXPECT_EQ(stats(Receiver).frames_executed_local, Count);
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
  std::vector<uint32_t> Log = logFrom(From);
  ASSERT_EQ(Log.size(), Count) << describe();
  for (uint32_t I = 0; I < Count; ++I)
    ASSERT_EQ(Log[I], I) << "the log's record " << I;
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
  std::vector<uint32_t> Log = logFrom(From);
  ASSERT_EQ(Log.size(), Count) << describe();
  for (uint32_t I = 0; I < Count; ++I)
    ASSERT_EQ(Log[I], I) << "the log's record " << I;
  EXPECT_GT(stats(Sender).frames_coalesced, 0u);
}

/// A frame of a package the receiver lacks, between good ones in one
/// bundle: refused alone, told to the sender; the others run, in order.
TEST_F(Bundles, ABadFrameAmongGoodOnesRefusesOnlyItself) {
  setSlots(8);
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
  EXPECT_GT(stats(Sender).frames_coalesced, 0u) << "the bad frames shared bundles";
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
  tc_peer_frames_t F = {};
  ASSERT_EQ(tc_peer_frames(Peer, &F), TC_OK);
  ASSERT_GT(F.queued, 0u) << "a bundle is open";
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
