/* tc-refused: frames the receiver refuses are told to their sender, with
 * why (docs/runtime.md, "Refusals"), between two real processes.
 *   tc-refused <calls prefix> <containment prefix> local|injected [executor]
 * The receiver (forked) loads the package calls only; the sender loads
 * containment too and sends frames of it. A call of containment's echo
 * ends with TC_ERR_UNKNOWN_PACKAGE, not at its timeout; tc_flush returns
 * that status once; an event says so, tc_peer_last_fault says
 * TC_JAM_REFUSED with it, and the peer's statistics count it. The
 * connection goes on serving calls of calls. Prints "refused: PASSED". */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

static tc_context_t *context(void) {
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.slots = 16;
  tc_context_t *ctx = NULL;
  return tc_context_create(&p, &ctx) == TC_OK ? ctx : NULL;
}

/* Runs frames until the sender closes the pipe. */
static int receive(const char *prefix, int out, int in) {
  tc_package_t *pkg;
  tc_context_t *ctx = context();
  uint16_t port = 0;
  if (!ctx || calls_package_load(prefix, TC_PACKAGE_RECEIVER, &pkg) != TC_OK ||
      tc_context_add_package(ctx, pkg) != TC_OK || tc_listen(ctx, "127.0.0.1", 0) != TC_OK ||
      tc_listen_port(ctx, &port) != TC_OK || write(out, &port, sizeof port) != sizeof port)
    return 1;
  fcntl(in, F_SETFL, O_NONBLOCK);
  for (unsigned i = 0;; i++) {
    tc_progress(ctx, NULL);
    char c;
    if ((i & 1023) == 0 && read(in, &c, 1) == 0)
      break;
  }
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || (strcmp(argv[3], "local") && strcmp(argv[3], "injected"))) {
    fprintf(stderr, "usage: tc-refused <calls prefix> <containment prefix> local|injected "
                    "[executor]\n");
    return 2;
  }
  tc_send_mode_t mode = strcmp(argv[3], "local") ? TC_SEND_INJECTED : TC_SEND_LOCAL;
  int executor = argc > 4 && !strcmp(argv[4], "executor");
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

  tc_package_t *calls = NULL, *other = NULL;
  tc_package_params_t pp = {TC_PACKAGE_PARAMS_VERSION, TC_PACKAGE_SENDER, argv[2],
                            "containment", NULL};
  tc_context_t *ctx = context();
  tc_peer_t *peer = NULL;
  uint32_t echo = 0;
  tc_status_t st = TC_ERR_IO;
  if (!ctx || calls_package_load(argv[1], TC_PACKAGE_SENDER, &calls) != TC_OK ||
      tc_package_load(&pp, &other) != TC_OK || tc_context_add_package(ctx, calls) != TC_OK ||
      tc_context_add_package(ctx, other) != TC_OK ||
      tc_package_find(other, "echo", &echo) != TC_OK ||
      (st = tc_connect(ctx, "127.0.0.1", port, 10000, &peer)) != TC_OK) {
    fprintf(stderr, "cannot connect: %s\n", tc_status_string(st));
    kill(child, SIGKILL);
    return 1;
  }
  if (executor)
    tc_executor_start(ctx);

  /* A call of a package the receiver does not have ends with why, long
   * before its timeout (which would say TC_ERR_TIMED_OUT). */
  uint8_t out[16] = {1, 2, 3}, in[64];
  size_t got = 0;
  st = tc_call(peer, other, echo, mode, out, sizeof out, in, sizeof in, &got, 20000);
  CHECK(st == TC_ERR_UNKNOWN_PACKAGE, "a call of an unknown package: %s",
        tc_status_string(st));
  st = tc_flush(peer, 10000);
  CHECK(st == TC_ERR_UNKNOWN_PACKAGE, "the flush after it: %s", tc_status_string(st));
  st = tc_flush(peer, 10000);
  CHECK(st == TC_OK, "the next flush: %s", tc_status_string(st));
  tc_jam_fault_t f;
  memset(&f, 0, sizeof f);
  st = tc_peer_last_fault(peer, &f);
  CHECK(st == TC_OK && f.kind == TC_JAM_REFUSED && f.status == TC_ERR_UNKNOWN_PACKAGE &&
            f.element == echo && f.signal == 0 && f.count == 1,
        "last fault: %s, kind %u, status %d, element %u, signal %d, count %u",
        tc_status_string(st), f.kind, f.status, f.element, f.signal, f.count);

  /* A frame sent (no call): the flush says why it did not run. */
  while ((st = tc_send(peer, other, echo, mode, out, sizeof out)) == TC_ERR_NO_CREDIT)
    tc_progress(ctx, NULL);
  CHECK(st == TC_OK, "send: %s", tc_status_string(st));
  st = tc_flush(peer, 10000);
  CHECK(st == TC_ERR_UNKNOWN_PACKAGE, "the flush of a sent frame: %s", tc_status_string(st));

  int events = 0;
  tc_event_t e;
  while (tc_poll_event(ctx, &e) == 1)
    events += e.kind == TC_EVENT_FAULT_REPORTED && e.status == TC_ERR_UNKNOWN_PACKAGE &&
              e.element == echo && e.signal == 0;
  CHECK(events == 2, "%d of 2 refusals reported as events", events);
  tc_peer_stats_t ps;
  CHECK(tc_peer_stats(peer, &ps) == TC_OK && ps.faults_reported == 2,
        "faults_reported %llu, not 2", (unsigned long long)ps.faults_reported);

  /* The connection goes on. */
  st = tc_call(peer, calls, CALLS_ECHO, mode, out, 8, in, sizeof in, &got, 10000);
  CHECK(st == TC_OK && got == 8 && !memcmp(in, out, 8), "echo after the refusals: %s",
        tc_status_string(st));
  CHECK(tc_flush(peer, 10000) == TC_OK, "the flush after the echo");

  if (executor)
    tc_executor_stop(ctx);
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  tc_package_unload(other);
  tc_package_unload(calls);
  close(down[1]);
  waitpid(child, NULL, 0);
  printf("refused: %s\n", failures ? "FAILED" : "PASSED");
  return failures != 0;
}
