//===- ShipAheadTest.cpp - Code shipped ahead is never waited for ----------===//
//
// An injected frame whose image does not fit a slot beside its payload has
// its image shipped ahead (code/CodeTransfer.cpp). The sender never waits
// for the receiver's answer: the frame, and every frame after it to that
// peer, waits in the peer's queue until the answer comes on a later turn.
// So two processes shipping to each other at once both go on; frames
// behind a shipment run in the order sent; a refused shipment drops the
// frames that needed it and says so (event, tc_flush, the call); and a
// jam's reply may be injected too (tc_jam_reply_mode).
//
// The unit ship package's jam tally counts frames per lane and checks each
// came in order; its image is larger than the 128-byte slots used here.
// Both contexts are in this process and share its rieds: each test uses
// lanes of its own.
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "package/Package.h"
#include "twochains/jam.h"

#include <atomic>
#include <thread>

namespace {

using twochains::rt::PackageElement;

constexpr unsigned Lanes = 4;

/// The package's tally frame for index Index of a lane (its check as the
/// jam computes it).
struct Tally {
  uint32_t Lane, Check;
  uint64_t Index;
};

uint32_t mix(uint64_t X) {
  X ^= X >> 33;
  X *= 0xff51afd7ed558ccdull;
  X ^= X >> 29;
  X *= 0xc4ceb9fe1a85ec53ull;
  X ^= X >> 31;
  X = (X << 7) | (X >> 57);
  X += 0x9e3779b97f4a7c15ull;
  X ^= X >> 17;
  return uint32_t(X ^ (X >> 32));
}

Tally tally(uint32_t Lane, uint64_t Index) { return {Lane, mix(Index), Index}; }

/// bounce's payload: count tally replies of a lane, from index First, each
/// in its mode.
struct Bounce {
  uint32_t Lane, Count;
  uint64_t First;
  uint32_t Checks[4];
  uint8_t Modes[4];
};

class ShipAhead : public TwoContexts {
protected:
  /// The ship package of each side (null: not loaded there).
  tc_package_t *ShipOfSender = nullptr, *ShipOfReceiver = nullptr;
  volatile uint64_t *Next = nullptr, *Disorder = nullptr, *Runs = nullptr;
  volatile int64_t *ReplyFailure = nullptr;

