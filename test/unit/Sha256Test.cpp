//===- Sha256Test.cpp - FIPS 180-4 test vectors ---------------------------===//
#include "Sha256.h"

#include <gtest/gtest.h>

using namespace twochains::rt;

TEST(Sha256, KnownVectors) {
  auto Of = [](const std::string &S) {
    Sha256 H;
    H.update(S);
    return H.hex();
  };
  EXPECT_EQ(Of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 Million;
  std::string A(1000, 'a');
  for (int I = 0; I < 1000; ++I)
    Million.update(A);
  EXPECT_EQ(Million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
