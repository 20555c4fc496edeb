/* tc-job-calls: every rank calls every rank at once, as an HPC user's first
 * program does: blocking tc_call, no executor thread, more ranks than
 * cores. A rank that has made its calls keeps serving the others until
 * every rank has (an MPI_Ibarrier tested between turns): even ranks spin on
 * tc_progress, odd ranks sleep in tc_wait between turns. Then the phase
 * ends with the library's own barrier, tc_job_quiesce.
 *   tc-job-calls <jobs prefix> mpi|pmix local|injected <rounds>
 *                [timeout ms [pause us [busy ms]]]
 * pause: before each call a rank is busy elsewhere (no progress) for up to
 * that long, at random: rings go cold and warm again, senders find their
 * receivers asleep.
 * busy: once every rank is connected to every rank, odd ranks are busy
 * elsewhere (no progress: computing, or blocked in MPI) for that long while
 * even ranks call them once each with a timeout of an eighth of that. Those
 * calls time out, their jams run when the odd ranks come back, and their
 * answers arrive late: each must be said (logged as an answer its caller
 * gave up on), so that a late answer is never taken for one lost.
 * Every call must be answered, with the right ranks; a call that is not
 * says why (its status is printed). Prints "calls: rank R answered A of N,
 * lost L" and "job: rank R of P PASSED". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <twochains/mpi.h>
#include <twochains/twochains.h>
#include <twochains/packages/jobs.h>

/* Log lines that say an answer came after its caller gave up on it. */
static unsigned late_said;

static void on_log(tc_log_level_t level, const char *message, void *arg) {
  (void)arg;
  if (strstr(message, "after its caller gave up on it"))
    late_said++;
  fprintf(stderr, "twochains: %s: %s\n", level == TC_LOG_ERROR ? "error" : "log", message);
}

/* Serves the others until every rank has got here. */
static void serve_until_all(tc_context_t *ctx, unsigned rank) {
  MPI_Request done;
  MPI_Ibarrier(MPI_COMM_WORLD, &done);
  for (int flag = 0; !flag;) {
    tc_progress(ctx, NULL);
    if (rank % 2)
      tc_wait(ctx, 1);
    MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
  }
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: tc-job-calls <jobs prefix> mpi|pmix local|injected <rounds> "
                    "[timeout ms [pause us [busy ms]]]\n");
    return 2;
  }
  int mpi = !strcmp(argv[2], "mpi");
  tc_send_mode_t mode = !strcmp(argv[3], "injected") ? TC_SEND_INJECTED : TC_SEND_LOCAL;
  unsigned rounds = (unsigned)atoi(argv[4]);
  int timeout_ms = argc > 5 ? atoi(argv[5]) : 30000;
  unsigned pause_us = argc > 6 ? (unsigned)atoi(argv[6]) : 0;
  unsigned busy_ms = argc > 7 ? (unsigned)atoi(argv[7]) : 0;
  if (busy_ms)
    tc_set_log_handler(on_log, NULL);
  MPI_Init(&argc, &argv);
  tc_package_t *pkg;
  if (jobs_package_load(argv[1], TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return 2;
  /* The defaults, as a user's first program has them. */
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  tc_context_t *ctx = NULL;
  if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return 2;
  tc_status_t st = mpi ? tc_job_join_mpi(ctx, MPI_COMM_WORLD) : tc_job_join(ctx, NULL);
  unsigned rank, size;
  if (st != TC_OK || tc_job_rank(ctx, &rank, &size) != TC_OK) {
    fprintf(stderr, "tc_job_join: %s\n", tc_status_string(st));
    return 1;
  }
  unsigned calls = 0, answered = 0, wrong = 0, seed = rank * 7919u + 1;
  unsigned by_status[64] = {0};
  for (unsigned round = 0; round < rounds; round++)
    for (unsigned k = 0; k < size; k++) {
      unsigned to = (rank + k) % size;
      tc_peer_t *peer;
      tc_job_peer(ctx, to, &peer);
      if (pause_us)
        usleep((useconds_t)(rand_r(&seed) % pause_us));
      uint32_t answer[2] = {~0u, ~0u};
      size_t n = 0;
      calls++;
      st = tc_call(peer, pkg, JOBS_WHOAMI, mode, NULL, 0, answer, sizeof answer, &n, timeout_ms);
      if (st == TC_OK) {
        answered++;
        wrong += n != sizeof answer || answer[0] != rank || answer[1] != to;
      } else {
        by_status[(unsigned)-st & 63]++;
        fprintf(stderr, "rank %u: call %u to rank %u: %s\n", rank, calls, to,
                tc_status_string(st));
      }
    }
  /* Done: serve the others until every rank is. */
  serve_until_all(ctx, rank);
  unsigned late = 0;
  if (busy_ms) {
    /* Every connection is made: odd ranks go away, even ranks call them. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank % 2) {
      usleep(busy_ms * 1000u);
    } else {
      for (unsigned to = 1; to < size; to += 2) {
        tc_peer_t *peer;
        tc_job_peer(ctx, to, &peer);
        uint32_t answer[2];
        size_t n = 0;
        calls++;
        st = tc_call(peer, pkg, JOBS_WHOAMI, mode, NULL, 0, answer, sizeof answer, &n,
                     (int)busy_ms / 8);
        if (st == TC_OK) {
          answered++; /* the machine was slower than busy_ms: no late answer */
          wrong += n != sizeof answer || answer[0] != rank || answer[1] != to;
        } else if (st == TC_ERR_TIMED_OUT) {
          late++;
        } else {
          by_status[(unsigned)-st & 63]++;
          fprintf(stderr, "rank %u: call to busy rank %u: %s\n", rank, to,
                  tc_status_string(st));
        }
      }
    }
    /* The odd ranks run the calls that waited; their answers come late. */
    serve_until_all(ctx, rank);
  }
  st = tc_job_quiesce(ctx, 60000);
  /* The quiesce ran every answer frame: each late one has been said. */
  if (busy_ms)
    printf("calls: rank %u: %u calls timed out while their receiver was busy, %u late "
           "answers said\n", rank, late, late_said);
  unsigned lost = calls - answered - late;
  printf("calls: rank %u answered %u of %u, lost %u, wrong %u\n", rank, answered, calls, lost,
         wrong);
  for (unsigned s = 0; s < 64; s++)
    if (by_status[s])
      printf("calls: rank %u: %u calls ended with %s\n", rank, by_status[s],
             tc_status_string(-(tc_status_t)s));
  tc_stats_t stats;
  tc_context_stats(ctx, &stats);
  int ok = st == TC_OK && lost == 0 && wrong == 0 && stats.calls_answered == calls - late &&
           late_said == late;
  if (st != TC_OK)
    fprintf(stderr, "rank %u: tc_job_quiesce: %s\n", rank, tc_status_string(st));
  printf("job: rank %u of %u %s\n", rank, size, ok ? "PASSED" : "FAILED");
  fflush(stdout);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  MPI_Finalize();
  return ok ? 0 : 1;
}
