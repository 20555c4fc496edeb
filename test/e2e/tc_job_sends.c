/* tc-job-sends: every public send returns only the statuses its header
 * lists, whatever handle it is given. A job of 2 ranks with slots of 256
 * bytes; each rank sends jam 'sink' to the other through every kind of
 * handle (a connection from a second context of this process, outside the
 * job, by tc_connect_address; the rank's tc_job_peer handle; its own
 * handle), in every mode, with payloads from
 * none to twice a slot: just under, at and over a slot, alone and beside
 * the jam's image. Local and TC_SEND_INJECTED frames always go (an image
 * too large for a slot is shipped ahead, a payload too large goes ahead of
 * its frame): TC_OK; TC_SEND_INJECTED_FULL carries its image in the slot:
 * TC_OK or TC_ERR_TOO_LARGE. Each is sent by tc_send_wait, then by tc_send
 * retried on TC_ERR_NO_CREDIT. After tc_job_quiesce every frame sent must
 * have run, its payload intact, and tc_peer_frames must count them.
 *   [TC_SLOT_SIZE=64..256] tc-job-sends <jobs prefix>
 * With TC_SLOT_SIZE=64 (one-line slots, set by the environment the
 * library reads), every frame larger than a line must be refused at once.
 * Prints "job: rank R of P PASSED". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <twochains/mpi.h>
#include <twochains/packages/jobs.h>

static unsigned rank_;
static int failures;
static tc_package_t *jobs_pkg;

#define CHECK(cond, ...)                                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "rank %u FAILED (%s:%d): ", rank_, __FILE__, __LINE__);              \
      fprintf(stderr, __VA_ARGS__);                                                        \
      fputc('\n', stderr);                                                                 \
      failures++;                                                                          \
    }                                                                                      \
  } while (0)

static const char *modeName(tc_send_mode_t m) {
  return m == TC_SEND_LOCAL ? "local" : m == TC_SEND_INJECTED ? "injected" : "injected-full";
}

/* The slot size (256, or as given): with 64-byte slots only one-line
 * frames fit, whose payloads are at most 24 bytes (docs/frames.md). */
static size_t Slot = 256;
enum { MaxSlot = 256, OneLinePayload = 24 };

/* One frame of 'sink' with a payload of size bytes in the pattern it
 * checks, by tc_send_wait (way 0) or tc_send retried (way 1, progressing
 * the sending context, the job's unless another is given). */
static void sendOne(tc_context_t *ctx, tc_context_t *from, tc_peer_t *peer, const char *kind,
                    tc_send_mode_t mode, size_t size, int way, uint64_t *sent) {
  static uint8_t buffer[2 * MaxSlot];
  for (size_t b = 0; b < size; b++)
    buffer[b] = (uint8_t)(b * 7 + size);
  tc_status_t st;
  if (way == 0) {
    st = tc_send_wait(peer, jobs_pkg, JOBS_SINK, mode, buffer, size, 30000);
  } else {
    while ((st = tc_send(peer, jobs_pkg, JOBS_SINK, mode, buffer, size)) == TC_ERR_NO_CREDIT)
      tc_progress(from ? from : ctx, NULL);
  }
  /* One-line slots refuse what does not fit a line, at once. */
  int must_refuse = Slot == 64 && size > OneLinePayload;
  int allowed = must_refuse ? st == TC_ERR_TOO_LARGE
                            : st == TC_OK || (mode == TC_SEND_INJECTED_FULL &&
                                              st == TC_ERR_TOO_LARGE);
  CHECK(allowed, "%s through a %s handle, %s, a %zu-byte payload: status %d (%s)",
        way ? "tc_send" : "tc_send_wait", kind, modeName(mode), size, (int)st,
        tc_status_string(st));
  if (st == TC_OK)
    ++*sent;
}