  /// Both contexts, the ship package on the sender and (OnReceiver) the
  /// receiver, then connected; the lanes' counters zeroed.
  void startWithShip(bool OnReceiver = true) {
    ASSERT_NO_FATAL_FAILURE(createContexts());
    ShipOfSender = loadPackage(TC_TEST_SHIP_PREFIX, "unitship",
                               TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
    ASSERT_NE(ShipOfSender, nullptr);
    ASSERT_EQ(tc_context_add_package(Sender.Ctx, ShipOfSender), TC_OK);
    if (OnReceiver) {
      ShipOfReceiver = loadPackage(TC_TEST_SHIP_PREFIX, "unitship",
                                   TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
      ASSERT_NE(ShipOfReceiver, nullptr);
      ASSERT_EQ(tc_context_add_package(Receiver.Ctx, ShipOfReceiver), TC_OK);
    }
    ASSERT_EQ(connect(), TC_OK) << describe();
    Next = receiverSymbol<volatile uint64_t>("tc_unitship_next", ShipOfSender);
    Disorder = receiverSymbol<volatile uint64_t>("tc_unitship_disorder", ShipOfSender);
    Runs = receiverSymbol<volatile uint64_t>("tc_unitship_runs", ShipOfSender);
    ReplyFailure = receiverSymbol<volatile int64_t>("tc_unitship_reply_failure", ShipOfSender);
    ASSERT_TRUE(Next && Disorder && Runs && ReplyFailure);
    for (unsigned L = 0; L < Lanes; ++L)
      Next[L] = Disorder[L] = Runs[L] = 0;
    *ReplyFailure = 0;
  }

  /// The tally element's image is larger than a slot beside its payload
  /// (the premise of every test here).
  void expectShippedAhead(const tc_package_t *Pkg, uint32_t SlotSize) {
    const PackageElement &E = Pkg->Elements[element(Pkg, "tally")];
    ASSERT_GT(E.Image.Bytes.size() + 64 + 64, SlotSize)
        << "tally's image must not fit a slot beside its payload";
  }

  tc_status_t sendTally(tc_peer_t *To, tc_send_mode_t Mode, uint32_t Lane, uint64_t Index) {
    Tally T = tally(Lane, Index);
    return tc_send(To, ShipOfSender, element(ShipOfSender, "tally"), Mode, &T, sizeof T);
  }
};

/// Two contexts, each with its executor running, send each other an
/// injected frame whose image must be shipped ahead at the same moment.
/// Both shipments are answered and both frames run. (Before, each send
/// held its context while it waited up to 10 s for the other's answer,
/// which the other's executor, locked out by its own waiting send, never
/// gave: both failed.)
TEST_F(ShipAhead, CrossingShipmentsBothComplete) {
  setSlotSize(128);
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(startWithShip());
  ASSERT_NO_FATAL_FAILURE(expectShippedAhead(ShipOfSender, 128));
  tc_peer_t *Back = nullptr;
  ASSERT_EQ(tc_context_peer(Receiver.Ctx, 1, &Back), TC_OK);
  ASSERT_EQ(tc_executor_start(Sender.Ctx), TC_OK);
  struct Stop {
    tc_context_t *Ctx;
    ~Stop() { tc_executor_stop(Ctx); }
  } StopSender{Sender.Ctx};

  uint32_t Id = element(ShipOfSender, "tally");
  std::atomic<int> Ready{0};
  tc_status_t BackSent = TC_ERR_INVALID_PARAM, BackFlushed = TC_ERR_INVALID_PARAM;
  std::thread Other([&] {
    Tally T = tally(1, 0);
    Ready.fetch_add(1);
    while (Ready.load() < 2) {
    }
    BackSent = tc_send(Back, ShipOfReceiver, Id, TC_SEND_INJECTED, &T, sizeof T);
    BackFlushed = tc_flush(Back, WaitMs);
  });
  Tally T = tally(0, 0);
  Ready.fetch_add(1);
  while (Ready.load() < 2) {
  }
  tc_status_t Sent = tc_send(Peer, ShipOfSender, Id, TC_SEND_INJECTED, &T, sizeof T);
  tc_status_t Flushed = tc_flush(Peer, WaitMs);
  Other.join();
  EXPECT_EQ(Sent, TC_OK) << describe();
  EXPECT_EQ(BackSent, TC_OK) << describe();
  EXPECT_EQ(Flushed, TC_OK) << describe();
  EXPECT_EQ(BackFlushed, TC_OK) << describe();
  ASSERT_TRUE(progressUntil([&] { return Runs[0] == 1 && Runs[1] == 1; }, "both frames ran"));
  EXPECT_EQ(Disorder[0] + Disorder[1], 0u);
  EXPECT_EQ(stats(Sender).code_transfers, 1u);
  EXPECT_EQ(stats(Receiver).code_transfers, 1u);
  EXPECT_EQ(stats(Sender).code_transfers_received, 1u);
  EXPECT_EQ(stats(Receiver).code_transfers_received, 1u);
  EXPECT_EQ(stats(Sender).frames_executed_injected, 1u);
  EXPECT_EQ(stats(Receiver).frames_executed_injected, 1u);
}

/// A send whose image must be shipped ahead returns at once, to a
/// receiver that does not run yet; the frames after it to that peer, of
/// any mode, and a call, queue behind it and run in the order sent once
/// the receiver answers. (Before, the first send waited 10 s for an answer
/// that could not come, and failed.)
TEST_F(ShipAhead, FramesBehindAShipmentRunInOrder) {
  setSlotSize(128);
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(startWithShip());
  ASSERT_NO_FATAL_FAILURE(expectShippedAhead(ShipOfSender, 128));
  constexpr uint32_t Lane = 2;
  // Nothing progresses the receiver until every frame is sent.
  ASSERT_EQ(sendTally(Peer, TC_SEND_INJECTED, Lane, 0), TC_OK) << describe();
  ASSERT_EQ(sendTally(Peer, TC_SEND_LOCAL, Lane, 1), TC_OK)
      << "a Local frame queues behind the shipment\n"
      << describe();
  ASSERT_EQ(sendTally(Peer, TC_SEND_INJECTED, Lane, 2), TC_OK) << describe();
  uint64_t Question = 0x5eed, Answer = 0;
  tc_call_t *Call = nullptr;
  ASSERT_EQ(tc_call_start(Peer, Sender.Calls, element(Sender.Calls, "echo"), TC_SEND_INJECTED,
                          &Question, sizeof Question, &Answer, sizeof Answer, &Call),
            TC_OK)
      << "a call's frame queues too, behind the others\n"
      << describe();
  ASSERT_EQ(sendTally(Peer, TC_SEND_LOCAL, Lane, 3), TC_OK) << describe();
  EXPECT_EQ(stats(Sender).frames_sent, 0u) << "every frame waits for tally's code";

  ASSERT_TRUE(progressUntil([&] { return Runs[Lane] == 4; }, "the four tally frames ran"));
  EXPECT_EQ(Disorder[Lane], 0u) << "in the order sent";
  EXPECT_EQ(Next[Lane], 4u);
  size_t Size = 0;
  EXPECT_EQ(whileReceiverRuns([&] { return tc_call_wait(Call, WaitMs, &Size); }), TC_OK)
      << describe();
  tc_call_release(Call);
  EXPECT_EQ(Answer, Question);
  EXPECT_EQ(flush(), TC_OK) << describe();
  EXPECT_EQ(stats(Sender).code_transfers, 2u) << "tally's image, then echo's";
  EXPECT_EQ(stats(Receiver).frames_executed_injected, 3u) << describe();
  EXPECT_EQ(stats(Receiver).frames_executed_local, 2u) << describe();
}

/// A receiver that does not have the package refuses the shipment: the
/// frames queued behind it that needed the code are dropped and counted,
/// the call among them ends with the refusal, an event says so, the next
/// tc_flush returns it once, and later sends needing the code fail at
/// once. A frame of another element queued behind them still runs.
TEST_F(ShipAhead, RefusedShipmentDropsItsFramesAndTellsTheFlush) {
  setSlotSize(128);
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(startWithShip(/*OnReceiver=*/false));
  uint32_t Id = element(ShipOfSender, "tally");
  for (uint64_t I = 0; I < 3; ++I)
    ASSERT_EQ(sendTally(Peer, TC_SEND_INJECTED, 3, I), TC_OK) << describe();
  uint64_t Question = 1, Answer = 0;
  tc_call_t *Call = nullptr;
  Tally T = tally(3, 3);
  ASSERT_EQ(tc_call_start(Peer, ShipOfSender, Id, TC_SEND_INJECTED, &T, sizeof T, &Answer,
                          sizeof Answer, &Call),
            TC_OK)
      << describe();
  // Behind them, a Local frame of a package the receiver has.
  ASSERT_EQ(tc_send(Peer, Sender.Calls, element(Sender.Calls, "echo"), TC_SEND_LOCAL, &Question,
                    sizeof Question),
            TC_OK);

  EXPECT_EQ(tc_flush(Peer, WaitMs), TC_ERR_UNKNOWN_ELEMENT) << describe();
  EXPECT_EQ(tc_flush(Peer, WaitMs), TC_OK) << "the refusal is told once";
  EXPECT_EQ(tc_call_wait(Call, WaitMs, nullptr), TC_ERR_UNKNOWN_ELEMENT);
  tc_call_release(Call);
  EXPECT_EQ(stats(Sender).faults_reported, 4u) << "three frames and the call's";
  EXPECT_EQ(peerStats(Peer).faults_reported, 4u);
  EXPECT_EQ(stats(Sender).code_transfers, 0u);
  EXPECT_EQ(stats(Sender).frames_sent, 1u) << "only the Local frame left";
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_executed_local == 1; },
                            "the Local frame behind them ran"));
  bool Told = false;
  for (const tc_event_t &E : takeEvents(Sender))
    Told |= E.kind == TC_EVENT_FAULT_REPORTED && E.status == TC_ERR_UNKNOWN_ELEMENT &&
            E.element == Id && E.peer == 1;
  EXPECT_TRUE(Told) << "an event names the element and why";
  EXPECT_EQ(sendTally(Peer, TC_SEND_INJECTED, 3, 4), TC_ERR_UNKNOWN_ELEMENT)
      << "later sends needing the code fail at once";
  EXPECT_EQ(Runs[3], 0u);
  EXPECT_TRUE(logged("did not install the"));
}

