/*===- tc_bootstrap.c - Finding each other ---------------------------------===
 *
 *   tc-bootstrap receiver PREFIX PORT FILE N   listens on PORT (0: any),
 *       writes its address blob to FILE (0: none), runs N frames, exits
 *   tc-bootstrap blob PREFIX FILE N            connects from the blob in
 *       FILE and sends N Local frames of server_side_sum
 *   tc-bootstrap port PREFIX PORT N TIMEOUT    tc_connect to PORT (which
 *       may not listen yet) with TIMEOUT ms, then N frames
 *   tc-bootstrap bad PREFIX                    blobs that are not addresses
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <twochains/packages/stdlib.h>
#include <twochains/twochains.h>

static int die(const char *what, tc_status_t st) {
  fprintf(stderr, "tc-bootstrap: %s: %s\n", what, tc_status_string(st));
  return 1;
}

static tc_context_t *context(const char *prefix, uint32_t roles, tc_package_t **pkg) {
  tc_context_params_t p = {TC_CONTEXT_PARAMS_VERSION};
  tc_context_t *ctx;
  if (stdlib_package_load(prefix, roles, pkg) != TC_OK || tc_context_create(&p, &ctx) != TC_OK ||
      tc_context_add_package(ctx, *pkg) != TC_OK)
    return NULL;
  return ctx;
}

static int send_frames(tc_context_t *ctx, tc_package_t *pkg, tc_peer_t *peer, unsigned n) {
  int32_t sum[4] = {1, 2, 3, 4};
  for (unsigned i = 0; i < n; ++i) {
    tc_status_t st;
    while ((st = tc_send(peer, pkg, STDLIB_SERVER_SIDE_SUM, TC_SEND_LOCAL, sum, sizeof sum)) ==
           TC_ERR_NO_CREDIT)
      tc_progress(ctx, NULL);
    if (st != TC_OK)
      return die("send", st);
  }
  tc_status_t st = tc_flush(peer, 20000);
  if (st != TC_OK)
    return die("flush", st);
  printf("sent %u frames\n", n);
  /* TC_BOOTSTRAP_LINGER_MS: stay connected that long, so the receiver
   * closes first and its port is left in TIME_WAIT. */
  if (getenv("TC_BOOTSTRAP_LINGER_MS")) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
      tc_progress(ctx, NULL);
      clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 <
             atoi(getenv("TC_BOOTSTRAP_LINGER_MS")));
  }
  tc_peer_close(peer);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  tc_package_t *pkg;
  const char *mode = argv[1];
  if (!strcmp(mode, "receiver") && argc == 6) {
    tc_context_t *ctx = context(argv[2], TC_PACKAGE_RECEIVER, &pkg);
    if (!ctx)
      return die("setup", TC_ERR_IO);
    tc_status_t st = tc_listen(ctx, "127.0.0.1", (uint16_t)atoi(argv[3]));
    if (st != TC_OK)
      return die("listen", st);
    uint16_t port = 0;
    if ((st = tc_listen_port(ctx, &port)) != TC_OK)
      return die("port", st);
    if (strcmp(argv[4], "0")) {
      size_t size = 0;
      if ((st = tc_context_address(ctx, NULL, &size)) != TC_OK)
        return die("address size", st);
      unsigned char *blob = malloc(size);
      if ((st = tc_context_address(ctx, blob, &size)) != TC_OK)
        return die("address", st);
      char tmp[4096];
      snprintf(tmp, sizeof tmp, "%s.tmp", argv[4]);
      FILE *f = fopen(tmp, "wb");
      if (!f || fwrite(blob, 1, size, f) != size || fclose(f) || rename(tmp, argv[4]))
        return die("writing the blob", TC_ERR_IO);
      free(blob);
    }
    printf("listening on port %u (%s)\n", port, argv[3][0] == '0' ? "any" : "asked");
    fflush(stdout);
    unsigned n = (unsigned)atoi(argv[5]);
    tc_stats_t s;
    do {
      tc_progress(ctx, NULL);
      tc_context_stats(ctx, &s);
    } while (s.frames_executed_local < n);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do { /* the last credits */
      tc_progress(ctx, NULL);
      clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 300);
    printf("ran %llu frames\n", (unsigned long long)s.frames_executed_local);
    tc_context_destroy(ctx);
    return 0;
  }
  tc_context_t *ctx = context(argv[2], TC_PACKAGE_SENDER, &pkg);
  if (!ctx)
    return die("setup", TC_ERR_IO);
  tc_peer_t *peer = NULL;
  tc_status_t st;
  if (!strcmp(mode, "blob") && argc == 5) {
    unsigned char blob[4096];
    FILE *f = fopen(argv[3], "rb");
    size_t size = f ? fread(blob, 1, sizeof blob, f) : 0;
    if (f)
      fclose(f);
    if ((st = tc_connect_address(ctx, blob, size, 10000, &peer)) != TC_OK)
      return die("connect from the blob", st);
    return send_frames(ctx, pkg, peer, (unsigned)atoi(argv[4]));
  }
  if (!strcmp(mode, "port") && argc == 6) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    st = tc_connect(ctx, "127.0.0.1", (uint16_t)atoi(argv[3]), atoi(argv[5]), &peer);
    clock_gettime(CLOCK_MONOTONIC, &t);
    long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
    printf("connect: %s after %s\n", tc_status_string(st), ms < atoi(argv[5]) + 500 ? "less than the timeout" : "MORE than the timeout");
    if (st != TC_OK)
      return 1;
    return send_frames(ctx, pkg, peer, (unsigned)atoi(argv[4]));
  }
  if (!strcmp(mode, "bad")) {
    unsigned char junk[64] = "not an address blob at all";
    unsigned char good_head[14] = {'T', 'C', 'A', 'B', 3, 0, 0x39, 0x30, 2, 0, 0, 0, 0, 0};
    unsigned char v9[12] = {'T', 'C', 'A', 'B', 9, 0, 0x39, 0x30, 1, 0, 0, 0};
    printf("junk: %s\n", tc_status_string(tc_connect_address(ctx, junk, sizeof junk, 100, &peer)));
    printf("version: %s\n", tc_status_string(tc_connect_address(ctx, v9, sizeof v9, 100, &peer)));
    printf("short: %s\n",
           tc_status_string(tc_connect_address(ctx, good_head, sizeof good_head, 100, &peer)));
    printf("tiny: %s\n", tc_status_string(tc_connect_address(ctx, junk, 3, 100, &peer)));
    return 0;
  }
  return 2;
}
