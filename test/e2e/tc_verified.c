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
 *===----------------------------------------------------------------------===*/
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
  time_t end = time(NULL) + 20;
  do {
    tc_progress(ctx, NULL);
    tc_wait(ctx, 20);
    tc_context_stats(ctx, &after);
  } while (time(NULL) < end && (after.frames_executed_local == before.frames_executed_local ||
                                after.frames_rejected == before.frames_rejected));
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
    end = time(NULL) + 20;
    do {
      tc_progress(ctx, NULL);
      tc_wait(ctx, 20);
      tc_context_stats(ctx, &after);
    } while (time(NULL) < end && after.frames_executed_local == before.frames_executed_local);
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

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "receiver"))
    return receiver((uint16_t)atoi(argv[2]));
  if (argc == 5 && !strcmp(argv[1], "sender"))
    return sender((uint16_t)atoi(argv[2]), argv[3], argv[4], NULL);
  if (argc == 6 && !strcmp(argv[1], "sender"))
    return sender((uint16_t)atoi(argv[2]), argv[3], argv[4], argv[5]);
  fprintf(stderr, "usage: tc-verified receiver PORT | sender PORT SANDBOXED PLAIN [EXPECT]\n");
  return 2;
}
