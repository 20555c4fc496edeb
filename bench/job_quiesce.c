/* job-quiesce: what ending a phase costs, tc_job_quiesce against
 * MPI_Barrier in the same processes (bench/run-job-quiesce.sh).
 *   mpirun -np P job-quiesce [rounds]            the bench
 *   mpirun -np P job-quiesce memory <quiesces>  the test: resident memory
 * The bench, after every rank is connected to every rank: rounds idle
 * MPI_Barrier calls, rounds idle tc_job_quiesce calls, then rounds phases
 * of one Local frame to every rank followed by tc_job_quiesce; each timed
 * on every rank, rank 0 printing the slowest rank's mean and the ratio.
 * memory: VmRSS after a first 1,000 quiesces and after <quiesces> more;
 * exits 1 if it grew by more than 512 KiB (a quiesce must not leave
 * anything behind). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "job_common.h"
#include <twochains/mpi.h>
#include <twochains/packages/stdlib.h>


static tc_context_t *ctx;
static tc_package_t *pkg;
static unsigned rank_, size_;

static void quiesce(void) {
  tc_status_t st = tc_job_quiesce(ctx, 60000);
  if (st != TC_OK) {
    fprintf(stderr, "rank %u: tc_job_quiesce: %s\n", rank_, tc_status_string(st));
    exit(1);
  }
}

/* One frame to every rank, then the phase ends. */
static void phase(void) {
  for (unsigned k = 0; k < size_; k++) {
    tc_peer_t *peer;
    tc_job_peer(ctx, (rank_ + k) % size_, &peer);
    long v[2] = {1, 2};
    tc_status_t st = tc_send_wait(peer, pkg, STDLIB_SERVER_SIDE_SUM, TC_SEND_LOCAL, v, sizeof v,
                                  60000);
    if (st != TC_OK) {
      fprintf(stderr, "rank %u: tc_send_wait: %s\n", rank_, tc_status_string(st));
      exit(1);
    }
  }
  quiesce();
}

/* The slowest rank's mean time of one call, in microseconds. */
static double slowest(double seconds, int rounds) {
  double mean = seconds / rounds * 1e6, max = 0;
  MPI_Reduce(&mean, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return max;
}

int main(int argc, char **argv) {
  int memory = argc > 1 && !strcmp(argv[1], "memory");
  int rounds = argc > 1 ? atoi(argv[argc - 1]) : 2000;
  if (rounds <= 0)
    rounds = 2000;
  MPI_Init(&argc, &argv);
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  if (stdlib_package_load(TC_JOB_QUIESCE_PREFIX, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER,
                          &pkg) != TC_OK ||
      tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK ||
      tc_job_join_mpi(ctx, MPI_COMM_WORLD) != TC_OK ||
      tc_job_rank(ctx, &rank_, &size_) != TC_OK) {
    fprintf(stderr, "job-quiesce: cannot join\n");
    return 1;
  }
  /* Every connection made before anything is timed. */
  phase();
  phase();
  if (memory) {
    for (int i = 0; i < 1000; i++)
      quiesce();
    double before = rssKiB();
    for (int i = 0; i < rounds; i++)
      quiesce();
    double after = rssKiB(), grew = after - before, most = 0;
    MPI_Reduce(&grew, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int ok = grew <= 512;
    printf("job-quiesce: rank %u: VmRSS %.0f KiB -> %.0f KiB over %d quiesces: %s\n", rank_,
           before, after, rounds, ok ? "PASSED" : "FAILED (it grew)");
    tc_context_destroy(ctx);
    MPI_Finalize();
    return ok ? 0 : 1;
  }
  double t = now();
  for (int i = 0; i < rounds; i++)
    MPI_Barrier(MPI_COMM_WORLD);
  double barrier = slowest(now() - t, rounds);
  quiesce();
  t = now();
  for (int i = 0; i < rounds; i++)
    quiesce();
  double idle = slowest(now() - t, rounds);
  t = now();
  for (int i = 0; i < rounds / 4 + 1; i++)
    phase();
  double busy = slowest(now() - t, rounds / 4 + 1);
  if (rank_ == 0)
    printf("job-quiesce: P=%u  MPI_Barrier %.1f us  tc_job_quiesce idle %.1f us (%.2fx)  "
           "a phase of %u frames + quiesce %.1f us\n",
           size_, barrier, idle, idle / barrier, size_, busy);
  tc_context_destroy(ctx);
  MPI_Finalize();
  return 0;
}
