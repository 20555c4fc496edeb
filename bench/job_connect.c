/* job-connect: how long a job of P ranks takes to be connected, every rank
 * to every rank, launched by mpirun (bench/run-job-connect.sh).
 *   mpirun -np P job-connect [mpi|pmix]
 * Rank 0 prints the slowest rank's times from before tc_context_create:
 * joined (tc_job_join: listen, exchange addresses), connected (tc_flush on
 * every rank's handle, all at once: each connection made on demand), and
 * quiet (a tc_job_quiesce after it, as a barrier). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <twochains/mpi.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int mpi = argc < 2 || strcmp(argv[1], "pmix");
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now(), t[3];
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  tc_context_t *ctx;
  unsigned rank, size;
  if (tc_context_create(&p, &ctx) != TC_OK ||
      (mpi ? tc_job_join_mpi(ctx, MPI_COMM_WORLD) : tc_job_join(ctx, NULL)) != TC_OK ||
      tc_job_rank(ctx, &rank, &size) != TC_OK)
    return 1;
  t[0] = now() - t0;
  for (unsigned k = 0; k < size; k++) {
    tc_peer_t *peer;
    if (tc_job_peer(ctx, (rank + k) % size, &peer) != TC_OK || tc_flush(peer, 60000) != TC_OK)
      return 1;
  }
  t[1] = now() - t0;
  if (tc_job_quiesce(ctx, 60000) != TC_OK)
    return 1;
  t[2] = now() - t0;
  double worst[3];
  MPI_Reduce(t, worst, 3, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  unsigned long long crossings = s.job_crossings, all = 0;
  MPI_Reduce(&crossings, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("job-connect: P=%u %s joined %.3f s, connected %.3f s, quiet %.3f s, "
           "%llu connects crossed\n",
           size, mpi ? "mpi " : "pmix", worst[0], worst[1], worst[2], all);
  tc_context_destroy(ctx);
  MPI_Finalize();
  return 0;
}
