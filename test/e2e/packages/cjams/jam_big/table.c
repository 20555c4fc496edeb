/* The 64 KiB table of jam big (read-only data), as a library of its
 * own: a second file of the jam. */
#include <stdint.h>

#define E(n) ((uint32_t)((n) * 2654435761u) ^ (uint32_t)((n) >> 3))
#define R1(n) E(n)
#define R2(n) R1(n), R1((n) + 1)
#define R4(n) R2(n), R2((n) + 2)
#define R8(n) R4(n), R4((n) + 4)
#define R16(n) R8(n), R8((n) + 8)
#define R32(n) R16(n), R16((n) + 16)
#define R64(n) R32(n), R32((n) + 32)
#define R128(n) R64(n), R64((n) + 64)
#define R256(n) R128(n), R128((n) + 128)
#define R512(n) R256(n), R256((n) + 256)
#define R1024(n) R512(n), R512((n) + 512)
#define R2048(n) R1024(n), R1024((n) + 1024)
#define R4096(n) R2048(n), R2048((n) + 2048)
#define R8192(n) R4096(n), R4096((n) + 4096)
#define R16384(n) R8192(n), R8192((n) + 8192)

static const uint32_t table[16384] = {R16384(0u)};

uint32_t big_lookup(uint32_t i) { return table[i & 16383u]; }
