/* graph-example: a breadth-first search over one graph whose vertices are
 * spread over the ranks of a job that mpirun launched (vertex v belongs to
 * rank v % P), every rank both sending and receiving.
 *
 *   mpirun -np 8 graph-example [--scale 16] [--degree 8] [--mode all]
 *
 * Modes (all: each in turn, on the same job):
 *   local, injected  code to data, level by level: the owner of a frontier
 *                    vertex sends a mark frame to the owner of each remote
 *                    neighbour, one way (Local Function or Injected), and
 *                    tc_job_quiesce ends the level
 *   forward          code to data without levels: a visit frame's jam
 *                    forwards visits of the neighbours to their owners
 *                    itself (tc_jam_forward_rank), and tc_job_quiesce says
 *                    when the search is done (it may visit a vertex more
 *                    than once: a longer path can arrive first)
 *   data             data to code, the baseline, level by level: one call
 *                    (tc_call) per remote neighbour, whose owner answers
 *                    whether it lowered its depth
 * Every mode's depths are checked against a BFS of the whole graph run in
 * one process (each rank runs it for the vertices it owns); rank 0 prints
 * the times, start-up included (from before tc_context_create until every
 * rank is connected to every rank). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <twochains/mpi.h>
#include <twochains/packages/graph.h>

#include "graph.h"

static unsigned rank_, ranks_;
static uint32_t n_vertices, degree = 8;
static tc_context_t *ctx;
static tc_package_t *pkg;

/* The ried's state (ried_graph.rdc), this rank's own copy. */
static uint32_t *g_vertices, *g_degree, *g_mode, *g_depth, *g_spill_rank, *g_spilled,
    *g_spill_lost, *g_next, *g_next_count;
