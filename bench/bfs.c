/* bfs: Graph500's kernel 2 (breadth-first search of a Kronecker graph) as a
 * user writes it from the docs, against an MPI BFS that aggregates its
 * visits as Graph500's reference does, in the same job:
 *
 *   mpirun -np P tc-bfs [--scale 14] [--edgefactor 16] [--roots 8] [--variants tc,mpi]
 *
 * The graph: 2^scale vertices, edgefactor * 2^scale edges drawn by the
 * Kronecker recursion with Graph500's A = 0.57, B = C = 0.19, labels
 * scrambled, undirected, self-loops dropped; vertex v belongs to rank
 * v % P (a 1-D partition). Every rank builds the whole graph (its
 * construction is not timed) and searches only from the vertices it owns.
 *
 * Variants, level-synchronous, each root in turn for each:
 *   tc   one tc_send_wait (TC_SEND_LOCAL) per visit of a vertex of another
 *        rank, 8 bytes, run by the `visit` jam on arrival; each level
 *        ended by tc_job_quiesce; default settings
 *   mpi  visits gathered per destination into 32 KiB buffers (4096
 *        visits), each sent by MPI_Isend when full and at the level's end;
 *        the level ends when every rank has received the buffers the
 *        others counted out to it (MPI_Alltoall of the counts)
 * Each variant first searches once from the first root, untimed (a
 * warm-up: the ranks connect on first use, MPI's in MPI_Init). Every
 * search's depths are checked against a BFS of the whole graph in one
 * process. TEPS as Graph500 counts them: the input edges of the
 * component searched (the degrees of the vertices reached, halved) over
 * the search's time, the harmonic mean over the roots. Rank 0 prints one
 * line per variant and the ratio. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <twochains/mpi.h>
#include <twochains/packages/bfs.h>

#include "bfs-pkg/bfs.h"
#include "job_common.h"

enum { VisitsPerBuffer = 32768 / sizeof(struct bfs_visit), TagVisits = 7 };

static unsigned rank_, ranks_;
static uint32_t scale = 14, edgefactor = 16, roots = 8;
static uint32_t n_vertices;
static uint64_t n_edges;
/* The whole graph, both directions of each edge (CSR). */
static uint64_t *offsets;
static uint32_t *targets;

static tc_context_t *ctx;
static tc_package_t *pkg;
static uint32_t *g_local_count, *g_depth, *g_next, *g_next_count;
static uint64_t *g_errors;

