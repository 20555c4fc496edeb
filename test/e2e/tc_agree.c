/*===- tc_agree.c - Packages compared at the handshake ---------------------===
 *
 *   tc-agree receiver PREFIX PORT   listens; runs frames of package 'agree'
 *                                   until one ran or 10 s passed
 *   tc-agree sender PREFIX PORT     connects and sends one Local frame
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <twochains/twochains.h>

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  int receiver = !strcmp(argv[1], "receiver");
  tc_package_params_t pp = {TC_PACKAGE_PARAMS_VERSION,
                            receiver ? TC_PACKAGE_RECEIVER : TC_PACKAGE_SENDER, argv[2], "agree",
                            NULL};
  tc_package_t *pkg;
  tc_context_t *ctx;
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION};
  if (tc_package_load(&pp, &pkg) != TC_OK || tc_context_create(&cp, &ctx) != TC_OK ||
      tc_context_add_package(ctx, pkg) != TC_OK)
    return 1;
  uint16_t port = (uint16_t)atoi(argv[3]);
  tc_status_t st;
  if (receiver) {
    if ((st = tc_listen(ctx, "127.0.0.1", port)) != TC_OK)
      return 1;
    printf("listening\n");
    fflush(stdout);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tc_stats_t s;
    do {
      tc_progress(ctx, NULL);
      tc_context_stats(ctx, &s);
      clock_gettime(CLOCK_MONOTONIC, &t);
    } while (s.frames_executed_local == 0 && t.tv_sec - t0.tv_sec < 10);
    for (int k = 0; k < 100000; ++k)
      tc_progress(ctx, NULL);
    printf("receiver: %llu frames, %llu rejected\n", (unsigned long long)s.frames_executed_local,
           (unsigned long long)s.frames_rejected);
    tc_context_destroy(ctx);
    return 0;
  }
  tc_peer_t *peer;
  st = tc_connect(ctx, "127.0.0.1", port, 5000, &peer);
  printf("sender: connect: %s\n", tc_status_string(st));
  if (st != TC_OK)
    return 0;
  unsigned char b[8] = {0};
  st = tc_send(peer, pkg, 0, TC_SEND_LOCAL, b, sizeof b);
  if (st == TC_OK)
    st = tc_flush(peer, 5000);
  printf("sender: frame: %s\n", tc_status_string(st));
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  return 0;
}
