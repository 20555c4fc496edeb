//===- Sha256Test.cpp - FIPS 180-4 test vectors ---------------------------===//
#include "Sha256.h"

#include <gtest/gtest.h>

using namespace twochains::format;

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

// The CPU's SHA instructions, where this one has them, and the portable
// code agree on every length around the block boundaries and beyond, and
// both give the known vectors.
TEST(Sha256, HardwareAndPortableAgree) {
  if (!sha256HardwareBlock())
    GTEST_SKIP() << "this CPU has no SHA-256 instructions the runtime uses";
  std::string Data;
  for (int I = 0; I < 1000; ++I)
    Data.push_back(char(I * 131 + 7));
  for (size_t N : {0u, 1u, 55u, 56u, 63u, 64u, 65u, 119u, 120u, 128u, 192u, 1000u}) {
    auto Hash = [&](bool Portable) {
      sha256UsePortable(Portable);
      Sha256 H;
      H.update(Data.data(), N);
      return H.hex();
    };
    std::string Hardware = Hash(false), Portable = Hash(true);
    EXPECT_EQ(Hardware, Portable) << N << " bytes";
  }
  sha256UsePortable(false);
  Sha256 H;
  H.update(std::string("abc"));
  EXPECT_EQ(H.hex(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