static void fail(const char *what, const char *why) {
  fprintf(stderr, "bfs: rank %u: %s: %s\n", rank_, what, why);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A bijection of [0, 2^scale): labels scrambled, as Graph500 permutes them,
 * so that the Kronecker graph's heavy vertices do not all land on rank 0. */
static uint32_t scramble(uint32_t v) {
  uint64_t mask = n_vertices - 1, x = v;
  for (int round = 0; round < 3; round++) {
    x = (x * 0x2545f491ull + 0x9e37ull + round) & mask;
    x ^= x >> (scale / 2 + 1);
  }
  return (uint32_t)x;
}

/* Edge i of the Kronecker graph: each bit of both ends chosen by one
 * quadrant draw (A = 0.57, B = C = 0.19, D = 0.05), from a counter-based
 * generator: every rank draws the same graph. */
static void kronecker_edge(uint64_t i, uint32_t *u, uint32_t *v) {
  uint32_t a = 0, b = 0;
  for (uint32_t bit = 0; bit < scale; bit++) {
    double r = (double)(mix(i * 64 + bit) >> 11) * (1.0 / 9007199254740992.0);
    uint32_t ab = r < 0.57 ? 0 : r < 0.76 ? 1 : r < 0.95 ? 2 : 3;
    a |= (ab >> 1) << bit;
    b |= (ab & 1) << bit;
  }
  *u = scramble(a);
  *v = scramble(b);
}

static void build_graph(void) {
  n_vertices = 1u << scale;
  n_edges = (uint64_t)edgefactor << scale;
  uint32_t(*edges)[2] = malloc(sizeof *edges * n_edges);
  offsets = calloc(n_vertices + 1, sizeof *offsets);
  if (!edges || !offsets)
    fail("the graph", "out of memory");
  for (uint64_t i = 0; i < n_edges; i++) {
    kronecker_edge(i, &edges[i][0], &edges[i][1]);
    if (edges[i][0] != edges[i][1]) {
      offsets[edges[i][0] + 1]++;
      offsets[edges[i][1] + 1]++;
    }
  }
  for (uint32_t v = 0; v < n_vertices; v++)
    offsets[v + 1] += offsets[v];
  targets = malloc(sizeof *targets * (offsets[n_vertices] + 1));
  uint64_t *at = malloc(sizeof *at * n_vertices);
  if (!targets || !at)
    fail("the graph", "out of memory");
  memcpy(at, offsets, sizeof *at * n_vertices);
  for (uint64_t i = 0; i < n_edges; i++)
    if (edges[i][0] != edges[i][1]) {
      targets[at[edges[i][0]]++] = edges[i][1];
      targets[at[edges[i][1]]++] = edges[i][0];
    }
  free(at);
  free(edges);
}

/* One process's BFS of the whole graph: the reference. */
static uint32_t *reference(uint32_t root) {
  uint32_t *depth = malloc(sizeof *depth * n_vertices), *queue = malloc(sizeof *queue * n_vertices);
  for (uint32_t v = 0; v < n_vertices; v++)
    depth[v] = BFS_UNREACHED;
  uint32_t head = 0, tail = 0;
  depth[root] = 0;
  queue[tail++] = root;
  while (head < tail) {
    uint32_t v = queue[head++];
    for (uint64_t e = offsets[v]; e < offsets[v + 1]; e++)
      if (depth[targets[e]] == BFS_UNREACHED) {
        depth[targets[e]] = depth[v] + 1;
        queue[tail++] = targets[e];
      }
  }
  free(queue);
  return depth;
}

static uint32_t owned(void) { return (n_vertices - rank_ + ranks_ - 1) / ranks_; }

/* This rank's search state: the ried's (tc) or the same layout of its own
 * (mpi), reset before each search. */
static uint32_t *depth_, *next_, *next_count_;

static void reset(uint32_t root, uint32_t *frontier, uint32_t *count) {
  for (uint32_t i = 0; i < owned(); i++)
    depth_[i] = BFS_UNREACHED;
  *next_count_ = 0;
  *count = 0;
  if (root % ranks_ == rank_) {
    depth_[root / ranks_] = 0;
    frontier[(*count)++] = root;
  }
}

/* A visit of a vertex this rank owns. */
static void visit_here(uint32_t vertex, uint32_t depth) {
  uint32_t *d = &depth_[vertex / ranks_];
  if (*d == BFS_UNREACHED) {
    *d = depth;
    next_[(*next_count_)++] = vertex;
  }
}

/* The level's reached vertices become the frontier; whether any rank
 * reached one. */
static int next_level(uint32_t *frontier, uint32_t *count) {
  *count = *next_count_;
  memcpy(frontier, next_, sizeof *frontier * *count);
  *next_count_ = 0;
  uint32_t total = 0;
  MPI_Allreduce(count, &total, 1, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
  return total != 0;
}

/* One level: the frontier's edges, each visit of another rank's vertex
 * handed to Remote. */
static void expand(uint32_t level, const uint32_t *frontier, uint32_t count,
                   void (*remote)(uint32_t owner, struct bfs_visit m)) {
  for (uint32_t i = 0; i < count; i++) {
    uint32_t v = frontier[i];
    for (uint64_t e = offsets[v]; e < offsets[v + 1]; e++) {
      uint32_t u = targets[e], owner = u % ranks_;
      if (owner == rank_)
        visit_here(u, level + 1);
      else
        remote(owner, (struct bfs_visit){u, level + 1});
    }
  }
}

static void send_frame(uint32_t owner, struct bfs_visit m) {
  tc_peer_t *peer;
  tc_status_t st = tc_job_peer(ctx, owner, &peer);
  if (st == TC_OK)
    st = tc_send_wait(peer, pkg, BFS_VISIT, TC_SEND_LOCAL, &m, sizeof m, 60000);
  if (st != TC_OK)
    fail("tc_send_wait", tc_status_string(st));
}

/* --phases: where the tc search's time goes, per rank (seconds). */
static int phases;
static double phase_expand, phase_quiesce, phase_levels;

static void search_tc(uint32_t root, uint32_t *frontier) {
  uint32_t count;
  reset(root, frontier, &count);
  for (uint32_t level = 0;; level++) {
    double t0 = phases ? MPI_Wtime() : 0;
    expand(level, frontier, count, send_frame);
    double t1 = phases ? MPI_Wtime() : 0;
    tc_status_t st = tc_job_quiesce(ctx, 600000);
    if (st != TC_OK)
      fail("tc_job_quiesce", tc_status_string(st));
    if (phases) {
      phase_expand += t1 - t0;
      phase_quiesce += MPI_Wtime() - t1;
      phase_levels += 1;
    }
    if (!next_level(frontier, &count))
      return;
  }
}

/* mpi: per destination, a buffer being filled and the one in flight. */
struct outbox {
  struct bfs_visit *filling, *sending;
  uint32_t count;
  MPI_Request request;
};
static struct outbox *outboxes;
static struct bfs_visit *inbox;
static uint32_t *sent_to, *expected_from;

static void take_visits(int count) {
  for (int i = 0; i < count; i++)
    visit_here(inbox[i].vertex, inbox[i].depth);
}

/* Runs the buffers that have arrived, without waiting. Returns how many. */
static unsigned receive_ready(void) {
  unsigned taken = 0;
  for (;;) {
    int ready = 0;
    MPI_Status s;
    MPI_Iprobe(MPI_ANY_SOURCE, TagVisits, MPI_COMM_WORLD, &ready, &s);
    if (!ready)
      return taken;
    int bytes = 0;
    MPI_Get_count(&s, MPI_BYTE, &bytes);
    MPI_Recv(inbox, bytes, MPI_BYTE, s.MPI_SOURCE, TagVisits, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    take_visits(bytes / (int)sizeof *inbox);
    taken++;
  }
}

static unsigned received_;

static void send_buffer(uint32_t to) {
  struct outbox *o = &outboxes[to];
  if (!o->count)
    return;
  /* The previous buffer to this rank must have left; take what arrives
   * meanwhile, so that two ranks sending to each other never wait on
   * each other. */
  for (int done = 0; !done;) {
    MPI_Test(&o->request, &done, MPI_STATUS_IGNORE);
    if (!done)
      received_ += receive_ready();
  }
  struct bfs_visit *t = o->sending;
  o->sending = o->filling;
  o->filling = t;
  MPI_Isend(o->sending, (int)(o->count * sizeof *o->sending), MPI_BYTE, (int)to, TagVisits,
            MPI_COMM_WORLD, &o->request);
  o->count = 0;
  sent_to[to]++;
}

/* A visit into its destination's buffer, which leaves when full; what
 * has arrived is taken every 2048 visits (MPI_Iprobe is not free: every
 * 64 made this search five times slower). */
static void buffer_visit(uint32_t owner, struct bfs_visit m) {
  static unsigned visits;
  struct outbox *o = &outboxes[owner];
  o->filling[o->count++] = m;
  if (o->count == VisitsPerBuffer)
    send_buffer(owner);
  if ((++visits & 2047) == 0)
    received_ += receive_ready();
}

static void search_mpi(uint32_t root, uint32_t *frontier) {
  uint32_t count;
  reset(root, frontier, &count);
  for (uint32_t level = 0;; level++) {
    memset(sent_to, 0, sizeof *sent_to * ranks_);
    received_ = 0;
    expand(level, frontier, count, buffer_visit);
    for (uint32_t r = 0; r < ranks_; r++)
      send_buffer(r);
    /* The counts, while taking what arrives: a rank that stopped
     * receiving would hold up the sends of those still flushing. */
    MPI_Request counted;
    MPI_Ialltoall(sent_to, 1, MPI_UINT32_T, expected_from, 1, MPI_UINT32_T, MPI_COMM_WORLD,
                  &counted);
    for (int done = 0; !done;) {
      MPI_Test(&counted, &done, MPI_STATUS_IGNORE);
      received_ += receive_ready();
    }
    unsigned expected = 0;
    for (uint32_t r = 0; r < ranks_; r++)
      expected += expected_from[r];
    while (received_ < expected)
      received_ += receive_ready();
    for (uint32_t r = 0; r < ranks_; r++)
      MPI_Wait(&outboxes[r].request, MPI_STATUS_IGNORE);
    if (!next_level(frontier, &count))
      return;
  }
}

/* Whether every rank's depths match the reference; the edges of the
 * component searched (Graph500's count). */
static int check(const uint32_t *ref, uint64_t *edges) {
  uint64_t mine[2] = {0, 0}, all[2];
  for (uint32_t i = 0; i < owned(); i++) {
    uint32_t v = i * ranks_ + rank_;
    mine[0] += depth_[i] != ref[v];
    if (ref[v] != BFS_UNREACHED)
      mine[1] += offsets[v + 1] - offsets[v];
  }
  MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  *edges = all[1] / 2;
  return all[0] == 0;
}

static void *symbol(const char *name) {
  void *p = tc_package_symbol(pkg, name);
  if (!p)
    fail(name, "not in the bfs package");
  return p;
}

static void usage(void) {
  fprintf(stderr, "usage: mpirun -np P tc-bfs [--scale 14] [--edgefactor 16] [--roots 8] "
                  "[--variants tc,mpi] [--phases]\n");
}

int main(int argc, char **argv) {
  const char *variants = "tc,mpi";
  MPI_Init(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--phases")) {
      phases = 1;
      continue;
    }
    if (!strcmp(argv[i], "--help")) {
      usage();
      MPI_Finalize();
      return 0;
    }
    if (i + 1 >= argc) {
      usage();
      return 2;
    }
    if (!strcmp(argv[i], "--scale"))
      scale = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--edgefactor"))
      edgefactor = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--roots"))
      roots = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--variants"))
      variants = argv[++i];
    else {
      usage();
      return 2;
    }
  }
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  rank_ = (unsigned)r;
  ranks_ = (unsigned)p;
  if (scale < 4 || scale > 26 || !edgefactor || edgefactor > 64 || !roots) {
    usage();
    return 2;
  }
  build_graph();
  if (owned() > BFS_MAX_LOCAL)
    fail("the graph", "more vertices per rank than the package holds (BFS_MAX_LOCAL)");

  tc_context_params_t cp = {0};
  cp.version = TC_CONTEXT_PARAMS_VERSION;
  tc_status_t st;
  if ((st = bfs_package_load(TC_BFS_PREFIX, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg)) !=
          TC_OK ||
      (st = tc_context_create(&cp, &ctx)) != TC_OK ||
      (st = tc_context_add_package(ctx, pkg)) != TC_OK ||
      (st = tc_job_join_mpi(ctx, MPI_COMM_WORLD)) != TC_OK)
    fail("setup", tc_status_string(st));
  g_local_count = symbol("bfs_local_count");
  g_depth = symbol("bfs_depth");
  g_next = symbol("bfs_next");
  g_next_count = symbol("bfs_next_count");
  g_errors = symbol("bfs_errors");
  *g_local_count = owned();

  uint32_t *frontier = malloc(sizeof *frontier * (owned() + 1));
  uint32_t *own_depth = malloc(sizeof *own_depth * (owned() + 1));
  uint32_t *own_next = malloc(sizeof *own_next * (owned() + 1)), own_next_count = 0;
  outboxes = calloc(ranks_, sizeof *outboxes);
  inbox = malloc(sizeof *inbox * VisitsPerBuffer);
  sent_to = calloc(ranks_, sizeof *sent_to);
  expected_from = calloc(ranks_, sizeof *expected_from);
  for (uint32_t i = 0; i < ranks_; i++) {
    outboxes[i].filling = malloc(sizeof *inbox * VisitsPerBuffer);
    outboxes[i].sending = malloc(sizeof *inbox * VisitsPerBuffer);
    outboxes[i].request = MPI_REQUEST_NULL;
  }

  /* Roots: vertices with edges, drawn alike on every rank. */
  uint32_t *root = malloc(sizeof *root * roots);
  for (uint32_t i = 0, k = 0; i < roots; k++) {
    uint32_t v = (uint32_t)(mix(0x5eed0000ull + k) % n_vertices);
    if (offsets[v + 1] > offsets[v])
      root[i++] = v;
  }

  const char *names[2] = {"tc", "mpi"};
  double inverse_teps[2] = {0, 0};
  int ran[2] = {strstr(variants, "tc") != NULL, strstr(variants, "mpi") != NULL};
  uint64_t searched_edges = 0;
  /* A search of each variant before those timed, from the first root, as
   * a warm-up: the job's ranks connect on first use (docs/jobs.md; MPI's
   * connect in MPI_Init) and the memory is touched. Its time is printed
   * with --phases and counted in no figure; its result is checked. */
  double warm_up[2] = {0, 0};
  for (int pass = -1; pass < (int)roots; pass++) {
    uint32_t k = pass < 0 ? 0 : (uint32_t)pass;
    uint32_t *ref = reference(root[k]);
    for (int variant = 0; variant < 2; variant++) {
      if (!ran[variant])
        continue;
      depth_ = variant == 0 ? g_depth : own_depth;
      next_ = variant == 0 ? g_next : own_next;
      next_count_ = variant == 0 ? g_next_count : &own_next_count;
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now();
      if (variant == 0)
        search_tc(root[k], frontier);
      else
        search_mpi(root[k], frontier);
      double t = now() - t0, slowest = 0;
      MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      uint64_t edges = 0;
      if (!check(ref, &edges))
        fail(names[variant], "the depths differ from the one-process search");
      if (pass < 0) {
        warm_up[variant] = slowest;
        if (variant == 0)
          phase_expand = phase_quiesce = phase_levels = 0;
        continue;
      }
      searched_edges = edges;
      inverse_teps[variant] += slowest / (double)edges;
      if (phases && rank_ == 0)
        printf("bfs: root %u %s: %llu edges in %.3f ms\n", k, names[variant],
               (unsigned long long)edges, slowest * 1e3);
    }
    free(ref);
  }
  uint64_t errors = *g_errors, all_errors = 0;
  MPI_Reduce(&errors, &all_errors, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank_ == 0) {
    double teps[2] = {0, 0};
    for (int v = 0; v < 2; v++) {
      if (!ran[v])
        continue;
      teps[v] = roots / inverse_teps[v];
      printf("bfs: SCALE=%u edgefactor=%u P=%u roots=%u %s: %.3f MTEPS (harmonic mean; "
             "validated; last root's component %llu edges)\n",
             scale, edgefactor, ranks_, roots,
             v == 0 ? "tc (one tc_send_wait per visit, tc_job_quiesce per level)"
                    : "mpi (32 KiB per-destination buffers)",
             teps[v] / 1e6, (unsigned long long)searched_edges);
    }
    if (ran[0] && ran[1])
      printf("bfs: SCALE=%u P=%u tc/mpi %.3f\n", scale, ranks_, teps[0] / teps[1]);
    if (phases)
      printf("bfs: warm-up search (untimed): tc %.3f ms, mpi %.3f ms\n", warm_up[0] * 1e3,
             warm_up[1] * 1e3);
    if (all_errors)
      printf("bfs: %llu visits arrived at the wrong rank\n", (unsigned long long)all_errors);
  }
  if (phases && ran[0]) {
    tc_stats_t stats;
    if (tc_context_stats(ctx, &stats) == TC_OK)
      printf("bfs: rank %u: frames sent %llu, of them in bundles %llu, credit reports %llu\n",
             rank_, (unsigned long long)stats.frames_sent,
             (unsigned long long)stats.frames_coalesced, (unsigned long long)stats.credit_reports);
    double mine[2] = {phase_expand, phase_quiesce}, most[2];
    MPI_Reduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank_ == 0)
      printf("bfs: tc phases over %u roots, %.0f levels, slowest rank: sending %.3f ms, "
             "tc_job_quiesce %.3f ms (%.1f us a level)\n",
             roots, phase_levels, most[0] * 1e3, most[1] * 1e3,
             phase_levels ? most[1] * 1e6 / phase_levels : 0.0);
  }
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  MPI_Finalize();
  return all_errors ? 1 : 0;
}
