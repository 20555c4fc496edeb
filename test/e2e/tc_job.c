/* tc-job: a job of P processes, launched the way HPC jobs are (mpirun), each
 * sending to and receiving from every rank, itself included.
 *   tc-job <jobs prefix> mpi|pmix local|injected [frames]
 * mpi: joins with MPI_Allgather (twochains/mpi.h); pmix: from the PMIx
 * server that launched it (tc_job_join with no parameters).
 * Checks, on every rank, with the executor thread off (the application
 * progresses, as MPI programs do):
 *   - all-to-all: `frames` hit frames to every rank at once, in order, each
 *     seen with the sender's rank, the first frames sent while the
 *     connection is still being made;
 *   - every pair forwarding to each other at once: a bounce frame to every
 *     other rank, whose jam forwards a back frame to this one
 *     (tc_jam_forward_rank, from inside the running jam);
 *   - tc_job_quiesce then holds with every frame and forward run;
 *   - calls to every rank (itself too) answer with the caller's rank.
 * Prints "job: rank R of P PASSED". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <twochains/mpi.h>
#include <twochains/packages/jobs.h>

static int failures;
static unsigned rank_, size_;

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "rank %u FAILED (%s:%d): ", rank_, __FILE__, __LINE__);         \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
      failures++;                                                                     \
    }                                                                                 \
  } while (0)

static uint64_t *symbol(tc_package_t *pkg, const char *name) {
  void *p = tc_package_symbol(pkg, name);
  if (!p) {
    fprintf(stderr, "no symbol %s\n", name);
    exit(2);
  }
  return p;
}

/* Sends, progressing while the queue or ring is full. */
static tc_status_t send(tc_context_t *ctx, tc_peer_t *peer, const tc_package_t *pkg,
                        uint32_t element, tc_send_mode_t mode, const void *payload, size_t n) {
  tc_status_t st;
  while ((st = tc_send(peer, pkg, element, mode, payload, n)) == TC_ERR_NO_CREDIT)
    tc_progress(ctx, NULL);
  return st;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: tc-job <jobs prefix> mpi|pmix local|injected [frames]\n");
    return 2;
  }
  int mpi = !strcmp(argv[2], "mpi");
  tc_send_mode_t mode = !strcmp(argv[3], "injected") ? TC_SEND_INJECTED : TC_SEND_LOCAL;
  unsigned frames = argc > 4 ? (unsigned)atoi(argv[4]) : 100;
  if (mpi)
    MPI_Init(&argc, &argv);
  tc_package_t *pkg;
  if (jobs_package_load(argv[1], TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return 2;
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.slots = 16;
  tc_context_t *ctx = NULL;
  if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return 2;
  tc_status_t st = mpi ? tc_job_join_mpi(ctx, MPI_COMM_WORLD) : tc_job_join(ctx, NULL);
  if (st != TC_OK || tc_job_rank(ctx, &rank_, &size_) != TC_OK) {
    fprintf(stderr, "tc_job_join: %s\n", tc_status_string(st));
    return 1;
  }
  uint64_t *hits = symbol(pkg, "jobs_hits"), *order = symbol(pkg, "jobs_order_errors"),
           *ranks = symbol(pkg, "jobs_rank_errors"), *backs = symbol(pkg, "jobs_backs"),
           *forward_errors = symbol(pkg, "jobs_forward_errors");

  /* All-to-all, every rank at once, interleaved. */
  for (unsigned seq = 1; seq <= frames; seq++)
    for (unsigned k = 0; k < size_; k++) {
      unsigned to = (rank_ + k) % size_;
      tc_peer_t *peer;
      CHECK(tc_job_peer(ctx, to, &peer) == TC_OK, "tc_job_peer %u", to);
      uint32_t h[2] = {rank_, seq};
      st = send(ctx, peer, pkg, JOBS_HIT, mode, h, sizeof h);
      CHECK(st == TC_OK, "hit %u to rank %u: %s", seq, to, tc_status_string(st));
    }
  /* Every pair forwarding to each other at once. */
  for (unsigned k = 1; k < size_; k++) {
    unsigned to = (rank_ + k) % size_;
    tc_peer_t *peer;
    tc_job_peer(ctx, to, &peer);
    uint32_t b[2] = {rank_, (uint32_t)mode};
    st = send(ctx, peer, pkg, JOBS_BOUNCE, mode, b, sizeof b);
    CHECK(st == TC_OK, "bounce to rank %u: %s", to, tc_status_string(st));
  }
  st = tc_job_quiesce(ctx, 120000);
  CHECK(st == TC_OK, "tc_job_quiesce: %s", tc_status_string(st));
  for (unsigned r = 0; r < size_; r++)
    CHECK(hits[r] == frames, "%llu hits from rank %u, not %u", (unsigned long long)hits[r], r,
          frames);
  CHECK(*order == 0, "%llu hits out of order", (unsigned long long)*order);
  CHECK(*ranks == 0, "%llu frames with a wrong sender rank", (unsigned long long)*ranks);
  CHECK(*backs == size_ - 1, "%llu bounced frames back, not %u", (unsigned long long)*backs,
        size_ - 1);
  CHECK(*forward_errors == 0, "%llu forwards failed", (unsigned long long)*forward_errors);

  /* Calls to every rank, itself too. */
  for (unsigned to = 0; to < size_; to++) {
    tc_peer_t *peer;
    tc_job_peer(ctx, to, &peer);
    uint32_t answer[2] = {~0u, ~0u};
    size_t n = 0;
    st = tc_call(peer, pkg, JOBS_WHOAMI, mode, NULL, 0, answer, sizeof answer, &n, 30000);
    CHECK(st == TC_OK && n == sizeof answer && answer[0] == rank_ && answer[1] == to,
          "call to rank %u: %s, it saw rank %u and is %u", to, tc_status_string(st), answer[0],
          answer[1]);
  }
  st = tc_job_quiesce(ctx, 120000);
  CHECK(st == TC_OK, "the second tc_job_quiesce: %s", tc_status_string(st));
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  if (mpi)
    MPI_Finalize();
  if (failures)
    return 1;
  printf("job: rank %u of %u PASSED\n", rank_, size_);
  return 0;
}