int main(int argc, char **argv) {
  /* The slot size: the library's (TC_SLOT_SIZE, read by the context),
   * or 256 set here. */
  const char *env_slot = getenv("TC_SLOT_SIZE");
  if (argc != 2 || (env_slot && (atoi(env_slot) < 64 || atoi(env_slot) > MaxSlot))) {
    fprintf(stderr, "usage: [TC_SLOT_SIZE=64..256] tc-job-sends <jobs prefix>\n");
    return 2;
  }
  if (env_slot)
    Slot = (size_t)atoi(env_slot);
  MPI_Init(&argc, &argv);
  tc_package_t *pkg;
  if (jobs_package_load(argv[1], TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return 2;
  jobs_pkg = pkg;
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.slot_size = env_slot ? 0 : (uint32_t)Slot;
  tc_context_t *ctx = NULL;
  if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return 2;
  unsigned size;
  tc_status_t st = tc_job_join_mpi(ctx, MPI_COMM_WORLD);
  if (st != TC_OK || tc_job_rank(ctx, &rank_, &size) != TC_OK || size != 2) {
    fprintf(stderr, "tc_job_join: %s (a job of 2 ranks)\n", tc_status_string(st));
    return 1;
  }
  unsigned other = 1 - rank_;
  /* A connection to the other rank from a context outside the job (a rank
   * keeps one connection per pair of ranks), from its address blob. */
  tc_context_t *outside = NULL;
  if (tc_context_create(&p, &outside) != TC_OK || tc_context_add_package(outside, pkg) != TC_OK)
    return 2;
  uint8_t mine[512], theirs[2][512];
  size_t n = sizeof mine;
  CHECK(tc_context_address(ctx, mine, &n) == TC_OK, "tc_context_address");
  memset(mine + n, 0, sizeof mine - n);
  uint64_t blob_size = n, sizes[2];
  MPI_Allgather(&blob_size, 1, MPI_UINT64_T, sizes, 1, MPI_UINT64_T, MPI_COMM_WORLD);
  MPI_Allgather(mine, sizeof mine, MPI_BYTE, theirs, sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  tc_peer_t *handles[3] = {NULL, NULL, NULL};
  const char *kinds[3] = {"connected", "tc_job_peer", "self"};
  /* One rank connects at a time, the other progressing its job context,
   * which answers: a handshake of another thread of this process at the
   * same time can make the check of the keys' mappings refuse a good
   * peer (see docs/security.md). */
  for (unsigned r = 0; r < 2; r++) {
    if (r == rank_) {
      st = tc_connect_address(outside, theirs[other], sizes[other], 30000, &handles[0]);
      CHECK(st == TC_OK, "tc_connect_address: %s", tc_status_string(st));
    }
    MPI_Request turn;
    MPI_Ibarrier(MPI_COMM_WORLD, &turn);
    for (int done = 0; !done; MPI_Test(&turn, &done, MPI_STATUS_IGNORE))
      tc_progress(ctx, NULL);
  }
  /* The job's contexts run on their executor threads while this thread
   * sends from the outside one (its frames run in the other rank's job
   * context, which no thread of its would otherwise progress meanwhile). */
  tc_executor_start(ctx);
  tc_job_peer(ctx, other, &handles[1]);
  tc_job_peer(ctx, rank_, &handles[2]);

  const size_t payloads[] = {0,        8,        OneLinePayload, OneLinePayload + 1, Slot / 2,
                             Slot - 72 + 64 * (Slot == 64), Slot - 8, Slot, Slot + 8,
                             2 * Slot};
  tc_send_mode_t modes[3] = {TC_SEND_LOCAL, TC_SEND_INJECTED, TC_SEND_INJECTED_FULL};
  uint64_t sent_to[2] = {0, 0};
  for (int h = 0; h < 3; h++) {
    for (int m = 0; m < 3 && handles[h]; m++)
      for (size_t i = 0; i < sizeof payloads / sizeof *payloads; i++)
        for (int way = 0; way < 2; way++)
          sendOne(ctx, h ? NULL : outside, handles[h], kinds[h], modes[m], payloads[i], way,
                  &sent_to[h == 2 ? rank_ : other]);
    if (h == 0) {
      /* The outside connection's frames are no job's: flushed, every rank
       * at once, before the job's own go without executors. */
      st = handles[0] ? tc_flush(handles[0], 60000) : TC_ERR_IO;
      CHECK(st == TC_OK, "tc_flush of the outside connection: %s", tc_status_string(st));
      MPI_Barrier(MPI_COMM_WORLD);
      tc_executor_stop(ctx);
    }
  }
  /* Where the frames stand, through the handle a frame was sent on. */
  tc_peer_frames_t f;
  CHECK(tc_peer_frames(handles[1], &f) == TC_OK && f.sent >= f.finished,
        "tc_peer_frames on a tc_job_peer handle");
  st = tc_job_quiesce(ctx, 60000);
  CHECK(st == TC_OK, "tc_job_quiesce: %s", tc_status_string(st));
  CHECK(handles[0] && tc_peer_frames(handles[0], &f) == TC_OK && f.queued == 0 &&
            f.finished == f.sent,
        "tc_peer_frames after quiescence: %llu queued, %llu sent, %llu finished",
        (unsigned long long)f.queued, (unsigned long long)f.sent, (unsigned long long)f.finished);
  uint64_t expected[2];
  MPI_Allreduce(sent_to, expected, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  uint64_t *sunk = tc_package_symbol(pkg, "jobs_sunk");
  uint64_t *errors = tc_package_symbol(pkg, "jobs_sink_errors");
  CHECK(sunk && *sunk == expected[rank_], "%llu frames ran here, %llu were sent here",
        sunk ? (unsigned long long)*sunk : 0ull, (unsigned long long)expected[rank_]);
  CHECK(errors && *errors == 0, "%llu frames ran with a payload not as sent",
        errors ? (unsigned long long)*errors : 0ull);
  printf("sends: rank %u sent %llu frames to rank %u, %llu to itself; %llu ran here\n", rank_,
         (unsigned long long)sent_to[other], other, (unsigned long long)sent_to[rank_],
         sunk ? (unsigned long long)*sunk : 0ull);
  printf("job: rank %u of %u %s\n", rank_, size, failures ? "FAILED" : "PASSED");
  fflush(stdout);
  if (handles[0])
    tc_peer_close(handles[0]);
  tc_context_destroy(outside);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  MPI_Finalize();
  return failures != 0;
}
