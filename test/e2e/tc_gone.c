/* tc-gone: the handles of peers that have gone (docs/runtime.md, "Peers
 * that go"), between two real processes.
 *   tc-gone <calls prefix>
 * The sender (a forked child) connects to this receiver, which takes its
 * handle (tc_context_peer), and listens itself, so that this side connects
 * to it too. The child is killed (SIGKILL). The receiver sees
 * TC_EVENT_PEER_GONE and keeps progressing while the peer is reaped; then
 * every call on the kept handle returns TC_ERR_IO (its statistics are still
 * read), and closing it, twice, is safe. On the handle of the connection
 * this side made, every call returns a status. Run with MALLOC_PERTURB_ set:
 * a handle freed under the application then crashes the calls on it.
 * Prints "gone: PASSED" at the end. */
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

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static tc_context_t *context(const char *prefix, tc_package_t **pkg) {
  if (calls_package_load(prefix, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, pkg) != TC_OK)
    return NULL;
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.slots = 16;
  tc_context_t *ctx = NULL;
  if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, *pkg) != TC_OK)
    return NULL;
  return ctx;
}

/* The sender: listens, connects to the receiver, sends it one frame, says
 * so, and progresses until it is killed. */
static int sender(const char *prefix, int in, int out) {
  tc_package_t *pkg;
  tc_context_t *ctx = context(prefix, &pkg);
  uint16_t port = 0, mine = 0;
  tc_peer_t *peer;
  if (!ctx || read(in, &port, sizeof port) != sizeof port ||
      tc_listen(ctx, "127.0.0.1", 0) != TC_OK || tc_listen_port(ctx, &mine) != TC_OK ||
      tc_connect(ctx, "127.0.0.1", port, 10000, &peer) != TC_OK)
    return 1;
  uint64_t v = 7;
  if (tc_send(peer, pkg, CALLS_ECHO, TC_SEND_LOCAL, &v, sizeof v) != TC_OK ||
      tc_flush(peer, 10000) != TC_OK || write(out, &mine, sizeof mine) != sizeof mine)
    return 1;
  for (;;)
    tc_progress(ctx, NULL);
}

