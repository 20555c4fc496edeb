/* tc-calls: calls with answers (tc_call*, tc_jam_return) between two real
 * processes, a receiver forked from the caller.
 *   tc-calls <calls prefix> local|injected [executor]
 * Checks: answers of one line, of several lines and larger than a slot;
 * 256 calls outstanding at once, answered each with its own bytes; an
 * answer larger than the call allows, or than any answer may be; a jam
 * that never answers (the wait times out) or faults (the call ends with
 * TC_ERR_JAM_FAULT); a second answer refused; a receiver killed while a
 * call is outstanding (TC_ERR_IO). Prints "calls: PASSED" at the end. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <twochains/twochains.h>
#include <twochains/packages/calls.h>

static int failures;

#define CHECK(cond, ...)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "FAILED (%s:%d): ", __FILE__, __LINE__);                         \
      fprintf(stderr, __VA_ARGS__);                                                   \
      fputc('\n', stderr);                                                            \
      failures++;                                                                     \
    }                                                                                 \
  } while (0)

static tc_context_t *context(tc_package_t *pkg) {
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.slots = 16;
  p.jam_time_limit_ms = 2000;
  p.quarantine_faults = TC_NEVER_QUARANTINE;
  tc_context_t *ctx = NULL;
  if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return NULL;
  return ctx;
}

/* Runs frames until the caller closes the pipe. */
static int receive(const char *prefix, int out, int in) {
  tc_package_t *pkg;
  if (calls_package_load(prefix, TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return 1;
  tc_context_t *ctx = context(pkg);
  uint16_t port = 0;
  if (!ctx || tc_listen(ctx, "127.0.0.1", 0) != TC_OK || tc_listen_port(ctx, &port) != TC_OK)
    return 1;
  if (write(out, &port, sizeof port) != sizeof port)
    return 1;
  fcntl(in, F_SETFL, O_NONBLOCK);
  for (unsigned i = 0;; i++) {
    tc_progress(ctx, NULL);
    char c;
    if ((i & 1023) == 0 && read(in, &c, 1) == 0)
      break;
  }
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  printf("receiver: replies sent %llu, jams faulted %llu\n", (unsigned long long)s.replies_sent,
         (unsigned long long)s.jams_faulted);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[2], "local") && strcmp(argv[2], "injected"))) {
    fprintf(stderr, "usage: tc-calls <calls prefix> local|injected [executor]\n");
    return 2;
  }
  tc_send_mode_t mode = strcmp(argv[2], "local") ? TC_SEND_INJECTED : TC_SEND_LOCAL;
  int executor = argc > 3 && !strcmp(argv[3], "executor");
  int up[2], down[2];
  if (pipe(up) || pipe(down))
    return 1;
  pid_t child = fork();
  if (child == 0) {
    close(up[0]);
    close(down[1]);
    _exit(receive(argv[1], up[1], down[0]));
  }
  close(up[1]);
  close(down[0]);
  uint16_t port;
  if (read(up[0], &port, sizeof port) != sizeof port) {
    fprintf(stderr, "the receiver did not start\n");
    return 1;
  }

  tc_package_t *pkg;
  tc_status_t st = calls_package_load(argv[1], TC_PACKAGE_SENDER, &pkg);
  tc_context_t *ctx = st == TC_OK ? context(pkg) : NULL;
  tc_peer_t *peer = NULL;
  if (!ctx || (st = tc_connect(ctx, "127.0.0.1", port, 10000, &peer)) != TC_OK) {
    fprintf(stderr, "cannot connect: %s\n", tc_status_string(st));
    return 1;
  }
  if (executor)
    tc_executor_start(ctx);

  /* One line, then several lines. */
  uint8_t out[1000], in[1000];
  for (size_t i = 0; i < sizeof out; i++)
    out[i] = (uint8_t)(i * 13 + 1);
  size_t got = 0;
  st = tc_call(peer, pkg, CALLS_ECHO, mode, out, 16, in, sizeof in, &got, 10000);
  CHECK(st == TC_OK && got == 16 && !memcmp(in, out, 16), "echo 16: %s, %zu bytes",
        tc_status_string(st), got);
  memset(in, 0, sizeof in);
  st = calls_call_echo(peer, pkg, mode, out, sizeof out, in, sizeof in, &got, 10000);
  CHECK(st == TC_OK && got == sizeof out && !memcmp(in, out, sizeof out),
        "echo 1000: %s, %zu bytes", tc_status_string(st), got);
  st = tc_call(peer, pkg, CALLS_ECHO, mode, NULL, 0, NULL, 0, &got, 10000);
  CHECK(st == TC_OK && got == 0, "echo 0: %s, %zu bytes", tc_status_string(st), got);

  /* Many at once, each answered with its own bytes. */
  enum { Outstanding = 256 };
  static tc_call_t *calls[Outstanding];
  static uint64_t answers[Outstanding];
  for (int i = 0; i < Outstanding; i++) {
    uint64_t v = 0x1000 + (uint64_t)i * 0x10001;
    while ((st = tc_call_start(peer, pkg, CALLS_ECHO, mode, &v, sizeof v, &answers[i],
                               sizeof answers[i], &calls[i])) == TC_ERR_NO_CREDIT)
      tc_progress(ctx, NULL);
    CHECK(st == TC_OK, "start %d: %s", i, tc_status_string(st));
  }
  int answered = 0;
  for (int i = Outstanding - 1; i >= 0; i--) {
    if (!calls[i])
      continue;
    st = tc_call_wait(calls[i], 10000, &got);
    answered += st == TC_OK && got == 8 && answers[i] == 0x1000 + (uint64_t)i * 0x10001;
    tc_call_release(calls[i]);
  }
  CHECK(answered == Outstanding, "%d of %d outstanding calls answered right", answered,
        Outstanding);
  printf("outstanding: %d calls answered\n", answered);

  /* Larger than a slot: the answer travels as a message. */
  static uint8_t big[1u << 20];
  uint32_t n = 65536 + 40;
  st = calls_call_big(peer, pkg, mode, &n, sizeof n, big, sizeof big, &got, 10000);
  int pattern = st == TC_OK && got == n;
  for (uint32_t i = 0; pattern && i < n; i++)
    pattern = big[i] == (uint8_t)(i * 7 + 3);
  CHECK(pattern, "big %u: %s, %zu bytes, pattern %s", n, tc_status_string(st), got,
        pattern ? "right" : "wrong");
  /* More than the call allows, in a frame and as a message. */
  st = tc_call(peer, pkg, CALLS_ECHO, mode, out, 100, in, 99, &got, 10000);
  CHECK(st == TC_ERR_TOO_LARGE, "echo 100 into 99: %s", tc_status_string(st));
  st = calls_call_big(peer, pkg, mode, &n, sizeof n, big, n - 1, &got, 10000);
  CHECK(st == TC_ERR_TOO_LARGE, "big into one byte less: %s", tc_status_string(st));
  /* More than any answer may be: the caller is told. */
  n = TC_CALL_MAX_REPLY + 1;
  st = calls_call_big(peer, pkg, mode, &n, sizeof n, big, sizeof big, &got, 10000);
  CHECK(st == TC_ERR_TOO_LARGE, "big past the limit: %s", tc_status_string(st));

  /* Answered twice: the second is refused on the receiver. */
  char word[8];
  st = calls_call_twice(peer, pkg, mode, NULL, 0, word, sizeof word, &got, 10000);
  CHECK(st == TC_OK && got == 4 && !strcmp(word, "one"), "twice: %s", tc_status_string(st));
  int32_t state[2] = {0, 0};
  st = calls_call_state(peer, pkg, mode, NULL, 0, state, sizeof state, &got, 10000);
  CHECK(st == TC_OK && state[0] == TC_ERR_INVALID_PARAM && state[1] == TC_ERR_TOO_LARGE,
        "the receiver's tc_jam_return said %d to a second answer, %d to one past the limit",
        state[0], state[1]);

  /* Never answered: the wait times out and the call stays outstanding. */
  tc_call_t *silent;
  st = tc_call_start(peer, pkg, CALLS_SILENT, mode, NULL, 0, NULL, 0, &silent);
  CHECK(st == TC_OK, "silent: %s", tc_status_string(st));
  if (st == TC_OK) {
    st = tc_call_wait(silent, 300, &got);
    CHECK(st == TC_ERR_TIMED_OUT, "silent wait: %s", tc_status_string(st));
    st = tc_call_test(silent, &got);
    CHECK(st == TC_ERR_INCOMPLETE, "silent test: %s", tc_status_string(st));
    /* An answer to a frame that was no call (echo sent with tc_send) is
     * dropped: it ends no other call. */
    tc_stats_t before, after;
    tc_context_stats(ctx, &before);
    uint64_t v = 99;
    while ((st = tc_send(peer, pkg, CALLS_ECHO, mode, &v, sizeof v)) == TC_ERR_NO_CREDIT)
      tc_progress(ctx, NULL);
    CHECK(st == TC_OK && tc_flush(peer, 5000) == TC_OK, "echo sent as no call: %s",
          tc_status_string(st));
    st = tc_call_wait(silent, 200, &got);
    tc_context_stats(ctx, &after);
    CHECK(st == TC_ERR_TIMED_OUT && after.calls_answered == before.calls_answered,
          "an answer to no call ended another call: %s", tc_status_string(st));
    tc_call_release(silent);
  }
  /* Abandoned: the fault report ends the call. */
  st = tc_call(peer, pkg, CALLS_CRASH, mode, NULL, 0, in, sizeof in, &got, 10000);
  CHECK(st == TC_ERR_JAM_FAULT, "crash: %s", tc_status_string(st));
  tc_flush(peer, 5000); /* takes the fault off the peer, and checks it still serves */
  st = tc_call(peer, pkg, CALLS_ECHO, mode, out, 8, in, sizeof in, &got, 10000);
  CHECK(st == TC_OK && got == 8, "echo after the fault: %s", tc_status_string(st));

  tc_stats_t s;
  tc_context_stats(ctx, &s);
  printf("caller: calls answered %llu, failed %llu\n", (unsigned long long)s.calls_answered,
         (unsigned long long)s.calls_failed);

  /* The receiver dies with a call outstanding: the call ends, TC_ERR_IO. */
  st = tc_call_start(peer, pkg, CALLS_SILENT, mode, NULL, 0, NULL, 0, &silent);
  if (st == TC_OK) {
    tc_call_wait(silent, 100, &got);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    child = 0;
    st = tc_call_wait(silent, 30000, &got);
    CHECK(st == TC_ERR_IO, "a call to a receiver that died: %s", tc_status_string(st));
    tc_call_release(silent);
  }
  if (executor)
    tc_executor_stop(ctx);
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  if (child) {
    close(down[1]);
    waitpid(child, NULL, 0);
  }
  printf("calls: %s\n", failures ? "FAILED" : "PASSED");
  return failures != 0;
}
