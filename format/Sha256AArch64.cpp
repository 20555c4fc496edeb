//===- Sha256AArch64.cpp - SHA-256 blocks with the ARMv8 SHA2 instructions -===//
//
// SHA256H/SHA256H2 do four rounds on the state held as (A,B,C,D) and
// (E,F,G,H); SHA256SU0/SU1 extend the message schedule four words at a
// time. Used when the kernel reports them (AT_HWCAP, HWCAP_SHA2);
// test/aarch64 checks them against the portable code under qemu.
//
//===----------------------------------------------------------------------===//
#include "Sha256.h"

#include <arm_neon.h>
#include <sys/auxv.h>

#ifndef HWCAP_SHA2
#define HWCAP_SHA2 (1 << 6)
#endif

namespace twochains::format {

__attribute__((target("sha2"))) static void sha2Block(uint32_t State[8], const uint8_t *Block) {
  uint32x4_t ABCD = vld1q_u32(State), EFGH = vld1q_u32(State + 4);
  const uint32x4_t ABCDStart = ABCD, EFGHStart = EFGH;
  // M[G % 4] holds schedule words 4G..4G+3 once group G is reached; the
  // block's words are big-endian.
  uint32x4_t M[4];
  for (int I = 0; I < 4; ++I)
    M[I] = vreinterpretq_u32_u8(vrev32q_u8(vld1q_u8(Block + 16 * I)));
  for (int G = 0; G < 16; ++G) {
    uint32x4_t W = vaddq_u32(M[G % 4], vld1q_u32(Sha256RoundConstants + 4 * G));
    uint32x4_t Before = ABCD;
    ABCD = vsha256hq_u32(ABCD, EFGH, W);
    EFGH = vsha256h2q_u32(EFGH, Before, W);
    if (G < 12) // group G + 4, into the slot group G just used
      M[G % 4] = vsha256su1q_u32(vsha256su0q_u32(M[G % 4], M[(G + 1) % 4]), M[(G + 2) % 4],
                                 M[(G + 3) % 4]);
  }
  vst1q_u32(State, vaddq_u32(ABCD, ABCDStart));
  vst1q_u32(State + 4, vaddq_u32(EFGH, EFGHStart));
}

Sha256BlockFn sha256HardwareBlock() {
  return (getauxval(AT_HWCAP) & HWCAP_SHA2) ? sha2Block : nullptr;
}

} // namespace twochains::format
