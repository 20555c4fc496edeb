/* tc-job: a job of P processes, launched the way HPC jobs are (mpirun), each
 * sending to and receiving from every rank, itself included.
 *   tc-job <jobs prefix> mpi|pmix|blobs:DIR:RANK:SIZE local|injected|shipped [frames [kill]]
 * mpi: joins with MPI_Allgather (twochains/mpi.h); pmix: from the PMIx
 * server that launched it (tc_job_join with no parameters); blobs: from
 * address blobs the ranks leave in DIR (launched by run-job-blobs.sh).
 * kill (blobs, or with TC_JOB_DIR naming a directory the ranks share): the
 * last rank then dies (SIGKILL); every call on its handle returns TC_ERR_IO
 * on the others, which go on with each other.
 * shipped: injected, into slots of 128 bytes, where no jam's image fits
 * beside its payload: every image is shipped ahead of its first frame,
 * every rank to every rank at once (crossing shipments).
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
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <twochains/mpi.h>
#include <twochains/packages/jobs.h>

static int failures;
static unsigned rank_, size_;
static char blob_dir[256]; /* blobs: where the ranks leave their files */

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

/* blobs:DIR:RANK:SIZE: listens, leaves its blob in DIR/RANK, waits for
 * every rank's, and joins with them. */
static tc_status_t joinByBlobs(tc_context_t *ctx, const char *spec) {
  char dir[256];
  unsigned rank, size;
  if (sscanf(spec, "blobs:%255[^:]:%u:%u", dir, &rank, &size) != 3 || !size || rank >= size)
    return TC_ERR_INVALID_PARAM;
  snprintf(blob_dir, sizeof blob_dir, "%s", dir);
  tc_status_t st = tc_listen(ctx, "127.0.0.1", 0);
  uint8_t mine[512];
  size_t n = sizeof mine;
  if (st != TC_OK || (st = tc_context_address(ctx, mine, &n)) != TC_OK)
    return st;
  char path[300], tmp[310];
  snprintf(path, sizeof path, "%s/%u", dir, rank);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f || fwrite(mine, 1, n, f) != n || fclose(f) || rename(tmp, path))
    return TC_ERR_IO;
  static uint8_t blobs[1024][512];
  static size_t sizes[1024];
  static const void *pointers[1024];
  for (unsigned r = 0; r < size && r < 1024; r++) {
    snprintf(path, sizeof path, "%s/%u", dir, r);
    while (!(f = fopen(path, "rb")))
      usleep(10000);
    sizes[r] = fread(blobs[r], 1, sizeof blobs[r], f);
    fclose(f);
    pointers[r] = blobs[r];
  }
  tc_job_params_t p = {0};
  p.version = TC_JOB_PARAMS_VERSION;
  p.rank = rank;
  p.size = size;
  p.blobs = pointers;
  p.blob_sizes = sizes;
  return tc_job_join(ctx, &p);
}

/* blobs: every rank but the dead one has reached `step` (a file each). */
static void fileBarrier(const char *step, unsigned ranks) {
  char path[400];
  snprintf(path, sizeof path, "%s/%s.%u", blob_dir, step, rank_);
  FILE *f = fopen(path, "w");
  if (f)
    fclose(f);
  for (unsigned r = 0; r < ranks; r++) {
    snprintf(path, sizeof path, "%s/%s.%u", blob_dir, step, r);
    while (access(path, F_OK))
      usleep(10000);
  }
}

/* The last rank has died: every call on its handle returns TC_ERR_IO once
 * its death is seen (progressing meanwhile), and the others still answer. */
