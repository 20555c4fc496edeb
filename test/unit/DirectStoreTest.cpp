//===- DirectStoreTest.cpp - Where a sender may store into a peer's ring --===//
//
// A peer's offer names the address its key maps: this side stores there
// only inside the one writable shared mapping the key made, and only where
// the segment behind it holds memory (base/Mappings.h, wireup/Mailbox.cpp).
//
//===----------------------------------------------------------------------===//
#include "calls/Calls.h"
#include "code/InjectedCode.h"
#include "context/Context.h"
#include "control/ControlMessage.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Stats.h"
#include "receive/Receive.h"
#include "path/FramePath.h"
#include "send/Send.h"
#include "ucx/Request.h"
#include "path/Mailbox.h"
#include "wireup/Wireup.h"
#include "base/Mappings.h"

#include <gtest/gtest.h>
#include <cstdlib>
#include <memory>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace twochains::rt;

static bool insideSharedMapping(uintptr_t Begin, size_t Length) {
  return insideOneOf(sharedMappings(), Begin, Length);
}

TEST(DirectStore, OnlyInsideOneWritableSharedMapping) {
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  auto *Shared = static_cast<uint8_t *>(
      mmap(nullptr, 4 * Page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(Shared, MAP_FAILED);
  ASSERT_EQ(munmap(Shared + 3 * Page, Page), 0); // nothing right after it
  auto B = uintptr_t(Shared);
  EXPECT_TRUE(insideSharedMapping(B, 3 * Page));
  EXPECT_TRUE(insideSharedMapping(B + 100, Page));
  EXPECT_FALSE(insideSharedMapping(B, 3 * Page + 1)) << "one byte past its end";
  EXPECT_FALSE(insideSharedMapping(B - 1, 2)) << "one byte before it";

  std::unique_ptr<uint8_t[]> Heap(new uint8_t[4096]);
  EXPECT_FALSE(insideSharedMapping(uintptr_t(Heap.get()), 64)) << "private memory";
  uint8_t Stack[64];
  EXPECT_FALSE(insideSharedMapping(uintptr_t(Stack), sizeof Stack)) << "the stack";

  ASSERT_EQ(mprotect(Shared, Page, PROT_READ), 0);
  EXPECT_FALSE(insideSharedMapping(B, 64)) << "read-only";
  munmap(Shared, 3 * Page);
}

TEST(DirectStore, TheMappingsAKeyMadeAreTheNewOnes) {
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  std::vector<SharedMapping> Before = sharedMappings();
  auto *Shared = static_cast<uint8_t *>(
      mmap(nullptr, 2 * Page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(Shared, MAP_FAILED);
  std::vector<SharedMapping> New = newMappings(Before, sharedMappings());
  ASSERT_EQ(New.size(), 1u);
  EXPECT_EQ(New[0].Begin, uintptr_t(Shared));
  EXPECT_EQ(New[0].End, uintptr_t(Shared) + 2 * Page);
  EXPECT_TRUE(newMappings(sharedMappings(), sharedMappings()).empty());
  munmap(Shared, 2 * Page);
}

TEST(DirectStore, PagesPastTheEndOfTheFileAreNotBacked) {
  // UCX maps the length a key claims: a mapping longer than its segment.
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  int Fd = memfd_create("direct-store-test", MFD_CLOEXEC);
  ASSERT_GE(Fd, 0);
  ASSERT_EQ(ftruncate(Fd, off_t(Page)), 0);
  auto *Map = static_cast<uint8_t *>(
      mmap(nullptr, 3 * Page, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0));
  ASSERT_NE(Map, MAP_FAILED);
  auto B = uintptr_t(Map);
  EXPECT_TRUE(backedByMemory(B, Page));
  EXPECT_TRUE(backedByMemory(B + 10, 100));
  EXPECT_FALSE(backedByMemory(B, Page + 1)) << "one byte past the file";
  EXPECT_FALSE(backedByMemory(B + 2 * Page, 8)) << "a page past the file";
  EXPECT_FALSE(backedByMemory(B, 0));
  EXPECT_FALSE(backedByMemory(uintptr_t(1) << 46, 8)) << "nothing mapped";
  munmap(Map, 3 * Page);
  close(Fd);
}

TEST(DirectStore, TheKernelCountsEveryNewMapping) {
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  uint64_t Before = virtualSize();
  ASSERT_NE(Before, 0u);
  void *Shared = mmap(nullptr, 3 * Page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(Shared, MAP_FAILED);
  EXPECT_EQ(virtualSize() - Before, 3 * Page);
  munmap(Shared, 3 * Page);
  EXPECT_EQ(virtualSize(), Before);
}

/// What UCX says a key's unpack mapped is taken only where the kernel's
/// count grew by exactly that (wireup/Mailbox.cpp; else the process's
/// mappings are listed, as before).
TEST(DirectStore, TheMappingsMadeMustBeAllThatAppeared) {
  const size_t Page = size_t(sysconf(_SC_PAGESIZE));
  const int RW = PROT_READ | PROT_WRITE;
  const uint64_t Size = 1 << 30;
  std::vector<SharedMapping> Out;
  MadeMapping Ring{16 * Page, 3 * Page - 100, RW, MAP_SHARED, 7};
  ASSERT_TRUE(madeAreAllNew({Ring}, Size, Size + 3 * Page, Out));
  ASSERT_EQ(Out.size(), 1u);
  EXPECT_EQ(Out[0].Begin, 16 * Page);
  EXPECT_EQ(Out[0].End, 19 * Page) << "whole pages, as the kernel maps them";
  EXPECT_EQ(Out[0].Inode, 7u);
  MadeMapping Other{64 * Page, Page, RW, MAP_SHARED, 8};
  EXPECT_TRUE(madeAreAllNew({Ring, Other}, Size, Size + 4 * Page, Out));
  EXPECT_EQ(Out.size(), 2u);

  // Something else mapped meanwhile (a second segment of the key's that
  // UCX mapped unseen, another thread): not taken.
  EXPECT_FALSE(madeAreAllNew({Ring}, Size, Size + 4 * Page, Out));
  EXPECT_TRUE(Out.empty());
  EXPECT_FALSE(madeAreAllNew({Ring}, Size, Size + 2 * Page, Out)) << "something went";
  EXPECT_FALSE(madeAreAllNew({}, Size, Size + 3 * Page, Out)) << "nothing seen, much mapped";
  EXPECT_FALSE(madeAreAllNew({Ring}, 0, Size + 3 * Page, Out)) << "no count";
  EXPECT_FALSE(madeAreAllNew({Ring}, Size, 0, Out)) << "no count";
  // Not one of the writable shared mappings a listing counts.
  MadeMapping Fixed = Ring, ReadOnly = Ring, Private = Ring;
  Fixed.Flags |= MAP_FIXED;
  ReadOnly.Prot = PROT_READ;
  Private.Flags = MAP_PRIVATE;
  EXPECT_FALSE(madeAreAllNew({Fixed}, Size, Size + 3 * Page, Out));
  EXPECT_FALSE(madeAreAllNew({ReadOnly}, Size, Size + 3 * Page, Out));
  EXPECT_FALSE(madeAreAllNew({Private}, Size, Size + 3 * Page, Out));
  EXPECT_TRUE(madeAreAllNew({}, Size, Size, Out)) << "keys that map nothing here";
}

/// Each key gets the new mapping its address lies in; one left over means
/// some key mapped more than one segment, and the offer is refused.
TEST(DirectStore, AKeyMustMapOneSegment) {
  std::vector<std::vector<SharedMapping>> Attached;
  SharedMapping A{0x10000, 0x20000, 1}, B{0x40000, 0x48000, 2}, C{0x80000, 0x90000, 3};
  EXPECT_EQ(attachNewMappings({A, B}, {0x10040, 0x40000}, Attached), 0u);
  ASSERT_EQ(Attached.size(), 2u);
  ASSERT_EQ(Attached[0].size(), 1u);
  EXPECT_EQ(Attached[0][0], A);
  ASSERT_EQ(Attached[1].size(), 1u);
  EXPECT_EQ(Attached[1][0], B);

  EXPECT_EQ(attachNewMappings({A, B, C}, {0x10040, 0x40000}, Attached), 1u)
      << "a third segment, no key's";
  EXPECT_EQ(attachNewMappings({A, B}, {0x10040, 0}, Attached), 1u)
      << "the second key maps nothing here, yet a second segment appeared";
  EXPECT_EQ(attachNewMappings({A, B}, {0x10040, 0x10080}, Attached), 1u)
      << "both addresses in one segment: the other is no key's";

  // A key whose address lies outside what it mapped is given the one
  // segment left: its range is then found outside it (checkKeyRange).
  EXPECT_EQ(attachNewMappings({A, B}, {0x10040, 0x99999999}, Attached), 0u);
  ASSERT_EQ(Attached[1].size(), 1u);
  EXPECT_EQ(Attached[1][0], B);
  EXPECT_FALSE(insideOneOf(Attached[1], 0x99999999, 8));
}

TEST(DirectStore, AForkedChildCountsItsOwnMemory) {
  ASSERT_NE(virtualSize(), 0u); // the parent's count, kept open
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  pid_t Child = fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    uint64_t Before = virtualSize();
    void *Shared =
        mmap(nullptr, 5 * Page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    _exit(Before && Shared != MAP_FAILED && virtualSize() - Before == 5 * Page ? 0 : 1);
  }
  int Status = 0;
  ASSERT_EQ(waitpid(Child, &Status, 0), Child);
  EXPECT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0)
      << "the child counted its parent's memory";
}
