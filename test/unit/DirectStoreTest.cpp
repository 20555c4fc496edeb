//===- DirectStoreTest.cpp - Where a sender may store into a peer's ring --===//
//
// A receiver's offer names the address its key maps: the sender stores
// there only inside a writable shared mapping (Mailbox.cpp).
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

#include <gtest/gtest.h>
#include <cstdlib>
#include <memory>
#include <sys/mman.h>
#include <unistd.h>

using namespace twochains::rt;

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
