/*===- tc_verified.c - Code from a peer the receiver does not trust -------===
 *
 *   tc-verified receiver PORT
 *       a context under the verified code-trust policy, holding no package
 *       and no trusted signer (slots as TC_SLOT_SIZE says: small ones make
 *       injected frames ship their images ahead), listens on 127.0.0.1 and
 *       progresses (no
 *       executor thread) until STOP appears on stdin (or 120 s); then
 *       prints its counters
 *   tc-verified sender PORT SANDBOXED-PREFIX PLAIN-PREFIX
 *       package 'tenant' built twice, with twochains-pkg-gen --sandbox and
 *       without; prints one line per check, "ok" or "FAILED":
 *         the plain build's deployment is refused (TC_ERR_UNTRUSTED)
 *         the sandboxed build is deployed, unsigned
 *         'sum' answers in both send modes; 'count' keeps its statics
 *         'whoami' answers what the services say of its frame; 'echo'
 *         replies with frames of 'sink': the Local one runs here, the
 *         injected one (a sandboxed image) is refused here
 *         'escape' (a service given memory outside the jam) and 'crash'
 *         (a store to the region's read-only call table) are abandoned,
 *         'spin' (a loop) is interrupted by the receiver's time limit
 *         (its default, 1 s), and the receiver goes on: 'sum' answers
 *         after each
 *   tc-verified sender PORT PREFIX - EXPECT
 *       the build of 'tenant' in PREFIX (a forged one: tc-forge-jam): its
 *       deployment must end with status EXPECT (a number); if that is 0,
 *       'sum' must then answer in both send modes
 *   tc-verified job DIR RANK PREFIX
 *       two ranks joined by address blobs in DIR: rank 0 under the
 *       verified policy, rank 1 deploying PREFIX's build to it and calling
 *       'hop', which answers its job's services and forwards to rank 1
 *       (tc_jam_forward_rank)
 *===----------------------------------------------------------------------===*/
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <twochains/jam.h>
#include <twochains/twochains.h>

static int failures;

static void check(int ok, const char *what, tc_status_t st) {
  printf("%s: %s (%s)\n", ok ? "ok" : "FAILED", what, tc_status_string(st));
  fflush(stdout);
  failures += !ok;
}

static tc_package_t *load(const char *prefix, uint32_t roles) {
  tc_package_params_t pp = {TC_PACKAGE_PARAMS_VERSION, roles, prefix, "tenant", NULL};
  tc_package_t *pkg = NULL;
  if (tc_package_load(&pp, &pkg) != TC_OK) {
    fprintf(stderr, "cannot load package 'tenant' from %s\n", prefix);
    exit(1);
  }
  return pkg;
}

static uint32_t element(tc_package_t *pkg, const char *name) {
  uint32_t id;
  if (tc_package_find(pkg, name, &id) != TC_OK) {
    fprintf(stderr, "no element '%s'\n", name);
    exit(1);
  }
  return id;
}

/* Progresses until a frame ran here since before (and, if rejected, one
 * was refused here too), or end; after: the counters then. */
static void await_frames(tc_context_t *ctx, const tc_stats_t *before, tc_stats_t *after,
                         int rejected, time_t end) {
  do {
    tc_progress(ctx, NULL);
    tc_wait(ctx, 20);
    tc_context_stats(ctx, after);
  } while (time(NULL) < end && (after->frames_executed_local == before->frames_executed_local ||
                                (rejected && after->frames_rejected == before->frames_rejected)));
}

