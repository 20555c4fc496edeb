#include <stdint.h>

static uint64_t state = 1;
static uint64_t mix(uint64_t v) { return v * 6364136223846793005ull + 1442695040888963407ull; }

uint64_t pair_a_next(uint64_t v) { return state = mix(state ^ v); }