static void afterDeath(tc_context_t *ctx, tc_package_t *pkg, tc_send_mode_t mode) {
  unsigned dead = size_ - 1;
  tc_peer_t *peer;
  tc_job_peer(ctx, dead, &peer);
  tc_status_t st = TC_OK;
  uint32_t h[2] = {rank_, 1};
  for (int i = 0; i < 60000 && st != TC_ERR_IO; i++) {
    st = tc_send(peer, pkg, JOBS_HIT, mode, h, sizeof h);
    tc_progress(ctx, NULL);
    usleep(1000);
  }
  CHECK(st == TC_ERR_IO, "tc_send to the dead rank: %s", tc_status_string(st));
  uint32_t answer[2];
  size_t n;
  st = tc_call(peer, pkg, JOBS_WHOAMI, mode, NULL, 0, answer, sizeof answer, &n, 5000);
  CHECK(st == TC_ERR_IO, "tc_call to the dead rank: %s", tc_status_string(st));
  st = tc_flush(peer, 5000);
  CHECK(st == TC_ERR_IO, "tc_flush to the dead rank: %s", tc_status_string(st));
  tc_peer_stats_t ps;
  CHECK(tc_peer_stats(peer, &ps) == TC_OK, "tc_peer_stats on the dead rank's handle");
  tc_peer_close(peer); /* does nothing: the handle stays valid */
  st = tc_send(peer, pkg, JOBS_HIT, mode, h, sizeof h);
  CHECK(st == TC_ERR_IO, "tc_send after tc_peer_close: %s", tc_status_string(st));
  CHECK(tc_job_quiesce(ctx, 10000) == TC_ERR_IO, "tc_job_quiesce with a rank gone");
  for (unsigned to = 0; to < dead; to++) {
    tc_job_peer(ctx, to, &peer);
    st = tc_call(peer, pkg, JOBS_WHOAMI, mode, NULL, 0, answer, sizeof answer, &n, 30000);
    CHECK(st == TC_OK && answer[1] == to, "call to the living rank %u: %s", to,
          tc_status_string(st));
  }
  int got;
  tc_event_t e;
  int gone = 0;
  while ((got = tc_poll_event(ctx, &e)) == 1)
    gone += e.kind == TC_EVENT_PEER_GONE;
  CHECK(gone >= 1, "no TC_EVENT_PEER_GONE for the dead rank");
  /* The living ranks' calls to each other are answered before any ends
   * (no quiescence with a rank gone: files, progressing meanwhile). */
  char path[400];
  snprintf(path, sizeof path, "%s/after.%u", blob_dir, rank_);
  FILE *f = fopen(path, "w");
  if (f)
    fclose(f);
  for (unsigned r = 0; r < dead; r++) {
    snprintf(path, sizeof path, "%s/after.%u", blob_dir, r);
    while (access(path, F_OK))
      tc_progress(ctx, NULL);
  }
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: tc-job <jobs prefix> mpi|pmix local|injected [frames]\n");
    return 2;
  }
  int mpi = !strcmp(argv[2], "mpi"), blobs = !strncmp(argv[2], "blobs:", 6);
  /* kill: the ranks meet in files (blobs: their directory; else TC_JOB_DIR). */
  int kill_last = argc > 5 && !strcmp(argv[5], "kill") && (blobs || getenv("TC_JOB_DIR"));
  if (kill_last && !blobs)
    snprintf(blob_dir, sizeof blob_dir, "%s", getenv("TC_JOB_DIR"));
  int shipped = !strcmp(argv[3], "shipped");
  tc_send_mode_t mode =
      !strcmp(argv[3], "injected") || shipped ? TC_SEND_INJECTED : TC_SEND_LOCAL;
  unsigned frames = argc > 4 ? (unsigned)atoi(argv[4]) : 100;
  if (mpi)
    MPI_Init(&argc, &argv);
  tc_package_t *pkg;
  if (jobs_package_load(argv[1], TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return 2;
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.slots = 16;
  if (shipped)
    p.slot_size = 128;
  tc_context_t *ctx = NULL;
  if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return 2;
  tc_status_t st = mpi     ? tc_job_join_mpi(ctx, MPI_COMM_WORLD)
                   : blobs ? joinByBlobs(ctx, argv[2])
                           : tc_job_join(ctx, NULL);
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
  /* Dies with everything sent having run (quiet), once every rank has
   * seen it quiet, before the others go on. */
  if (kill_last)
    fileBarrier("quiet", size_);
  if (kill_last && rank_ == size_ - 1)
    raise(SIGKILL);
  for (unsigned r = 0; r < size_; r++)
    CHECK(hits[r] == frames, "%llu hits from rank %u, not %u", (unsigned long long)hits[r], r,
          frames);
  CHECK(*order == 0, "%llu hits out of order", (unsigned long long)*order);
  CHECK(*ranks == 0, "%llu frames with a wrong sender rank", (unsigned long long)*ranks);
  CHECK(*backs == size_ - 1, "%llu bounced frames back, not %u", (unsigned long long)*backs,
        size_ - 1);
  CHECK(*forward_errors == 0, "%llu forwards failed", (unsigned long long)*forward_errors);
  /* One connection per pair, however many crossed (and one to itself). */
  tc_stats_t stats;
  tc_context_stats(ctx, &stats);
  CHECK(stats.job_connections == size_, "%llu connections with ranks, not %u (crossings: %llu)",
        (unsigned long long)stats.job_connections, size_,
        (unsigned long long)stats.job_crossings);
  if (rank_ == 0)
    fprintf(stderr, "rank 0: %llu connects crossed\n", (unsigned long long)stats.job_crossings);
  /* hit and bounce to every other rank, back to the senders of bounces. */
  if (shipped)
    CHECK(stats.code_transfers >= 2 * (size_ - 1),
          "%llu images shipped ahead, not at least %u", (unsigned long long)stats.code_transfers,
          2 * (size_ - 1));
  if (kill_last) {
    afterDeath(ctx, pkg, mode);
    tc_context_destroy(ctx);
    tc_package_unload(pkg);
    if (failures)
      return 1;
    printf("job: rank %u of %u PASSED (after a rank died)\n", rank_, size_);
    return 0;
  }

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