static int receiver(uint16_t port) {
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION};
  cp.code_trust = TC_CODE_TRUST_VERIFIED;
  cp.forward_allow = getenv("FORWARD_ALLOW"); /* where 'relay' may forward */
  tc_context_t *ctx;
  if (tc_context_create(&cp, &ctx) != TC_OK || tc_listen(ctx, "127.0.0.1", port) != TC_OK)
    return 1;
  printf("listening\n");
  fflush(stdout);
  time_t end = time(NULL) + 120;
  for (;;) {
    tc_progress(ctx, NULL);
    tc_wait(ctx, 20);
    struct pollfd in = {0, POLLIN, 0};
    char line[64];
    if (time(NULL) > end ||
        (poll(&in, 1, 0) == 1 && (!fgets(line, sizeof line, stdin) || !strncmp(line, "STOP", 4))))
      break;
  }
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  printf("receiver: %llu deployed, %llu refused, %llu faulted, %llu timed out\n",
         (unsigned long long)s.deployments_received, (unsigned long long)s.deployments_refused,
         (unsigned long long)s.jams_faulted, (unsigned long long)s.jams_timed_out);
  printf("receiver: code shipped ahead %llu, installed in the code cache %llu\n",
         (unsigned long long)s.code_transfers_received, (unsigned long long)s.cache_installs);
  tc_context_destroy(ctx);
  return 0;
}

static void sum_answers(tc_peer_t *peer, tc_package_t *pkg, const char *after) {
  int v[16];
  long want = 0, got = 0;
  for (int i = 0; i < 16; ++i)
    want += v[i] = i * i - 7;
  tc_send_mode_t modes[2] = {TC_SEND_LOCAL, TC_SEND_INJECTED};
  for (int m = 0; m < 2; ++m) {
    size_t n = 0;
    tc_status_t st = tc_call(peer, pkg, element(pkg, "sum"), modes[m], v, sizeof v, &got,
                             sizeof got, &n, 20000);
    char what[160];
    snprintf(what, sizeof what, "'sum' answers %s, sent %s", after, m ? "injected" : "Local");
    check(st == TC_OK && n == sizeof got && got == want, what, st);
  }
}

