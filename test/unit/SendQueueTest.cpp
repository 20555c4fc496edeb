//===- SendQueueTest.cpp - A peer's queue keeps its own counts -------------===//
//
// The frames waiting for a peer, their bytes and each origin's share were
// three fields kept in step by hand in three files (issue 42). The queue
// now keeps them itself; these check that every way a frame enters or
// leaves keeps them right.
//
//===----------------------------------------------------------------------===//
#include "send/SendQueue.h"

#include <gtest/gtest.h>

namespace {

using twochains::rt::SendQueue;

SendQueue::Frame frame(size_t Bytes, unsigned Origin = 0, uint32_t Element = 0) {
  SendQueue::Frame F{nullptr, Element, std::vector<uint8_t>(Bytes)};
  F.Origin = Origin;
  return F;
}

TEST(SendQueue, CountsWhatItHolds) {
  SendQueue Q;
  Q.push(frame(10));
  Q.push(frame(20, 7));
  Q.push(frame(30, 7));
  Q.push(frame(40, 9));
  EXPECT_EQ(Q.size(), 4u);
  EXPECT_EQ(Q.bytes(), 100u);
  EXPECT_EQ(Q.heldBy(7).Frames, 2u);
  EXPECT_EQ(Q.heldBy(7).Bytes, 50u);
  EXPECT_EQ(Q.heldBy(9).Bytes, 40u);
  EXPECT_EQ(Q.heldBy(0).Frames, 0u) << "a peer's own frames are no origin's share";

  auto It = Q.erase(std::next(Q.begin())); // the first of origin 7
  EXPECT_EQ(It->Payload.size(), 30u);
  EXPECT_EQ(Q.bytes(), 80u);
  EXPECT_EQ(Q.heldBy(7).Frames, 1u);
  EXPECT_EQ(Q.heldBy(7).Bytes, 30u);
  Q.erase(It);
  EXPECT_EQ(Q.heldBy(7).Frames, 0u);
  EXPECT_EQ(Q.heldBy(7).Bytes, 0u);

  Q.clear();
  EXPECT_TRUE(Q.empty());
  EXPECT_EQ(Q.bytes(), 0u);
  EXPECT_EQ(Q.heldBy(9).Frames, 0u);
}

/// A job handle's frames move to its connection ahead of the
/// connection's own, in order, with their counts.
TEST(SendQueue, MovesAheadOfAnotherQueueInOrder) {
  SendQueue Handle, Connection;
  Handle.push(frame(1, 3, 1));
  Handle.push(frame(2, 0, 2));
  Connection.push(frame(4, 3, 3));
  Handle.moveTo(Connection);
  EXPECT_TRUE(Handle.empty());
  EXPECT_EQ(Handle.bytes(), 0u);
  EXPECT_EQ(Handle.heldBy(3).Frames, 0u);
  ASSERT_EQ(Connection.size(), 3u);
  std::vector<uint32_t> Order;
  for (auto &F : Connection)
    Order.push_back(F.Element);
  EXPECT_EQ(Order, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(Connection.bytes(), 7u);
  EXPECT_EQ(Connection.heldBy(3).Frames, 2u);
  EXPECT_EQ(Connection.heldBy(3).Bytes, 5u);
}

} // namespace