static uint64_t *g_visits, *g_improved, *g_errors;
static struct graph_visit *g_spill;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void die(const char *what, tc_status_t st) {
  fprintf(stderr, "graph-example: rank %u: %s: %s\n", rank_, what, tc_status_string(st));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *symbol(const char *name) {
  void *p = tc_package_symbol(pkg, name);
  if (!p)
    die(name, TC_ERR_MISSING_IMPORT);
  return p;
}

static tc_peer_t *rank_peer(unsigned r) {
  tc_peer_t *p;
  tc_status_t st = tc_job_peer(ctx, r, &p);
  if (st != TC_OK)
    die("tc_job_peer", st);
  return p;
}

/* Sends, progressing (running what arrives) while the queue is full. */
static void send_visit(unsigned to, tc_send_mode_t mode, uint32_t vertex, uint32_t depth) {
  struct graph_visit m = {vertex, depth};
  tc_status_t st;
  while ((st = tc_send(rank_peer(to), pkg, GRAPH_VISIT, mode, &m, sizeof m)) ==
         TC_ERR_NO_CREDIT)
    tc_progress(ctx, NULL);
  if (st != TC_OK)
    die("tc_send", st);
}

/* One process's BFS of the whole graph: the reference. */
static uint32_t *reference(uint32_t source) {
  uint32_t *depth = malloc(sizeof *depth * n_vertices), *queue = malloc(sizeof *queue * n_vertices);
  for (uint32_t v = 0; v < n_vertices; v++)
    depth[v] = GRAPH_UNREACHED;
  uint32_t head = 0, tail = 0;
  depth[source] = 0;
  queue[tail++] = source;
  while (head < tail) {
    uint32_t v = queue[head++];
    for (uint32_t k = 0; k < degree; k++) {
      uint32_t u = graph_target(v, k, n_vertices);
      if (depth[u] == GRAPH_UNREACHED) {
        depth[u] = depth[v] + 1;
        queue[tail++] = u;
      }
    }
  }
  free(queue);
  return depth;
}

static uint32_t owned(void) { return (n_vertices - rank_ + ranks_ - 1) / ranks_; }

static void reset(void) {
  for (uint32_t i = 0; i < owned(); i++)
    g_depth[i] = GRAPH_UNREACHED;
  *g_visits = *g_improved = *g_errors = 0;
  *g_spilled = *g_spill_lost = *g_next_count = 0;
}

/* Code to data: visits forwarded by the jams, until the job is quiet and
 * no rank has frames its jams could not forward at once. */
static void search_by_code(tc_send_mode_t mode, uint32_t source) {
  *g_mode = (uint32_t)mode;
  if (source % ranks_ == rank_)
    send_visit(rank_, mode, source, 0);
  for (;;) {
    int drained = 0;
    while (*g_spilled) {
      uint32_t i = --*g_spilled;
      send_visit(g_spill_rank[i], mode, g_spill[i].vertex, g_spill[i].depth);
      drained = 1;
    }
    tc_status_t st = tc_job_quiesce(ctx, 600000);
    if (st != TC_OK)
      die("tc_job_quiesce", st);
    int any = drained || *g_spilled, anywhere = 0;
    MPI_Allreduce(&any, &anywhere, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (!anywhere)
      return;
  }
}

/* Level by level: one frame (mode) or one call (data: mode 0) per remote
 * neighbour. */
static void search_by_levels(int mode, uint32_t source) {
  uint32_t *frontier = malloc(sizeof *frontier * (owned() + 1)), count = 0;
  if (source % ranks_ == rank_) {
    g_depth[source / ranks_] = 0;
    frontier[count++] = source;
  }
  for (uint32_t level = 0;; level++) {
    *g_next_count = 0;
    for (uint32_t i = 0; i < count; i++)
      for (uint32_t k = 0; k < degree; k++) {
        uint32_t u = graph_target(frontier[i], k, n_vertices), owner = u % ranks_;
        if (owner == rank_) {
          if (g_depth[u / ranks_] > level + 1) {
            g_depth[u / ranks_] = level + 1;
            g_next[(*g_next_count)++] = u;
          }
          continue;
        }
        struct graph_visit m = {u, level + 1};
        tc_status_t st;
        if (mode) {
          while ((st = tc_send(rank_peer(owner), pkg, GRAPH_MARK, (tc_send_mode_t)mode, &m,
                               sizeof m)) == TC_ERR_NO_CREDIT)
            tc_progress(ctx, NULL);
          if (st != TC_OK)
            die("tc_send mark", st);
          continue;
        }
        int32_t changed;
        size_t n;
        st = tc_call(rank_peer(owner), pkg, GRAPH_RELAX, TC_SEND_LOCAL, &m, sizeof m, &changed,
                     sizeof changed, &n, 60000);
        if (st != TC_OK)
          die("tc_call relax", st);
      }
    /* Everyone's calls of this level answered (the barrier runs frames). */
    tc_status_t st = tc_job_quiesce(ctx, 600000);
    if (st != TC_OK)
      die("tc_job_quiesce", st);
    count = *g_next_count;
    memcpy(frontier, g_next, sizeof *frontier * count);
    uint32_t total = 0;
    MPI_Allreduce(&count, &total, 1, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
    if (!total)
      break;
  }
  free(frontier);
}

static int check(const uint32_t *ref, uint64_t *reached, uint64_t *sum) {
  uint64_t mine[3] = {0, 0, 0}, all[3];
  for (uint32_t i = 0; i < owned(); i++) {
    uint32_t v = i * ranks_ + rank_;
    mine[0] += g_depth[i] != ref[v];
    if (ref[v] != GRAPH_UNREACHED) {
      mine[1]++;
      mine[2] += ref[v];
    }
  }
  MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  *reached = all[1];
  *sum = all[2];
  return all[0] == 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  double start = now();
  unsigned scale = 16;
  const char *modes = "all";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--scale") && i + 1 < argc)
      scale = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--degree") && i + 1 < argc)
      degree = (uint32_t)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--mode") && i + 1 < argc)
      modes = argv[++i];
    else {
      fprintf(stderr, "usage: graph-example [--scale S] [--degree D] "
                      "[--mode local|injected|forward|data|all]\n");
      return 2;
    }
  }
  if (scale < 4 || scale > 24 || degree < 1 || degree > 64) {
    fprintf(stderr, "graph-example: --scale is 4 to 24, --degree 1 to 64\n");
    return 2;
  }
  n_vertices = 1u << scale;
  tc_status_t st = graph_package_load(GRAPH_PACKAGE_PREFIX,
                                      TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg);
  if (st != TC_OK)
    die("cannot load the graph package", st);
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  if ((st = tc_context_create(&p, &ctx)) != TC_OK ||
      (st = tc_context_add_package(ctx, pkg)) != TC_OK)
    die("cannot create a context", st);
  if ((st = tc_job_join_mpi(ctx, MPI_COMM_WORLD)) != TC_OK)
    die("tc_job_join", st);
  tc_job_rank(ctx, &rank_, &ranks_);
  /* Start-up: every rank connected to every rank (tc_flush on a handle
   * waits for its connection), all at once. */
  for (unsigned k = 0; k < ranks_; k++)
    if ((st = tc_flush(rank_peer((rank_ + k) % ranks_), 60000)) != TC_OK)
      die("connecting", st);
  if ((st = tc_job_quiesce(ctx, 60000)) != TC_OK)
    die("tc_job_quiesce", st);
  double startup = now() - start, startup_max;
  MPI_Reduce(&startup, &startup_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

  g_vertices = symbol("graph_vertices");
  g_degree = symbol("graph_degree");
  g_mode = symbol("graph_mode");
  g_depth = symbol("graph_depth");
  g_spill = symbol("graph_spill");
  g_spill_rank = symbol("graph_spill_rank");
  g_spilled = symbol("graph_spilled");
  g_spill_lost = symbol("graph_spill_lost");
  g_next = symbol("graph_next");
  g_next_count = symbol("graph_next_count");
  g_visits = symbol("graph_visits");
  g_improved = symbol("graph_improved");
  g_errors = symbol("graph_errors");
  *g_vertices = n_vertices;
  *g_degree = degree;
  if (owned() > (1u << 22)) {
    fprintf(stderr, "graph-example: too many vertices per rank\n");
    return 2;
  }
  uint32_t *ref = reference(0);
  if (rank_ == 0)
    printf("graph-example: %u ranks, %u vertices, %u edges each; start-up %.3f s\n", ranks_,
           n_vertices, degree, startup_max);
  static const struct {
    const char *name;
    int mode;    /* 0: data to code */
    int forward; /* without levels: jams forward */
  } all[] = {{"local", TC_SEND_LOCAL, 0},
             {"injected", TC_SEND_INJECTED, 0},
             {"forward", TC_SEND_LOCAL, 1},
             {"data", 0, 0}};
  int failed = 0;
  for (unsigned m = 0; m < sizeof all / sizeof all[0]; m++) {
    if (strcmp(modes, "all") && strcmp(modes, all[m].name))
      continue;
    reset();
    MPI_Barrier(MPI_COMM_WORLD);
    double t = now();
    if (all[m].forward)
      search_by_code((tc_send_mode_t)all[m].mode, 0);
    else
      search_by_levels(all[m].mode, 0);
    double took = now() - t, took_max;
    MPI_Reduce(&took, &took_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    uint64_t counts[3] = {*g_visits, *g_errors, *g_spill_lost}, sums[3];
    MPI_Allreduce(counts, sums, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t reached, sum;
    int ok = check(ref, &reached, &sum) && !sums[1] && !sums[2];
    failed |= !ok;
    if (rank_ == 0)
      printf("graph-example: %-8s %8.3f s  %9llu %s  reached %llu, depth sum %llu: %s\n",
             all[m].name, took_max, (unsigned long long)sums[0],
             all[m].mode ? "frames" : "calls ", (unsigned long long)reached,
             (unsigned long long)sum, ok ? "matches one process" : "WRONG");
  }
  free(ref);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  MPI_Finalize();
  return failed;
}
