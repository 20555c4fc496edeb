/* bfs.h: what the BFS benchmark's jam, ried and program share. */
#ifndef TWOCHAINS_BENCH_BFS_H
#define TWOCHAINS_BENCH_BFS_H

#include <stdint.h>

#define BFS_UNREACHED 0xffffffffu
/* Vertices one rank may own (vertex v belongs to rank v % P). */
#define BFS_MAX_LOCAL (1u << 22)

/* visit: vertex reached at depth; sent to the vertex's owner. 8 bytes, as
 * Graph500's reference sends a visit. */
struct bfs_visit {
  uint32_t vertex, depth;
};

#endif
