/*===- tc_e2e.c - A receiver and a sender over real UCX transports ---------===
 *
 *   tc-e2e receiver PREFIX PORT FRAMES   runs FRAMES frames, prints results
 *   tc-e2e sender   PREFIX PORT FRAMES   sends FRAMES frames of the standard
 *                                        package, half local, half injected
 *
 * Each frame is server_side_sum of 1..8 (adds 36 to tc_stdlib_total) or
 * indirect_put of two values (index i % 1000 and 1000 + i % 1000 get i),
 * alternating. The receiver prints what the jams did, from the ried's own
 * variables, and the runtime's statistics.
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <twochains/packages/stdlib.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int die(const char *what, tc_status_t st) {
  fprintf(stderr, "tc-e2e: %s: %s\n", what, tc_status_string(st));
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 5)
    return fprintf(stderr, "usage: tc-e2e receiver|sender PREFIX PORT FRAMES\n"), 2;
  int receiver = !strcmp(argv[1], "receiver");
  const char *prefix = argv[2];
  uint16_t port = (uint16_t)atoi(argv[3]);
  unsigned frames = (unsigned)atoi(argv[4]);

  tc_package_t *pkg;
  tc_status_t st = stdlib_package_load(prefix, receiver ? TC_PACKAGE_RECEIVER : TC_PACKAGE_SENDER,
                                       &pkg);
  if (st != TC_OK)
    return die("loading stdlib", st);
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION, 16, 1024, 4};
  tc_context_t *ctx;
  if ((st = tc_context_create(&cp, &ctx)) != TC_OK)
    return die("creating the context", st);
  if ((st = tc_context_add_package(ctx, pkg)) != TC_OK)
    return die("adding the package", st);

  if (receiver) {
    if ((st = tc_listen(ctx, "127.0.0.1", port)) != TC_OK)
      return die("listening", st);
    printf("receiver: listening on 127.0.0.1:%u\n", port);
    fflush(stdout);
    unsigned done = 0;
    double deadline = now() + 60;
    while (done < frames && now() < deadline) {
      unsigned n = 0;
      tc_progress(ctx, &n);
      done += n;
    }
    for (int i = 0; i < 1000; i++) /* let the last credit put complete */
      tc_progress(ctx, NULL);
    int64_t *total = dlsym(RTLD_DEFAULT, "tc_stdlib_total");
    int32_t *array = dlsym(RTLD_DEFAULT, "tc_stdlib_array");
    tc_stats_t s;
    tc_context_stats(ctx, &s);
    printf("receiver: ran %u frames: %llu local, %llu injected, %llu rejected\n", done,
           (unsigned long long)s.frames_executed_local,
           (unsigned long long)s.frames_executed_injected,
           (unsigned long long)s.frames_rejected);
    printf("receiver: total %lld\n", (long long)*total);
    long long checksum = 0;
    for (int i = 0; i < 2000; i++)
      checksum += array[i];
    printf("receiver: array checksum %lld\n", checksum);
    tc_context_destroy(ctx);
    tc_package_unload(pkg);
    return done == frames ? 0 : 1;
  }

  tc_peer_t *peer = NULL;
  double deadline = now() + 20;
  while ((st = tc_connect(ctx, "127.0.0.1", port, 2000, &peer)) != TC_OK && now() < deadline)
    ;
  if (st != TC_OK)
    return die("connecting", st);
  double start = now();
  for (unsigned i = 0; i < frames; i++) {
    tc_send_mode_t mode = (i / 2) % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL;
    int32_t sum_payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* indirect_put goes through its typed helper: the jam's own
       payload_size/payload_init build the payload on this side. */
    int32_t values[2] = {(int32_t)i, (int32_t)i};
    uint32_t indices[2] = {i % 1000, 1000 + i % 1000};
    struct indirect_put_args args = {values, indices, 2};
    for (;;) {
      st = i % 2 ? stdlib_send_indirect_put(peer, pkg, mode, &args)
                 : stdlib_send_server_side_sum(peer, pkg, mode, sum_payload, sizeof sum_payload);
      if (st != TC_ERR_NO_CREDIT)
        break;
      tc_progress(ctx, NULL);
    }
    if (st != TC_OK)
      return die("sending", st);
  }
  if ((st = tc_flush(peer, 20000)) != TC_OK)
    return die("flushing", st);
  printf("sender: %u frames in %.1f ms\n", frames, (now() - start) * 1e3);
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  return 0;
}
