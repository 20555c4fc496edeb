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
#include "send/FramePath.h"
#include "send/Send.h"
#include "ucx/Request.h"
#include "wireup/Mailbox.h"
#include "wireup/Wireup.h"
#include "base/Mappings.h"

#include <gtest/gtest.h>
#include <cstdlib>
#include <memory>
#include <sys/mman.h>
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
