//===- Sha256Test.cpp - FIPS 180-4 test vectors, through libcrypto --------===//
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

// Every length around the block and padding boundaries and beyond (the
// hashes of 225 lengths, hashed; the answer is Python's hashlib's). CTest
// runs this with libcrypto's SHA extensions both on and off
// (OPENSSL_ia32cap), and test/aarch64 with its ARMv8 ones both ways.
TEST(Sha256, KnownAnswerAtManyLengths) {
  Sha256 All;
  std::string Bytes;
  int Lengths = 0;
  for (size_t N = 0; N <= 1100; N += (N < 200 ? 1 : 37), ++Lengths) {
    Bytes.resize(N);
    for (size_t I = 0; I < N; ++I)
      Bytes[I] = char(I * 31 + N);
    Sha256 H;
    H.update(Bytes);
    uint8_t D[32];
    ASSERT_TRUE(H.digest(D));
    All.update(D, sizeof D);
  }
  EXPECT_EQ(Lengths, 225);
  EXPECT_EQ(All.hex(), "ad051bc039f1b281d36233a0757a1ef3fb5f00152731e78be8fc4ed4c6322579");
}

// Updates of any sizes, empty ones among them, make the digest of the bytes.
TEST(Sha256, UpdatesInPieces) {
  std::string Data;
  for (int I = 0; I < 300; ++I)
    Data.push_back(char(I * 131 + 7));
  Sha256 Whole;
  Whole.update(Data);
  std::string Expected = Whole.hex();
  for (size_t Piece : {1u, 3u, 63u, 64u, 65u, 299u}) {
    Sha256 H;
    for (size_t At = 0; At < Data.size(); At += Piece) {
      H.update(Data.data() + At, std::min(Piece, Data.size() - At));
      H.update(nullptr, 0);
    }
    EXPECT_EQ(H.hex(), Expected) << "pieces of " << Piece;
  }
}

// A spent object gives no digest rather than one of nothing: "" never
// equals a recorded hash.
TEST(Sha256, SpentObjectGivesNoDigest) {
  Sha256 H;
  H.update(std::string("abc"));
  EXPECT_EQ(H.hex().size(), 64u);
  EXPECT_EQ(H.hex(), "");
  uint8_t D[32];
  EXPECT_FALSE(H.digest(D));
}
