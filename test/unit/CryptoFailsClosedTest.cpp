//===- CryptoFailsClosedTest.cpp - No libcrypto algorithms, no access -----===//
//
// Where libcrypto cannot compute (a broken installation: CTest's
// crypto-fails-closed loads only OpenSSL's null provider), nothing may pass
// for a match: a hash is "", a MAC random, so two sides that both failed
// never agree on one, and no signature verifies. Skipped unless
// TC_TEST_NO_CRYPTO is set, as that test sets it.
//
//===----------------------------------------------------------------------===//
#include "Sha256.h"
#include "Signature.h"
#include "wire/Auth.h"

#include <gtest/gtest.h>
#include <cstdlib>
#include <cstring>

using namespace twochains;

TEST(CryptoFailsClosed, WithoutAlgorithms) {
  if (!std::getenv("TC_TEST_NO_CRYPTO"))
    GTEST_SKIP() << "run by CTest's crypto-fails-closed, with only OpenSSL's null provider";
  format::Sha256 H;
  H.update(std::string("abc"));
  EXPECT_EQ(H.hex(), "");
  EXPECT_EQ(format::sha256File("/proc/self/exe"), "");

  rt::JobKey Key;
  Key.Bytes.assign(32, 7);
  uint8_t A[rt::MacSize], B[rt::MacSize], Zero[rt::MacSize] = {};
  EXPECT_FALSE(rt::hmacSha256(Key, {{"hello", 5}}, A));
  EXPECT_FALSE(rt::hmacSha256(Key, {{"hello", 5}}, B));
  EXPECT_FALSE(rt::equalMacs(A, B));
  EXPECT_NE(std::memcmp(A, Zero, sizeof A), 0);

  // RFC 8032, test 1: a good signature, which must still not verify.
  const uint8_t Pk[32] = {0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe,
                          0xd3, 0xc9, 0x64, 0x07, 0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6,
                          0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};
  const uint8_t Sig[64] = {0xe5, 0x56, 0x43, 0x00, 0xc3, 0x60, 0xac, 0x72, 0x90, 0x86, 0xe2,
                           0xcc, 0x80, 0x6e, 0x82, 0x8a, 0x84, 0x87, 0x7f, 0x1e, 0xb8, 0xe5,
                           0xd9, 0x74, 0xd8, 0x73, 0xe0, 0x65, 0x22, 0x49, 0x01, 0x55, 0x5f,
                           0xb8, 0x82, 0x15, 0x90, 0xa3, 0x3b, 0xac, 0xc6, 0x1e, 0x39, 0x70,
                           0x1c, 0xf9, 0xb4, 0x6b, 0xd2, 0x5b, 0xf5, 0xf0, 0x59, 0x5b, 0xbe,
                           0x24, 0x65, 0x51, 0x41, 0x43, 0x8e, 0x7a, 0x10, 0x0b};
  EXPECT_FALSE(format::verifyEd25519(Pk, "", 0, Sig));
}
