//===- Sha256.cpp - FIPS 180-4 SHA-256 ------------------------------------===//
#include "Sha256.h"

#include <cstdio>
#include <cstring>

namespace twochains::format {

const uint32_t Sha256RoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static const uint32_t *const K = Sha256RoundConstants;

static uint32_t rotr(uint32_t X, unsigned N) { return (X >> N) | (X << (32 - N)); }

Sha256::Sha256()
    : State{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
            0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

static void portableBlock(uint32_t State[8], const uint8_t *P);

static bool ForcePortable = false;

void sha256UsePortable(bool Portable) { ForcePortable = Portable; }

void Sha256::compress(const uint8_t *P) {
  static const Sha256BlockFn Hardware = sha256HardwareBlock();
  (Hardware && !ForcePortable ? Hardware : portableBlock)(State, P);
}

static void portableBlock(uint32_t State[8], const uint8_t *P) {
  uint32_t W[64];
  for (int I = 0; I < 16; ++I)
    W[I] = uint32_t(P[4 * I]) << 24 | uint32_t(P[4 * I + 1]) << 16 |
           uint32_t(P[4 * I + 2]) << 8 | uint32_t(P[4 * I + 3]);
  for (int I = 16; I < 64; ++I) {
    uint32_t S0 = rotr(W[I - 15], 7) ^ rotr(W[I - 15], 18) ^ (W[I - 15] >> 3);
    uint32_t S1 = rotr(W[I - 2], 17) ^ rotr(W[I - 2], 19) ^ (W[I - 2] >> 10);
    W[I] = W[I - 16] + S0 + W[I - 7] + S1;
  }
  uint32_t A = State[0], B = State[1], C = State[2], D = State[3],
           E = State[4], F = State[5], G = State[6], H = State[7];
  for (int I = 0; I < 64; ++I) {
    uint32_t S1 = rotr(E, 6) ^ rotr(E, 11) ^ rotr(E, 25);
    uint32_t Ch = (E & F) ^ (~E & G);
    uint32_t T1 = H + S1 + Ch + K[I] + W[I];
    uint32_t S0 = rotr(A, 2) ^ rotr(A, 13) ^ rotr(A, 22);
    uint32_t Maj = (A & B) ^ (A & C) ^ (B & C);
    uint32_t T2 = S0 + Maj;
    H = G; G = F; F = E; E = D + T1;
    D = C; C = B; B = A; A = T1 + T2;
  }
  State[0] += A; State[1] += B; State[2] += C; State[3] += D;
  State[4] += E; State[5] += F; State[6] += G; State[7] += H;
}

void Sha256::update(const void *Data, size_t Size) {
  const uint8_t *P = static_cast<const uint8_t *>(Data);
  Length += Size;
  while (Size) {
    size_t N = std::min(Size, sizeof Block - Used);
    std::memcpy(Block + Used, P, N);
    Used += N;
    P += N;
    Size -= N;
    if (Used == sizeof Block) {
      compress(Block);
      Used = 0;
    }
  }
}

void Sha256::digest(uint8_t Out[32]) {
  uint64_t Bits = Length * 8;
  uint8_t Pad = 0x80;
  update(&Pad, 1);
  padTo56();
  uint8_t Len[8];
  for (int I = 0; I < 8; ++I)
    Len[I] = uint8_t(Bits >> (56 - 8 * I));
  update(Len, 8);
  for (int I = 0; I < 8; ++I)
    for (int B = 0; B < 4; ++B)
      Out[4 * I + B] = uint8_t(State[I] >> (24 - 8 * B));
}

std::string Sha256::hex() {
  uint8_t D[32];
  digest(D);
  static const char Digits[] = "0123456789abcdef";
  std::string Out;
  for (uint8_t B : D) {
    Out.push_back(Digits[B >> 4]);
    Out.push_back(Digits[B & 0xf]);
  }
  return Out;
}

void Sha256::padTo56() {
  static const uint8_t Zeros[64] = {};
  if (Used > 56)
    update(Zeros, sizeof Block - Used);
  update(Zeros, 56 - Used);
}

std::string sha256File(const std::string &Path) {
  FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return "";
  Sha256 H;
  uint8_t Buf[65536];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    H.update(Buf, N);
  bool Failed = std::ferror(F);
  std::fclose(F);
  return Failed ? "" : H.hex();
}

} // namespace twochains::format