static int sender(uint16_t port, const char *sandboxed, const char *plain, const char *expect) {
  /* A receiver too: echo's replies come back as frames of 'sink'. */
  tc_package_t *pkg = load(sandboxed, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  tc_context_t *ctx;
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION};
  if (tc_context_create(&cp, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return 1;
  tc_peer_t *peer;
  tc_status_t st = tc_connect(ctx, "127.0.0.1", port, 20000, &peer);
  check(st == TC_OK, "a peer the receiver does not trust connects", st);
  if (st != TC_OK)
    return 1;
  if (expect) {
    st = tc_deploy(peer, pkg, 60000);
    char what[96];
    snprintf(what, sizeof what, "the deployment ends with status %s", expect);
    check(st == (tc_status_t)atoi(expect), what, st);
    if (st == TC_OK)
      sum_answers(peer, pkg, "from the region");
    return failures != 0;
  }
  tc_package_t *unsandboxed = load(plain, TC_PACKAGE_SENDER);
  st = tc_deploy(peer, unsandboxed, 60000);
  check(st == TC_ERR_UNTRUSTED, "a build without the sandbox is refused", st);
  st = tc_deploy(peer, pkg, 60000);
  check(st == TC_OK, "the sandboxed build is deployed, unsigned", st);
  if (st != TC_OK)
    return 1;
  sum_answers(peer, pkg, "from the region");
  for (long i = 1; i <= 3; ++i) {
    long got[2] = {0, 0};
    size_t n = 0;
    st = tc_call(peer, pkg, element(pkg, "count"), TC_SEND_LOCAL, NULL, 0, got, sizeof got, &n,
                 20000);
    char what[96];
    snprintf(what, sizeof what, "'count' keeps its statics in the region: call %ld answers %ld", i,
             i);
    check(st == TC_OK && n == sizeof got && got[0] == i, what, st);
  }
  unsigned long long who[5] = {0};
  size_t n = 0;
  st = tc_call(peer, pkg, element(pkg, "whoami"), TC_SEND_LOCAL, NULL, 0, who, sizeof who, &n,
               20000);
  check(st == TC_OK && n == sizeof who && who[0] >= 1 && who[1] == TC_JAM_NO_RANK &&
            who[2] == TC_JAM_NO_RANK && who[3] == 0 && who[4] > 0,
        "the services say the frame's sender, ranks, job size and sequence", st);
  /* echo replies twice: a Local frame of 'sink', which runs here, and an
   * injected one, whose sandboxed image this process (running the package
   * natively) refuses to run. */
  tc_stats_t before, after;
  tc_context_stats(ctx, &before);
  long word = 42;
  st = tc_send_wait(peer, pkg, element(pkg, "echo"), TC_SEND_LOCAL, &word, sizeof word, 20000);
  check(st == TC_OK, "'echo' is sent", st);
  await_frames(ctx, &before, &after, 1, time(NULL) + 20);
  check(after.frames_executed_local == before.frames_executed_local + 1,
        "'echo' replies with tc_jam_reply: its 'sink' frame runs here", TC_OK);
  check(after.frames_rejected == before.frames_rejected + 1 &&
            after.frames_executed_injected == before.frames_executed_injected,
        "its injected reply (tc_jam_reply_mode) is refused here: a sandboxed image never runs "
        "natively",
        TC_OK);
  /* relay forwards a word to this process's listener (FORWARD_PORT, in
   * the receiver's forward_allow), as a frame of 'sink'; and to a port
   * the list does not name, which it refuses. */
  const char *forward_port = getenv("FORWARD_PORT");
  if (forward_port) {
    check(tc_listen(ctx, "127.0.0.1", (uint16_t)atoi(forward_port)) == TC_OK,
          "the tenant listens for forwards", TC_OK);
    struct {
      char address[16];
      unsigned port;
      long word;
    } relay = {"127.0.0.1", (unsigned)atoi(forward_port), 7};
    long answer = 1;
    tc_context_stats(ctx, &before);
    n = 0;
    st = tc_call(peer, pkg, element(pkg, "relay"), TC_SEND_LOCAL, &relay, sizeof relay, &answer,
                 sizeof answer, &n, 20000);
    check(st == TC_OK && n == sizeof answer && answer == TC_OK,
          "'relay' forwards with tc_jam_forward from its region", st);
    await_frames(ctx, &before, &after, 0, time(NULL) + 20);
    check(after.frames_executed_local == before.frames_executed_local + 1,
          "the forwarded 'sink' frame runs here", TC_OK);
    relay.port += 1;
    st = tc_call(peer, pkg, element(pkg, "relay"), TC_SEND_LOCAL, &relay, sizeof relay, &answer,
                 sizeof answer, &n, 20000);
    check(st == TC_OK && answer == TC_ERR_INVALID_PARAM,
          "a forward to a place forward_allow does not name is refused", st);
  }
  const char *hostile[2] = {"escape", "crash"};
  for (int h = 0; h < 2; ++h) {
    long got[8];
    n = 0;
    st = tc_call(peer, pkg, element(pkg, hostile[h]), TC_SEND_LOCAL, got, sizeof got, got,
                 sizeof got, &n, 20000);
    char what[96];
    snprintf(what, sizeof what, "'%s' is abandoned, not answered", hostile[h]);
    check(st == TC_ERR_JAM_FAULT, what, st);
    snprintf(what, sizeof what, "after '%s'", hostile[h]);
    sum_answers(peer, pkg, what);
  }
  long spun[1];
  n = 0;
  st = tc_call(peer, pkg, element(pkg, "spin"), TC_SEND_LOCAL, NULL, 0, spun, sizeof spun, &n,
               20000);
  check(st == TC_ERR_JAM_TIMEOUT, "'spin' is interrupted in its region by the time limit", st);
  sum_answers(peer, pkg, "after 'spin'");
  tc_context_destroy(ctx);
  return failures != 0;
}

/* job DIR RANK PREFIX: two ranks joined by address blobs left in DIR.
 * Rank 0 runs under the verified policy and holds nothing; rank 1 deploys
 * the sandboxed build to it and calls 'hop', whose forward comes back to
 * rank 1 as a frame of 'sink'. Rank 1 leaves DIR/done when it has checked;
 * rank 0 then prints its counters. */
static int job(const char *dir, unsigned rank, const char *prefix) {
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION};
  cp.code_trust = rank == 0 ? TC_CODE_TRUST_VERIFIED : TC_CODE_TRUST_PACKAGE;
  tc_context_t *ctx;
  tc_package_t *pkg = rank == 0 ? NULL : load(prefix, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  if (tc_context_create(&cp, &ctx) != TC_OK || (pkg && tc_context_add_package(ctx, pkg) != TC_OK) ||
      tc_listen(ctx, "127.0.0.1", 0) != TC_OK)
    return 1;
  uint8_t blobs[2][512];
  size_t sizes[2] = {sizeof blobs[0], sizeof blobs[1]};
  const void *pointers[2] = {blobs[0], blobs[1]};
  char path[300], tmp[310];
  if (tc_context_address(ctx, blobs[rank], &sizes[rank]) != TC_OK)
    return 1;
  snprintf(path, sizeof path, "%s/%u", dir, rank);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f || fwrite(blobs[rank], 1, sizes[rank], f) != sizes[rank] || fclose(f) || rename(tmp, path))
    return 1;
  unsigned other = 1 - rank;
  snprintf(path, sizeof path, "%s/%u", dir, other);
  time_t end = time(NULL) + 120;
  while (!(f = fopen(path, "rb")) && time(NULL) < end)
    usleep(10000);
  if (!f)
    return 1;
  sizes[other] = fread(blobs[other], 1, sizeof blobs[other], f);
  fclose(f);
  tc_job_params_t jp = {TC_JOB_PARAMS_VERSION, rank, 2};
  jp.blobs = pointers;
  jp.blob_sizes = sizes;
  tc_status_t st = tc_job_join(ctx, &jp);
  check(st == TC_OK, rank ? "rank 1 joins" : "rank 0 joins", st);
  if (st != TC_OK)
    return 1;
  snprintf(path, sizeof path, "%s/done", dir);
  if (rank == 0) {
    while (access(path, F_OK) != 0 && time(NULL) < end) {
      tc_progress(ctx, NULL);
      tc_wait(ctx, 20);
    }
    tc_stats_t s;
    tc_context_stats(ctx, &s);
    printf("rank 0: %llu deployed, %llu faulted\n", (unsigned long long)s.deployments_received,
           (unsigned long long)s.jams_faulted);
    tc_context_destroy(ctx);
    return failures != 0;
  }
  tc_peer_t *peer;
  st = tc_job_peer(ctx, 0, &peer);
  if (st == TC_OK)
    st = tc_deploy(peer, pkg, 60000);
  check(st == TC_OK, "rank 1 deploys the sandboxed build to rank 0", st);
  tc_stats_t before, after;
  tc_context_stats(ctx, &before);
  long answer[4] = {-1, -1, -1, -1};
  size_t n = 0;
  st = tc_call(peer, pkg, element(pkg, "hop"), TC_SEND_LOCAL, NULL, 0, answer, sizeof answer, &n,
               20000);
  check(st == TC_OK && n == sizeof answer && answer[0] == 0 && answer[1] == 2 && answer[2] == 1 &&
            answer[3] == TC_OK,
        "'hop' in rank 0's region: job rank 0 of 2, sent by rank 1, forwarded back", st);
  await_frames(ctx, &before, &after, 0, end);
  check(after.frames_executed_local == before.frames_executed_local + 1,
        "the 'sink' frame tc_jam_forward_rank sent runs on rank 1", TC_OK);
  f = fopen(path, "w");
  if (f)
    fclose(f);
  tc_context_destroy(ctx);
  return failures != 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "job"))
    return job(argv[2], (unsigned)atoi(argv[3]), argv[4]);
  if (argc == 3 && !strcmp(argv[1], "receiver"))
    return receiver((uint16_t)atoi(argv[2]));
  if (argc == 5 && !strcmp(argv[1], "sender"))
    return sender((uint16_t)atoi(argv[2]), argv[3], argv[4], NULL);
  if (argc == 6 && !strcmp(argv[1], "sender"))
    return sender((uint16_t)atoi(argv[2]), argv[3], argv[4], argv[5]);
  fprintf(stderr, "usage: tc-verified receiver PORT | sender PORT SANDBOXED PLAIN [EXPECT]\n");
  return 2;
}
