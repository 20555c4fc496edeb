/* job-connect: how long a job of P ranks takes to be connected, every rank
 * to every rank, launched by mpirun (bench/run-job-connect.sh).
 *   mpirun -np P job-connect [mpi|pmix]
 * Rank 0 prints the slowest rank's times from before tc_context_create:
 * joined (tc_job_join: listen, exchange addresses), all-to-all (one Local
 * frame of server_side_sum to every rank, all at once, each connection
 * made on demand, until a tc_job_quiesce says every frame ran; also the
 * round alone, from the rank's join to its end, as job-connect-ucx
 * measures it below Two-Chains, and the CPU time a rank used in it, all
 * threads, the mean over ranks: on fewer cores than ranks the round takes
 * about ranks x CPU / cores), connected
 * (tc_flush on every rank's handle after that), and quiet (a second
 * tc_job_quiesce); then the largest and the mean resident memory of a
 * rank (VmRSS) at the end. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <stdlib.h>
#include <sys/resource.h>
#include "job_common.h"
#include <twochains/mpi.h>
#include <twochains/packages/stdlib.h>

/* The CPU time this process has used, user and system, in seconds. */
static double cpuSeconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

int main(int argc, char **argv) {
  int mpi = argc < 2 || strcmp(argv[1], "pmix");
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now(), t[4];
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  tc_context_t *ctx;
  tc_package_t *pkg;
  unsigned rank, size;
  if (stdlib_package_load(TC_JOB_CONNECT_PREFIX, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg) !=
          TC_OK ||
      tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK ||
      (mpi ? tc_job_join_mpi(ctx, MPI_COMM_WORLD) : tc_job_join(ctx, NULL)) != TC_OK ||
      tc_job_rank(ctx, &rank, &size) != TC_OK)
    return 1;
  t[0] = now() - t0;
  double cpu0 = cpuSeconds();
  int32_t one = 1;
  for (unsigned k = 0; k < size; k++) {
    tc_peer_t *peer;
    tc_status_t st;
    if (tc_job_peer(ctx, (rank + k) % size, &peer) != TC_OK)
      return 1;
    while ((st = tc_send(peer, pkg, STDLIB_SERVER_SIDE_SUM, TC_SEND_LOCAL, &one, sizeof one)) ==
           TC_ERR_NO_CREDIT)
      tc_progress(ctx, NULL);
    if (st != TC_OK)
      return 1;
  }
  if (tc_job_quiesce(ctx, 120000) != TC_OK)
    return 1;
  t[1] = now() - t0;
  double cpu = cpuSeconds() - cpu0, cpu_sum = 0;
  for (unsigned k = 0; k < size; k++) {
    tc_peer_t *peer;
    if (tc_job_peer(ctx, (rank + k) % size, &peer) != TC_OK || tc_flush(peer, 60000) != TC_OK)
      return 1;
  }
  t[2] = now() - t0;
  if (tc_job_quiesce(ctx, 60000) != TC_OK)
    return 1;
  t[3] = now() - t0;
  double worst[4], round = t[1] - t[0], round_worst;
  /* JOB_CONNECT_MARKS=1: the round's first start and last end on the
   * monotonic clock, for `perf report --time` of the round alone. */
  double marks[2] = {-(t0 + t[0]), t0 + t[1]}, marks_max[2];
  MPI_Reduce(marks, marks_max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0 && getenv("JOB_CONNECT_MARKS"))
    printf("job-connect: round from %.6f to %.6f (CLOCK_MONOTONIC)\n", -marks_max[0],
           marks_max[1]);
  MPI_Reduce(t, worst, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&round, &round_worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&cpu, &cpu_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  double rss = rssKiB(), rss_max = 0, rss_sum = 0;
  MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  unsigned long long crossings = s.job_crossings, all = 0;
  MPI_Reduce(&crossings, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("job-connect: P=%u %s joined %.3f s, all-to-all %.3f s (the round alone %.3f s, "
           "CPU %.1f ms per rank), "
           "connected %.3f s, quiet %.3f s, %llu connects crossed, RSS per rank max %.1f MiB "
           "mean %.1f MiB\n",
           size, mpi ? "mpi " : "pmix", worst[0], worst[1], round_worst, cpu_sum / size * 1e3,
           worst[2], worst[3], all, rss_max / 1024, rss_sum / size / 1024);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  MPI_Finalize();
  return 0;
}
