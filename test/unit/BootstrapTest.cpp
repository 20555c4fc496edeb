//===- BootstrapTest.cpp - Listening and addresses without a peer ---------===//
#include "twochains/twochains.h"

#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <vector>

// Without it a receiver restarted on its port fails to bind ("Device is
// busy") while the previous run's connections are in TIME_WAIT.
TEST(ContextEnvironment, ReuseAddressIsTheDefault) {
  unsetenv("UCX_TCP_CM_REUSEADDR");
  tc_context_params_t P = {TC_CONTEXT_PARAMS_VERSION};
  tc_context_t *Ctx = nullptr;
  ASSERT_EQ(tc_context_create(&P, &Ctx), TC_OK);
  const char *V = std::getenv("UCX_TCP_CM_REUSEADDR");
  ASSERT_NE(V, nullptr);
  EXPECT_STREQ(V, "y");
  tc_context_destroy(Ctx);
  // What the user set is kept.
  setenv("UCX_TCP_CM_REUSEADDR", "n", 1);
  ASSERT_EQ(tc_context_create(&P, &Ctx), TC_OK);
  EXPECT_STREQ(std::getenv("UCX_TCP_CM_REUSEADDR"), "n");
  tc_context_destroy(Ctx);
  unsetenv("UCX_TCP_CM_REUSEADDR");
}

TEST(Bootstrap, PortZeroAndTheAddressBlob) {
  tc_context_params_t P = {TC_CONTEXT_PARAMS_VERSION};
  tc_context_t *Ctx = nullptr;
  ASSERT_EQ(tc_context_create(&P, &Ctx), TC_OK);
  uint16_t Port = 0;
  size_t Size = 0;
  EXPECT_EQ(tc_listen_port(Ctx, &Port), TC_ERR_INVALID_PARAM) << "not listening yet";
  EXPECT_EQ(tc_context_address(Ctx, nullptr, &Size), TC_ERR_INVALID_PARAM);
  ASSERT_EQ(tc_listen(Ctx, "127.0.0.1", 0), TC_OK);
  ASSERT_EQ(tc_listen_port(Ctx, &Port), TC_OK);
  EXPECT_NE(Port, 0);
  ASSERT_EQ(tc_context_address(Ctx, nullptr, &Size), TC_OK);
  ASSERT_GT(Size, 14u + 4u + 32u);
  EXPECT_LE(Size, 14u + 4u + 32u + 2048u)
      << "one address, the one it listens on, the rank key and the control worker's address";
  std::vector<unsigned char> Blob(Size);
  size_t Small = Size - 1;
  EXPECT_EQ(tc_context_address(Ctx, Blob.data(), &Small), TC_ERR_TOO_LARGE);
  EXPECT_EQ(Small, Size);
  ASSERT_EQ(tc_context_address(Ctx, Blob.data(), &Size), TC_OK);
  EXPECT_EQ(std::memcmp(Blob.data(), "TCAB", 4), 0);
  EXPECT_EQ(Blob[6] | Blob[7] << 8, Port);
  EXPECT_EQ(Blob[14], 127);
  size_t WorkerSize = Blob[12] | Blob[13] << 8;
  EXPECT_GT(WorkerSize, 0u) << "a job's ranks connect from it";
  EXPECT_EQ(Size, 14u + 4u + 32u + WorkerSize);
  tc_context_destroy(Ctx);
}
