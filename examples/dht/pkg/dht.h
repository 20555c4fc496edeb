/* dht.h: what the DHT example's jams and its application share. */
#ifndef DHT_EXAMPLE_H
#define DHT_EXAMPLE_H

#include <stdint.h>

/* insert: a key and its value; the answer is an int32 (0 new, 1 updated,
 * -1 the table is full). The package header repeats this type for
 * dht_call_insert, under the guard its name gives (docs/packages.md). */
#ifndef TWOCHAINS_ARGS_DHT_INSERT
#define TWOCHAINS_ARGS_DHT_INSERT
struct dht_insert_args {
  uint64_t key, value;
};
#endif

/* lookup: the payload is the key; the answer is a dht_found. */
struct dht_found {
  uint64_t value;
  uint32_t found; /* 1 if the key is there */
  uint32_t reserved;
};

/* walk: starting at key, follow "value is the next key" for hops hops on
 * the receiver, and answer once with where it ended. */
struct dht_walk {
  uint64_t key;
  uint32_t hops, reserved;
};
struct dht_walked {
  uint64_t key;   /* the key reached */
  uint32_t hops;  /* hops made (fewer if a key was missing) */
  uint32_t reserved;
};

#endif