/// A jam's reply in injected mode (tc_jam_reply_mode) runs on the sender
/// as injected code, in order with the Local replies around it: carrying
/// its image where it fits a slot, shipped ahead (from the jam, which does
/// not wait for the answer) where it does not.
class InjectedReply : public ShipAhead, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(InjectedReply, RunsOnTheSenderAsInjectedCode) {
  uint32_t SlotSize = GetParam();
  setSlotSize(SlotSize);
  Drive = Driver::Executor;
  ASSERT_NO_FATAL_FAILURE(startWithShip());
  constexpr uint32_t Lane = 1;
  Bounce B = {Lane, 3, 0, {}, {}};
  const uint8_t Modes[] = {TC_JAM_SEND_INJECTED, TC_JAM_SEND_LOCAL, TC_JAM_SEND_INJECTED};
  for (uint32_t I = 0; I < B.Count; ++I) {
    B.Checks[I] = mix(I);
    B.Modes[I] = Modes[I];
  }
  ASSERT_EQ(
      tc_send(Peer, ShipOfSender, element(ShipOfSender, "bounce"), TC_SEND_LOCAL, &B, sizeof B),
      TC_OK)
      << describe();
  ASSERT_TRUE(progressUntil([&] { return Runs[Lane] == 3; }, "the sender ran the three replies"));
  EXPECT_EQ(*ReplyFailure, 0) << "tc_jam_reply_mode returned 0 each time";
  EXPECT_EQ(Disorder[Lane], 0u) << "in the order replied";
  EXPECT_EQ(stats(Sender).frames_executed_injected, 2u) << describe();
  EXPECT_EQ(stats(Sender).frames_executed_local, 1u) << describe();
  EXPECT_EQ(stats(Receiver).code_transfers, SlotSize == 128 ? 1u : 0u)
      << "shipped ahead only where the image does not fit a slot";
}

INSTANTIATE_TEST_SUITE_P(SlotSizes, InjectedReply, ::testing::Values(4096u, 128u),
                         [](const auto &Info) {
                           return Info.param == 128 ? std::string("ShippedAhead")
                                                    : std::string("InTheFrame");
                         });

} // namespace
