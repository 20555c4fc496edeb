//===- RingTest.cpp - Slots and credits -----------------------------------===//
#include "wire/Ring.h"

#include <gtest/gtest.h>
#include <deque>
#include <random>
#include <vector>

using namespace twochains::rt;

namespace {

TEST(Ring, SenderStopsWhenTheRingIsFull) {
  SenderRing S(4);
  uint64_t Seq = 99;
  uint32_t Slot = 99;
  for (uint64_t I = 0; I < 4; ++I) {
    ASSERT_EQ(S.reserve(&Seq, &Slot), TC_OK);
    EXPECT_EQ(Seq, I);
    EXPECT_EQ(Slot, I);
  }
  EXPECT_EQ(S.reserve(&Seq, &Slot), TC_ERR_NO_CREDIT);
  EXPECT_EQ(Seq, 3u) << "outputs are set only on success";
  S.credit(2);
  ASSERT_EQ(S.reserve(&Seq, &Slot), TC_OK);
  EXPECT_EQ(Seq, 4u);
  EXPECT_EQ(Slot, 0u) << "sequence 4 reuses slot 0, whose frame finished";
  ASSERT_EQ(S.reserve(&Seq, &Slot), TC_OK);
  EXPECT_EQ(S.reserve(&Seq, &Slot), TC_ERR_NO_CREDIT);
}

TEST(Ring, StaleOrImpossibleCreditReportsAreIgnored) {
  SenderRing S(2);
  uint64_t Seq;
  uint32_t Slot;
  ASSERT_EQ(S.reserve(&Seq, &Slot), TC_OK);
  ASSERT_EQ(S.reserve(&Seq, &Slot), TC_OK);
  S.credit(5); // more than was ever sent
  EXPECT_EQ(S.reserve(&Seq, &Slot), TC_ERR_NO_CREDIT);
  S.credit(2);
  S.credit(1); // late, older report
  EXPECT_EQ(S.available(), 2u);
}

TEST(Ring, ReceiverReportsInBatches) {
  ReceiverRing R(8, 3);
  EXPECT_FALSE(R.finish());
  EXPECT_FALSE(R.finish());
  EXPECT_TRUE(R.finish());
  EXPECT_EQ(R.takeCreditReport(), 3u);
  EXPECT_FALSE(R.creditPending());
  EXPECT_FALSE(R.finish());
  EXPECT_TRUE(R.creditPending());
  EXPECT_EQ(R.expectedSlot(), 4u);
}

// Sender and receiver interleaved at random, credits delivered late: no
// slot is written while its previous frame is unfinished, and every frame
// runs exactly once, in order.
TEST(Ring, NothingIsOverwrittenLostOrRunTwice) {
  for (uint32_t Slots : {1u, 2u, 5u, 16u}) {
    for (uint32_t Batch : {1u, 2u, 4u}) {
      SenderRing Sender(Slots);
      ReceiverRing Receiver(Slots, Batch);
      std::vector<int64_t> SlotHolds(Slots, -1); // sequence in the slot, or -1
      std::deque<uint64_t> Reports;              // credit puts in flight
      std::vector<int> Runs;
      const uint64_t Total = 2000;
      std::mt19937 Rng(Slots * 31 + Batch);
      while (Receiver.expected() < Total) {
        switch (Rng() % 3) {
        case 0: { // the sender tries to send
          uint64_t Seq;
          uint32_t Slot;
          if (Sender.next() < Total && Sender.reserve(&Seq, &Slot) == TC_OK) {
            ASSERT_EQ(SlotHolds[Slot], -1) << "slot " << Slot << " overwritten";
            SlotHolds[Slot] = int64_t(Seq);
          }
          break;
        }
        case 1: { // the receiver runs the expected frame if it is there
          uint32_t Slot = Receiver.expectedSlot();
          if (SlotHolds[Slot] == int64_t(Receiver.expected())) {
            Runs.push_back(int(Receiver.expected()));
            SlotHolds[Slot] = -1;
            if (Receiver.finish())
              Reports.push_back(Receiver.takeCreditReport());
          } else if (Receiver.creditPending() && Rng() % 4 == 0) {
            Reports.push_back(Receiver.takeCreditReport()); // idle flush
          }
          break;
        }
        case 2: // a credit put lands
          if (!Reports.empty()) {
            Sender.credit(Reports.front());
            Reports.pop_front();
          }
          break;
        }
      }
      ASSERT_EQ(Runs.size(), Total);
      for (uint64_t I = 0; I < Total; ++I)
        ASSERT_EQ(Runs[I], int(I)) << "frame run out of order or twice";
    }
  }
}

} // namespace
