//===- CodeCacheTest.cpp - The W^X code cache: lookup, eviction, mappings -===//
#include "image/CodeCache.h"
#include "JamImageFormat.h"

#include <gtest/gtest.h>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

using namespace twochains::rt;
using namespace twochains::format;

namespace {

/// The permissions of the mapping holding Address, from /proc/self/maps.
std::string permissionsOf(const void *Address) {
  std::ifstream Maps("/proc/self/maps");
  std::string Line;
  auto A = reinterpret_cast<uintptr_t>(Address);
  while (std::getline(Maps, Line)) {
    uintptr_t Lo, Hi;
    char Perms[5] = {};
    if (std::sscanf(Line.c_str(), "%lx-%lx %4s", &Lo, &Hi, Perms) == 3 && A >= Lo && A < Hi)
      return Perms;
  }
  return "";
}

TEST(CodeCache, TwoAliasesNeitherWritableAndExecutable) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(64 * 1024, Error), TC_OK) << Error;
  CachedCode *E = C.reserve(1, 2, 3, 64, 64, false, nullptr);
  ASSERT_NE(E, nullptr);
  std::memset(C.writableCode(*E), 0xc3, 64);
  EXPECT_EQ(C.executableCode(*E)[10], 0xc3) << "both aliases are the same memory";
  EXPECT_EQ(permissionsOf(C.writableCode(*E)), "rw-s");
  EXPECT_EQ(permissionsOf(C.executableCode(*E)), "r-xs");
  // And the code really runs from the executable alias (x86: ret).
#if defined(__x86_64__)
  reinterpret_cast<void (*)()>(const_cast<uint8_t *>(C.executableCode(*E)))();
#endif
}

TEST(CodeCache, FindsByKeyPackageAndElement) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(64 * 1024, Error), TC_OK);
  ASSERT_NE(C.reserve(0xabc, 7, 1, 128, 64, false, nullptr), nullptr);
  EXPECT_NE(C.find(0xabc, 7, 1), nullptr);
  EXPECT_EQ(C.find(0xabc, 7, 2), nullptr) << "same code, other element";
  EXPECT_EQ(C.find(0xabc, 8, 1), nullptr) << "same code, other package";
  EXPECT_EQ(C.find(0xabd, 7, 1), nullptr);
}

TEST(CodeCache, EvictsLeastRecentlyUsedToStayWithinItsSize) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(4096, Error), TC_OK);
  unsigned Evicted = 0;
  for (uint32_t K = 1; K <= 4; ++K) // 4 x 1024 bytes fill it
    ASSERT_NE(C.reserve(K, 1, K, 1024, 64, false, &Evicted), nullptr);
  EXPECT_EQ(Evicted, 0u);
  EXPECT_EQ(C.bytesFree(), 0u);
  ASSERT_NE(C.find(1, 1, 1), nullptr); // 1 is now the most recent; 2 the oldest
  ASSERT_NE(C.reserve(5, 1, 5, 1024, 64, false, &Evicted), nullptr);
  EXPECT_EQ(Evicted, 1u);
  EXPECT_EQ(C.find(2, 1, 2), nullptr) << "the least recently used went";
  EXPECT_NE(C.find(1, 1, 1), nullptr);
  EXPECT_NE(C.find(5, 1, 5), nullptr);
  // A larger image evicts, oldest first, until a contiguous run fits: here
  // 3, 4, 1 and 5 (1 and 5 sit at both ends of the arena).
  ASSERT_NE(C.reserve(6, 1, 6, 3000, 64, false, &Evicted), nullptr);
  EXPECT_EQ(Evicted, 4u);
  EXPECT_EQ(C.entries(), 1u);
  EXPECT_NE(C.find(6, 1, 6), nullptr);
  EXPECT_EQ(C.reserve(7, 1, 7, 8192, 64, false, &Evicted), nullptr) << "larger than the cache";
}

/// find() looks at the entry it found last before it probes: an evicted
/// one must not be found that way, not even under the zero key an evicted
/// entry's fields are reset to.
TEST(CodeCache, AnEvictedEntryIsNotFoundAsTheOneFoundLast) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(4096, Error), TC_OK);
  ASSERT_NE(C.reserve(1, 1, 1, 1024, 64, false, nullptr), nullptr);
  ASSERT_NE(C.reserve(2, 1, 2, 2048, 64, /*Pinned=*/true, nullptr), nullptr);
  ASSERT_NE(C.find(1, 1, 1), nullptr);
  // Evicts 1 and still finds no room: 1's entry is freed and not reused.
  unsigned Evicted = 0;
  EXPECT_EQ(C.reserve(3, 1, 3, 3072, 64, false, &Evicted), nullptr);
  EXPECT_EQ(Evicted, 1u);
  EXPECT_EQ(C.find(1, 1, 1), nullptr);
  EXPECT_EQ(C.find(0, 0, 0), nullptr);
  EXPECT_NE(C.find(2, 1, 2), nullptr);
}

