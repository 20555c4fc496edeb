//===- Sha256X86.cpp - SHA-256 blocks with the x86 SHA extensions ---------===//
//
// SHA256RNDS2 does two rounds on the state held as (A,B,E,F) and (C,D,G,H);
// SHA256MSG1/MSG2 extend the message schedule four words at a time. Used
// when CPUID says the CPU has them (leaf 7, EBX bit 29) along with SSE4.1.
//
//===----------------------------------------------------------------------===//
#include "Sha256.h"

#include <cpuid.h>
#include <immintrin.h>

namespace twochains::format {

__attribute__((target("sha,sse4.1"))) static void shaExtensionsBlock(uint32_t State[8],
                                                                      const uint8_t *Block) {
  // Words are big-endian in the block.
  const __m128i Swap = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
  __m128i DCBA = _mm_loadu_si128(reinterpret_cast<const __m128i *>(State));
  __m128i HGFE = _mm_loadu_si128(reinterpret_cast<const __m128i *>(State + 4));
  __m128i CDAB = _mm_shuffle_epi32(DCBA, 0xB1);
  __m128i EFGH = _mm_shuffle_epi32(HGFE, 0x1B);
  __m128i ABEF = _mm_alignr_epi8(CDAB, EFGH, 8);
  __m128i CDGH = _mm_blend_epi16(EFGH, CDAB, 0xF0);
  const __m128i ABEFStart = ABEF, CDGHStart = CDGH;

  // M[G % 4] holds schedule words 4G..4G+3 once group G is reached.
  __m128i M[4];
  for (int I = 0; I < 4; ++I)
    M[I] = _mm_shuffle_epi8(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(Block + 16 * I)), Swap);
  for (int G = 0; G < 16; ++G) {
    if (G >= 4) {
      // W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time.
      __m128i Minus16 = M[G & 3], Minus12 = M[(G + 1) & 3];
      __m128i Minus8 = M[(G + 2) & 3], Minus4 = M[(G + 3) & 3];
      __m128i T = _mm_sha256msg1_epu32(Minus16, Minus12);
      T = _mm_add_epi32(T, _mm_alignr_epi8(Minus4, Minus8, 4)); // W[t-7..t-4]
      M[G & 3] = _mm_sha256msg2_epu32(T, Minus4);
    }
    __m128i X = _mm_add_epi32(
        M[G & 3], _mm_loadu_si128(reinterpret_cast<const __m128i *>(Sha256RoundConstants + 4 * G)));
    CDGH = _mm_sha256rnds2_epu32(CDGH, ABEF, X);
    X = _mm_shuffle_epi32(X, 0x0E); // the other two words
    ABEF = _mm_sha256rnds2_epu32(ABEF, CDGH, X);
  }
  ABEF = _mm_add_epi32(ABEF, ABEFStart);
  CDGH = _mm_add_epi32(CDGH, CDGHStart);
  __m128i FEBA = _mm_shuffle_epi32(ABEF, 0x1B);
  __m128i DCHG = _mm_shuffle_epi32(CDGH, 0xB1);
  DCBA = _mm_blend_epi16(FEBA, DCHG, 0xF0);
  HGFE = _mm_alignr_epi8(DCHG, FEBA, 8);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(State), DCBA);
  _mm_storeu_si128(reinterpret_cast<__m128i *>(State + 4), HGFE);
}

Sha256BlockFn sha256HardwareBlock() {
  unsigned A, B, C, D;
  if (!__get_cpuid(1, &A, &B, &C, &D) || !(C & bit_SSE4_1))
    return nullptr;
  if (!__get_cpuid_count(7, 0, &A, &B, &C, &D) || !(B & bit_SHA))
    return nullptr;
  return shaExtensionsBlock;
}

} // namespace twochains::format
