/* graph.h: what the graph example's jams, ried and application share. */
#ifndef GRAPH_EXAMPLE_H
#define GRAPH_EXAMPLE_H

#include <stdint.h>

#define GRAPH_UNREACHED 0xffffffffu

/* visit: vertex v is reached at depth; sent to v's owner (v % ranks). */
struct graph_visit {
  uint32_t vertex, depth;
};

/* The graph: vertices 0..n-1, each with `degree` out-edges to
 * graph_target(v, k), a hash of v and k: every rank finds the edges of any
 * vertex without storing the graph. */
static inline uint32_t graph_target(uint32_t v, uint32_t k, uint32_t n) {
  uint64_t x = (uint64_t)v * 0x9e3779b97f4a7c15ull + k * 0xbf58476d1ce4e5b9ull + 1;
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 29;
  return (uint32_t)(x % n);
}

#endif