TEST(CodeCache, RandomInstallsAndEvictionsKeepEveryLiveEntryFindable) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(16 * 1024, Error), TC_OK);
  std::mt19937_64 Rng(7);
  std::set<uint64_t> Ever;
  for (int I = 0; I < 20000; ++I) {
    uint64_t Key = Rng() % 300 + 1;
    if (C.find(Key, 1, uint32_t(Key)))
      continue;
    uint32_t Size = uint32_t(64 * (Rng() % 24 + 1));
    CachedCode *E = C.reserve(Key, 1, uint32_t(Key), Size, 64, false, nullptr);
    ASSERT_NE(E, nullptr);
    std::memset(C.writableCode(*E), int(Key), Size);
    Ever.insert(Key);
    // Every entry the cache still holds is found, and its bytes are its own:
    // no two live entries overlap.
    size_t Live = 0, Bytes = 0;
    for (uint64_t K : Ever)
      if (const CachedCode *F = C.find(K, 1, uint32_t(K))) {
        ++Live;
        Bytes += (F->Size + 63) / 64 * 64;
        const uint8_t *Code = C.executableCode(*F);
        for (uint32_t B = 0; B < F->Size; B += 64)
          ASSERT_EQ(Code[B], uint8_t(K)) << "entry " << K << " overwritten";
      }
    ASSERT_EQ(Live, C.entries());
    ASSERT_EQ(Bytes + C.bytesFree(), C.capacity());
  }
}

} // namespace

TEST(CodeCache, PinnedEntriesAreNeverEvicted) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(4096, Error), TC_OK);
  unsigned Evicted = 0;
  ASSERT_NE(C.reserve(1, 1, 1, 2048, 64, true, &Evicted), nullptr);
  ASSERT_NE(C.reserve(2, 1, 2, 2048, 64, false, &Evicted), nullptr);
  ASSERT_NE(C.reserve(3, 1, 3, 2048, 64, false, &Evicted), nullptr) << "evicts 2, not 1";
  EXPECT_EQ(Evicted, 1u);
  EXPECT_NE(C.find(1, 1, 1), nullptr);
  EXPECT_EQ(C.find(2, 1, 2), nullptr);
  ASSERT_NE(C.reserve(4, 1, 4, 2048, 64, true, &Evicted), nullptr);
  EXPECT_EQ(C.reserve(5, 1, 5, 64, 64, false, &Evicted), nullptr)
      << "only pinned entries are left: no room can be made";
  EXPECT_NE(C.find(1, 1, 1), nullptr);
  EXPECT_NE(C.find(4, 1, 4), nullptr);
}

TEST(CodeCache, AlignedReservationsStartOnTheirBoundary) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(64 * 1024, Error), TC_OK);
  ASSERT_NE(C.reserve(1, 1, 1, 64, 64, false, nullptr), nullptr);
  const CachedCode *A = C.reserve(2, 1, 2, 128, 4096, false, nullptr);
  ASSERT_NE(A, nullptr);
  EXPECT_EQ(A->Offset % 4096, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(C.executableCode(*A)) % 4096, 0u);
  // The gap before it stays free for smaller entries.
  const CachedCode *B = C.reserve(3, 1, 3, 64, 64, false, nullptr);
  ASSERT_NE(B, nullptr);
  EXPECT_LT(B->Offset, A->Offset);
}

TEST(CodeCache, DataArenaIsWritableNeverExecutableAtTheJamDistance) {
  CodeCache C;
  std::string Error;
  ASSERT_EQ(C.create(64 * 1024, Error), TC_OK);
  CachedCode *E = C.reserve(1, 1, 1, 256, 64, true, nullptr);
  ASSERT_NE(E, nullptr);
  EXPECT_EQ(C.dataArea(*E), C.executableCode(*E) + JamDataDistance);
  C.dataArea(*E)[0] = 42;
  EXPECT_EQ(permissionsOf(C.dataArea(*E)), "rw-p");
  EXPECT_EQ(permissionsOf(C.executableCode(*E)), "r-xs");
}

TEST(CodeCache, AnArenaLargerThanTheDataDistanceIsRefused) {
  CodeArena A;
  std::string Error;
  EXPECT_EQ(A.create(size_t(JamDataDistance) + 4096, Error), TC_ERR_INVALID_PARAM);
  EXPECT_NE(Error.find("between a jam's code and its data"), std::string::npos) << Error;
}
