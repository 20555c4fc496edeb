#include <stdint.h>

static uint64_t state = 2;
static uint64_t mix(uint64_t v) { return (v << 7 | v >> 57) + 0x9e3779b97f4a7c15ull; }

uint64_t pair_b_next(uint64_t v) { return state = mix(state + v); }
