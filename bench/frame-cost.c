/*===- frame-cost.c - What a frame costs the CPU, without another core ------===
 *
 *   frame-cost [--frames N] [--payload B]
 *
 * One process, two contexts (a receiver and a sender) connected over UCX on
 * 127.0.0.1, one thread: the receiver's empty tc_progress, and tc_send of a
 * 12-byte indirect_put-sized payload followed by the tc_progress that runs
 * it, Local and Injected (cached). No cache line crosses cores, so this is
 * the runtime's own instruction cost per frame; under callgrind
 *
 *   valgrind --tool=callgrind --toggle-collect=send_and_run \
 *       build/bench/frame-cost --frames 100000
 *
 * shows where it goes (docs/performance.md). Times vary run to run on a VM.
 *===----------------------------------------------------------------------===*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <twochains/packages/stdlib.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static tc_context_t *receiver;
static volatile int connected;

/* The receiver answers the handshake while the sender connects. */
static void *answer_handshake(void *unused) {
  (void)unused;
  while (!connected)
    tc_progress(receiver, NULL);
  return NULL;
}

__attribute__((noinline)) static void empty_progress(tc_context_t *ctx, long n) {
  for (long i = 0; i < n; i++)
    tc_progress(ctx, NULL);
}

static unsigned char payload[4096] = {1};
static size_t payload_size = 12;

__attribute__((noinline)) void send_and_run(tc_peer_t *peer, const tc_package_t *pkg,
                                            tc_send_mode_t mode, long n) {
  for (long i = 0; i < n; i++) {
    while (tc_send(peer, pkg, STDLIB_SERVER_SIDE_SUM, mode, payload, payload_size) ==
           TC_ERR_NO_CREDIT)
      tc_progress(receiver, NULL);
    tc_progress(receiver, NULL);
  }
}

int main(int argc, char **argv) {
  long frames = 1000000;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--frames") && i + 1 < argc && atol(argv[i + 1]) > 0)
      frames = atol(argv[++i]);
    else if (!strcmp(argv[i], "--payload") && i + 1 < argc && atol(argv[i + 1]) >= 0 &&
             atol(argv[i + 1]) <= (long)sizeof payload && atol(argv[i + 1]) % 4 == 0)
      payload_size = (size_t)atol(argv[++i]);
    else
      return fprintf(stderr, "usage: frame-cost [--frames N] [--payload B (a multiple of 4, "
                             "at most %zu)]\n", sizeof payload), 2;
  }
  tc_package_t *rpkg, *spkg;
  tc_context_t *sender;
  tc_context_params_t params = {TC_CONTEXT_PARAMS_VERSION, 64, 4096, 16};
  if (stdlib_package_load(TC_FRAME_COST_PREFIX, TC_PACKAGE_RECEIVER, &rpkg) != TC_OK ||
      stdlib_package_load(TC_FRAME_COST_PREFIX, TC_PACKAGE_SENDER, &spkg) != TC_OK ||
      tc_context_create(&params, &receiver) != TC_OK ||
      tc_context_create(&params, &sender) != TC_OK ||
      tc_context_add_package(receiver, rpkg) != TC_OK ||
      tc_context_add_package(sender, spkg) != TC_OK)
    return fprintf(stderr, "frame-cost: cannot set up\n"), 1;
  srand((unsigned)time(NULL));
  uint16_t port = (uint16_t)(20000 + rand() % 20000);
  if (tc_listen(receiver, "127.0.0.1", port) != TC_OK)
    return fprintf(stderr, "frame-cost: cannot listen on %u\n", port), 1;
  pthread_t t;
  pthread_create(&t, NULL, answer_handshake, NULL);
  tc_peer_t *peer;
  /* Generous: under valgrind connecting takes seconds. */
  tc_status_t st = tc_connect(sender, "127.0.0.1", port, 120000, &peer);
  connected = 1;
  pthread_join(t, NULL);
  if (st != TC_OK)
    return fprintf(stderr, "frame-cost: cannot connect\n"), 1;

  /* The empty polls after a first frame: before it, the slot's zeroed
   * trailer shows sequence 0, and every poll takes a closer look. */
  send_and_run(peer, spkg, TC_SEND_LOCAL, frames / 10); /* warm up */
  double t0 = now_ns();
  empty_progress(receiver, frames);
  printf("empty tc_progress (one peer):         %7.1f ns\n", (now_ns() - t0) / frames);
  t0 = now_ns();
  send_and_run(peer, spkg, TC_SEND_LOCAL, frames);
  printf("tc_send + tc_progress, Local:         %7.1f ns per frame\n", (now_ns() - t0) / frames);
  send_and_run(peer, spkg, TC_SEND_INJECTED, frames / 10);
  t0 = now_ns();
  send_and_run(peer, spkg, TC_SEND_INJECTED, frames);
  printf("tc_send + tc_progress, Injected:      %7.1f ns per frame (cached)\n",
         (now_ns() - t0) / frames);
  tc_flush(peer, 10000);
  tc_peer_close(peer);
  tc_context_destroy(sender);
  tc_context_destroy(receiver);
  tc_package_unload(spkg);
  tc_package_unload(rpkg);
  return 0;
}
