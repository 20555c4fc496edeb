/*===- tc_ried_push.c - A sender drives a ried over to a receiver ---------===
 *
 *   tc-ried-push receiver accept|refuse PORT   prints the pushed ried's marker
 *   tc-ried-push pusher LIBRARY PORT           pushes LIBRARY, prints the answer
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <twochains/twochains.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return fprintf(stderr, "usage: tc-ried-push receiver accept|refuse PORT | pusher LIB PORT\n"), 2;
  int receiver = !strcmp(argv[1], "receiver");
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION, 16, 1024, 4, TC_WAIT_AUTO,
                            receiver && !strcmp(argv[2], "accept") ? TC_CONTEXT_ACCEPT_RIEDS : 0};
  tc_context_t *ctx;
  if (tc_context_create(&cp, &ctx) != TC_OK)
    return 1;
  unsigned short port = (unsigned short)atoi(argv[3]);
  if (receiver) {
    if (tc_listen(ctx, "127.0.0.1", port) != TC_OK)
      return 1;
    printf("receiver: listening\n");
    fflush(stdout);
    tc_stats_t s = {0};
    double deadline = now() + 5;
    while (now() < deadline && s.rieds_loaded == 0) {
      tc_progress(ctx, NULL);
      tc_context_stats(ctx, &s);
    }
    /* The answer is on its way: let it leave before the context goes. */
    for (double until = now() + 0.2; now() < until;)
      tc_progress(ctx, NULL);
    int *marker = dlsym(RTLD_DEFAULT, "tc_pushed_marker");
    if (marker)
      printf("receiver: pushed ried loaded, marker %d\n", *marker);
    else
      printf("receiver: no pushed ried\n");
    tc_context_destroy(ctx);
    return 0;
  }
  tc_peer_t *peer = NULL;
  double deadline = now() + 10;
  tc_status_t st;
  while ((st = tc_connect(ctx, "127.0.0.1", port, 2000, &peer)) != TC_OK && now() < deadline)
    ;
  if (st != TC_OK)
    return 1;
  st = tc_ried_push(peer, argv[2], 10000);
  printf("pusher: %s\n", tc_status_string(st));
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  return 0;
}
