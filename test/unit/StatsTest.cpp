//===- StatsTest.cpp - tc_context_stats against older and newer headers ---===//
#include <twochains/twochains.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

namespace {

/// tc_stats_t grows at its end. A caller's struct may be smaller (built
/// against an older header) or larger (a newer one): it is filled to its
/// own size, never past it, with zeros for counters this library lacks.
TEST(Stats, FilledToTheCallersSizeNeverPast) {
  tc_context_params_t P = {TC_CONTEXT_PARAMS_VERSION};
  tc_context_t *Ctx = nullptr;
  ASSERT_EQ(tc_context_create(&P, &Ctx), TC_OK);
  unsigned char Buffer[sizeof(tc_stats_t) + 16];
  auto *Stats = reinterpret_cast<tc_stats_t *>(Buffer);

  std::memset(Buffer, 0xab, sizeof Buffer);
  ASSERT_EQ(tc_context_stats_sized(Ctx, Stats, 16), TC_OK);
  EXPECT_EQ(Stats->frames_sent, 0u);
  for (size_t I = 16; I < sizeof Buffer; ++I)
    ASSERT_EQ(Buffer[I], 0xab) << "written past 16 bytes, at " << I;

  // The symbol programs built before the sized call link to: the struct as
  // it was then, up to peers_direct.
  std::memset(Buffer, 0xab, sizeof Buffer);
#undef tc_context_stats
  ASSERT_EQ(tc_context_stats(Ctx, Stats), TC_OK);
  for (size_t I = offsetof(tc_stats_t, frames_coalesced); I < sizeof Buffer; ++I)
    ASSERT_EQ(Buffer[I], 0xab) << "the old call wrote past peers_direct, at " << I;

  std::memset(Buffer, 0xab, sizeof Buffer);
  ASSERT_EQ(tc_context_stats_sized(Ctx, Stats, sizeof Buffer), TC_OK);
  for (size_t I = sizeof(tc_stats_t); I < sizeof Buffer; ++I)
    ASSERT_EQ(Buffer[I], 0) << "a newer caller's counters are zeros, at " << I;

  EXPECT_EQ(tc_context_stats_sized(Ctx, Stats, 12), TC_ERR_INVALID_PARAM);
  EXPECT_EQ(tc_context_stats_sized(nullptr, Stats, 16), TC_ERR_INVALID_PARAM);
  tc_context_destroy(Ctx);
}

} // namespace