/* Every call that takes a peer, on a peer that has gone. */
static void checkGone(tc_context_t *ctx, tc_package_t *pkg, tc_peer_t *h, const char *which) {
  uint64_t v = 1, r = 0;
  size_t got = 0;
  tc_status_t st;
  CHECK((st = tc_send(h, pkg, CALLS_ECHO, TC_SEND_LOCAL, &v, sizeof v)) == TC_ERR_IO,
        "%s: tc_send: %s", which, tc_status_string(st));
  CHECK((st = tc_send(h, pkg, CALLS_ECHO, TC_SEND_INJECTED, &v, sizeof v)) == TC_ERR_IO,
        "%s: tc_send injected: %s", which, tc_status_string(st));
  /* (echo has no payload helpers: the arguments are refused first) */
  CHECK((st = tc_send_args(h, pkg, CALLS_ECHO, TC_SEND_LOCAL, &v)) == TC_ERR_IO ||
            st == TC_ERR_INVALID_PARAM,
        "%s: tc_send_args: %s", which, tc_status_string(st));
  CHECK((st = tc_call_args(h, pkg, CALLS_ECHO, TC_SEND_LOCAL, &v, &r, sizeof r, &got, 100)) ==
                TC_ERR_IO ||
            st == TC_ERR_INVALID_PARAM,
        "%s: tc_call_args: %s", which, tc_status_string(st));
  tc_call_t *c = NULL;
  CHECK((st = tc_call_start(h, pkg, CALLS_ECHO, TC_SEND_LOCAL, &v, sizeof v, &r, sizeof r,
                            &c)) == TC_ERR_IO,
        "%s: tc_call_start: %s", which, tc_status_string(st));
  CHECK((st = tc_call(h, pkg, CALLS_ECHO, TC_SEND_LOCAL, &v, sizeof v, &r, sizeof r, &got,
                      1000)) == TC_ERR_IO,
        "%s: tc_call: %s", which, tc_status_string(st));
  CHECK((st = tc_peer_cork(h, 1)) == TC_ERR_IO, "%s: tc_peer_cork: %s", which,
        tc_status_string(st));
  CHECK((st = tc_peer_cork(h, 0)) == TC_ERR_IO, "%s: tc_peer_uncork: %s", which,
        tc_status_string(st));
  tc_jam_fault_t f;
  CHECK((st = tc_peer_last_fault(h, &f)) == TC_ERR_IO || st == TC_ERR_INVALID_PARAM,
        "%s: tc_peer_last_fault: %s", which, tc_status_string(st));
  CHECK((st = tc_ried_push(h, "/dev/null", 1000)) == TC_ERR_IO, "%s: tc_ried_push: %s", which,
        tc_status_string(st));
  (void)ctx;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: tc-gone <calls prefix>\n");
    return 2;
  }
  int down[2], up[2];
  if (pipe(down) || pipe(up))
    return 1;
  pid_t child = fork();
  if (child == 0) {
    close(down[1]);
    close(up[0]);
    _exit(sender(argv[1], down[0], up[1]));
  }
  close(down[0]);
  close(up[1]);
  tc_package_t *pkg;
  tc_context_t *ctx = context(argv[1], &pkg);
  uint16_t port = 0, theirs = 0;
  if (!ctx || tc_listen(ctx, "127.0.0.1", 0) != TC_OK || tc_listen_port(ctx, &port) != TC_OK ||
      write(down[1], &port, sizeof port) != sizeof port) {
    fprintf(stderr, "the receiver did not start\n");
    return 1;
  }
  /* Its frame runs here; then it says it is listening. */
  fcntl(up[0], F_SETFL, O_NONBLOCK);
  double until = now() + 30;
  while (read(up[0], &theirs, sizeof theirs) != sizeof theirs && now() < until)
    tc_progress(ctx, NULL);
  tc_peer_t *h = NULL, *c = NULL;
  tc_status_t st = tc_context_peer(ctx, 1, &h);
  CHECK(theirs && st == TC_OK, "the sender's handle: %s", tc_status_string(st));
  st = theirs ? tc_connect(ctx, "127.0.0.1", theirs, 10000, &c) : TC_ERR_IO;
  CHECK(st == TC_OK, "connect to the sender: %s", tc_status_string(st));
  if (!h || !c) {
    kill(child, SIGKILL);
    return 1;
  }
  tc_peer_stats_t ps;
  CHECK(tc_peer_stats(h, &ps) == TC_OK && ps.frames_executed == 1, "its frame ran: %llu",
        (unsigned long long)ps.frames_executed);

  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  /* Both connections end: two events. */
  int gone = 0;
  until = now() + 30;
  while (gone < 2 && now() < until) {
    tc_progress(ctx, NULL);
    tc_event_t e;
    while (tc_poll_event(ctx, &e) == 1)
      gone += e.kind == TC_EVENT_PEER_GONE && e.status == TC_ERR_IO;
  }
  CHECK(gone == 2, "%d of 2 peers gone seen", gone);
  /* Progress on while the receiver reaps it (at a control turn, every
   * millisecond or so of progress): the handle was freed there before. */
  until = now() + 2;
  while (now() < until)
    tc_progress(ctx, NULL);
  CHECK(tc_context_peer(ctx, 1, &(tc_peer_t *){NULL}) == TC_ERR_INVALID_PARAM,
        "peer 1 is still there");

  checkGone(ctx, pkg, h, "accepted");
  CHECK((st = tc_flush(h, 100)) == TC_ERR_IO, "accepted: tc_flush: %s", tc_status_string(st));
  CHECK((st = tc_peer_stats(h, &ps)) == TC_OK && ps.frames_executed == 1,
        "accepted: tc_peer_stats: %s, %llu frames", tc_status_string(st),
        (unsigned long long)ps.frames_executed);
  tc_peer_close(h);
  tc_peer_close(h);
  CHECK((st = tc_send(h, pkg, CALLS_ECHO, TC_SEND_LOCAL, &st, 4)) == TC_ERR_IO,
        "accepted, closed: tc_send: %s", tc_status_string(st));

  /* The connection this side made: failed, kept until closed. Flush says
   * whether every frame sent ran (nothing was sent here). */
  checkGone(ctx, pkg, c, "connected");
  st = tc_flush(c, 100);
  CHECK(st == TC_OK || st == TC_ERR_IO, "connected: tc_flush: %s", tc_status_string(st));
  tc_peer_close(c);

  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  printf("gone: %s\n", failures ? "FAILED" : "PASSED");
  return failures != 0;
}
