//===- LogTest.cpp - The log handler and level ----------------------------===//
#include "base/Log.h"
#include "twochains/twochains.h"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

namespace {

std::vector<std::pair<tc_log_level_t, std::string>> Seen;

void collect(tc_log_level_t Level, const char *Message, void *Arg) {
  EXPECT_EQ(Arg, &Seen);
  Seen.emplace_back(Level, Message);
}

struct LogTest : ::testing::Test {
  void SetUp() override {
    Seen.clear();
    tc_set_log_handler(collect, &Seen);
    tc_set_log_level(TC_LOG_WARN);
  }
  void TearDown() override {
    tc_set_log_handler(nullptr, nullptr);
    tc_set_log_level(TC_LOG_WARN);
  }
};

} // namespace

TEST_F(LogTest, ErrorsOfTheLibraryReachTheHandler) {
  tc_package_params_t P = {TC_PACKAGE_PARAMS_VERSION, TC_PACKAGE_RECEIVER, "/nonexistent/prefix",
                           "nosuch", nullptr};
  tc_package_t *Pkg = nullptr;
  EXPECT_NE(tc_package_load(&P, &Pkg), TC_OK);
  ASSERT_FALSE(Seen.empty());
  EXPECT_EQ(Seen[0].first, TC_LOG_ERROR);
  EXPECT_NE(Seen[0].second.find("nosuch"), std::string::npos) << Seen[0].second;
}

TEST_F(LogTest, TheLevelFiltersAndTheHandlerIsReplaced) {
  logWarning("a warning");
  logInfo("not shown at warn");
  ASSERT_EQ(Seen.size(), 1u);
  EXPECT_EQ(Seen[0].first, TC_LOG_WARN);
  EXPECT_EQ(Seen[0].second, "a warning");
  EXPECT_EQ(tc_set_log_level(TC_LOG_ERROR), TC_OK);
  logWarning("not shown at error");
  EXPECT_EQ(Seen.size(), 1u);
  EXPECT_EQ(tc_set_log_level(TC_LOG_DEBUG), TC_OK);
  logInfo("shown at debug");
  EXPECT_EQ(Seen.size(), 2u);
  EXPECT_EQ(tc_set_log_level(tc_log_level_t(7)), TC_ERR_INVALID_PARAM);
  // The previous handler comes back; NULL restores stderr.
  EXPECT_EQ(tc_set_log_handler(nullptr, nullptr), &collect);
  EXPECT_EQ(tc_set_log_handler(nullptr, nullptr), nullptr);
}

// What a peer can cause again and again is logged within a budget: a
// burst a second, then held back and counted, the count said by the next
// line let through.
TEST(LogLimit, ABurstThenHeldBackAndCounted) {
  using twochains::rt::LogLimit;
  LogLimit L;
  uint64_t T = 5 * LogLimit::PeriodNs, Held = 99;
  for (unsigned I = 0; I < LogLimit::Burst; ++I) {
    ASSERT_TRUE(L.allow(T + I, Held)) << I;
    EXPECT_EQ(Held, 0u);
  }
  for (unsigned I = 0; I < 1000; ++I)
    EXPECT_FALSE(L.allow(T + LogLimit::Burst + I, Held));
  // The next period lets lines through again; the first says what was held.
  ASSERT_TRUE(L.allow(T + LogLimit::PeriodNs, Held));
  EXPECT_EQ(Held, 1000u);
  ASSERT_TRUE(L.allow(T + LogLimit::PeriodNs + 1, Held));
  EXPECT_EQ(Held, 0u);
  EXPECT_EQ(twochains::rt::withSuppressed("refused", 1000),
            "refused (1000 more like it suppressed)");
  EXPECT_EQ(twochains::rt::withSuppressed("refused", 0), "refused");
}
