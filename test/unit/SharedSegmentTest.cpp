//===- SharedSegmentTest.cpp - Memory shared with a process of this host --===//
//
// Ranks of one host map each other's rings from what their offers name: a
// process id and a descriptor, a length and a token (base/SharedSegment.h).
// A peer names them; each check refuses what a hostile one could name
// instead: another kind of segment, a file that is not memory, memory that
// could be cut under this process's stores, another length, a segment
// whose token it does not know.
//
//===----------------------------------------------------------------------===//
#include "base/SharedSegment.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace {

using namespace twochains::rt;

constexpr size_t Length = 3 * 4096;
constexpr size_t TokenAt = 128;

class SharedSegmentTest : public ::testing::Test {
protected:
  SharedSegment Made;
  uint8_t *Mapped = nullptr;
  std::string Why;

  void SetUp() override {
    ASSERT_TRUE(createSharedSegment(SegmentKind::Mailbox, Length, TokenAt, Made, Why)) << Why;
  }
  void TearDown() override {
    if (Mapped)
      munmap(Mapped, Length);
    releaseSharedSegment(Made);
  }
  /// Fd sized as the segment, with its token in place: all a file of
  /// another sort has in common with it.
  void holdTheToken(int Fd) {
    ASSERT_EQ(ftruncate(Fd, Length), 0);
    ASSERT_EQ(pwrite(Fd, Made.Token, SegmentTokenBytes, TokenAt), ssize_t(SegmentTokenBytes));
  }
  /// Whether attaching the file as a mailbox is refused, for the reason
  /// Because.
  bool refusedBecause(int Fd, const char *Because) {
    return !attach(SegmentKind::Mailbox, Fd, Length, Made.Token) &&
           Why.find(Because) != std::string::npos;
  }
  bool attach(SegmentKind Kind, int Fd, uint64_t Bytes, const uint8_t *Token) {
    Why.clear();
    return attachSharedSegment(Kind, uint32_t(getpid()), Fd, Bytes, TokenAt, Token, Mapped, Why);
  }
};

TEST_F(SharedSegmentTest, IsMappedByWhoeverNamesItsTokenAndLength) {
  ASSERT_TRUE(attach(SegmentKind::Mailbox, Made.Fd, Length, Made.Token)) << Why;
  ASSERT_NE(Mapped, nullptr);
  EXPECT_NE(Mapped, Made.Base) << "the same mapping, not the same memory mapped again";
  Mapped[Length - 1] = 0x5a;
  EXPECT_EQ(Made.Base[Length - 1], 0x5a);
  Made.Base[4096] = 0xa5;
  EXPECT_EQ(Mapped[4096], 0xa5);
}

TEST_F(SharedSegmentTest, CannotBeCutOrGrownUnderItsMappings) {
  EXPECT_NE(ftruncate(Made.Fd, 4096), 0) << "a segment shrunk under a peer's stores (SIGBUS)";
  EXPECT_NE(ftruncate(Made.Fd, 2 * Length), 0);
  EXPECT_NE(fcntl(Made.Fd, F_ADD_SEALS, F_SEAL_WRITE), 0) << "its seals can still change";
}

TEST_F(SharedSegmentTest, AWrongTokenIsRefused) {
  uint8_t Token[SegmentTokenBytes];
  std::memcpy(Token, Made.Token, sizeof Token);
  Token[SegmentTokenBytes - 1] ^= 1;
  EXPECT_FALSE(attach(SegmentKind::Mailbox, Made.Fd, Length, Token));
  EXPECT_EQ(Mapped, nullptr);
  EXPECT_NE(Why.find("does not hold the segment's token"), std::string::npos) << Why;
}

TEST_F(SharedSegmentTest, AnotherLengthIsRefused) {
  for (uint64_t Bytes : {uint64_t(Length - 4096), uint64_t(Length + 4096)}) {
    EXPECT_FALSE(attach(SegmentKind::Mailbox, Made.Fd, Bytes, Made.Token)) << Bytes;
    EXPECT_EQ(Mapped, nullptr);
    EXPECT_NE(Why.find("sealed against shrinking"), std::string::npos) << Why;
  }
}

TEST_F(SharedSegmentTest, AnotherKindIsRefused) {
  SharedSegment Bell;
  ASSERT_TRUE(createSharedSegment(SegmentKind::Doorbell, Length, TokenAt, Bell, Why)) << Why;
  EXPECT_FALSE(attach(SegmentKind::Mailbox, Bell.Fd, Length, Bell.Token));
  EXPECT_NE(Why.find("not a twochains-mailbox segment"), std::string::npos) << Why;
  EXPECT_TRUE(attach(SegmentKind::Doorbell, Bell.Fd, Length, Bell.Token)) << Why;
  releaseSharedSegment(Bell);
}

/// A memory file of the right name, length and token, but not sealed: its
/// owner could shrink it under this process's stores.
TEST_F(SharedSegmentTest, AnUnsealedMemoryFileIsRefused) {
  int Fd = memfd_create("twochains-mailbox", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(Fd, 0);
  ASSERT_NO_FATAL_FAILURE(holdTheToken(Fd));
  EXPECT_TRUE(refusedBecause(Fd, "sealed against shrinking")) << Why;
  close(Fd);
}

/// Descriptors of what is not memory are refused by their name, without
/// being opened: a pipe, a file on disk (holding the token).
TEST_F(SharedSegmentTest, WhatIsNotAMemoryFileIsNotOpened) {
  int Pipe[2];
  ASSERT_EQ(pipe(Pipe), 0);
  EXPECT_TRUE(refusedBecause(Pipe[0], "not a twochains-mailbox segment")) << Why;
  close(Pipe[0]);
  close(Pipe[1]);
  char Name[] = "/tmp/tc-segment-XXXXXX";
  int File = mkstemp(Name);
  ASSERT_GE(File, 0);
  unlink(Name);
  ASSERT_NO_FATAL_FAILURE(holdTheToken(File));
  EXPECT_TRUE(refusedBecause(File, "not a twochains-mailbox segment")) << Why;
  close(File);
}

TEST_F(SharedSegmentTest, ADescriptorNoProcessHasIsRefused) {
  EXPECT_FALSE(attach(SegmentKind::Mailbox, 1 << 20, Length, Made.Token));
  EXPECT_FALSE(attachSharedSegment(SegmentKind::Mailbox, 0, Made.Fd, Length, TokenAt, Made.Token,
                                   Mapped, Why));
  EXPECT_FALSE(attach(SegmentKind::Mailbox, -1, Length, Made.Token));
  EXPECT_EQ(Mapped, nullptr);
}

TEST(SharedSegment, HostIdentityIsThisBoots) {
  const uint8_t *Host = hostIdentity();
  bool AllZero = true;
  for (size_t I = 0; I < SegmentHostBytes; ++I)
    AllZero &= Host[I] == 0;
  EXPECT_FALSE(AllZero) << "no boot id read";
  EXPECT_EQ(std::memcmp(Host, hostIdentity(), SegmentHostBytes), 0);
}

} // namespace
