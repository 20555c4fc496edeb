/* census_api.h: what the census jam and the application share. */
#ifndef CENSUS_API_H
#define CENSUS_API_H

#include <stdint.h>

/* The keys first .. first + count - 1 are looked up. The package header
 * repeats this type for census_call_census, under its guard. */
#ifndef TWOCHAINS_ARGS_CENSUS_CENSUS
#define TWOCHAINS_ARGS_CENSUS_CENSUS
struct census_span {
  uint64_t first, count;
};
#endif

/* The answer: how many of them the table holds, and their values' sum. */
struct census_counted {
  uint64_t present, sum;
};

#endif
