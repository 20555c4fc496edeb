/*===- tc_cjams.c - Ordinary C as jams, against a native build -----------===
 *
 *   tc-cjams receiver PREFIX PORT FRAMES cache|nocache
 *       runs FRAMES frames in that mailbox mode; prints the jams' results
 *       and how many of its mappings are writable and executable at once
 *   tc-cjams sender PREFIX PORT N local|injected
 *       sends N frames of each jam of the cjams package, in that send mode
 *   tc-cjams native N
 *       (tc-cjams-native) runs the same calls on a native build of the same
 *       sources and prints the results the same way
 *
 * Frame i of jam j carries 1 + (7i + 3j) % 200 bytes, byte k being
 * (31i + 17k + j) & 0xff. The jams keep state in writable statics and bss
 * (counter, crc), and in a static table of allocator hooks and a static
 * pointer to a ried variable (hooks); big is an image of more than 64 KiB
 * (its code travels once, ahead of its frames), pair a jam of three files
 * whose statics share names: a receiver must give the results the native
 * build gives, in every mailbox mode and send mode.
 *===----------------------------------------------------------------------===*/
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const Jams[] = {"counter", "crc", "hooks", "big", "pair"};
enum { JamCount = 5 };

static size_t payload(unsigned i, unsigned j, uint8_t *out) {
  size_t size = 1 + (7u * i + 3u * j) % 200;
  for (size_t k = 0; k < size; ++k)
    out[k] = (uint8_t)(31u * i + 17u * k + j);
  return size;
}

static void print_results(const uint64_t *r) {
  printf("results:");
  for (int k = 0; k < 6; ++k)
    printf(" %llu", (unsigned long long)r[k]);
  printf("\n");
}

#ifdef TC_CJAMS_NATIVE
typedef struct tc_jam_ctx tc_jam_ctx_t;
uint64_t cjams_result[8];
void counter_main(tc_jam_ctx_t *, void *, size_t);
void crc_main(tc_jam_ctx_t *, void *, size_t);
void hooks_main(tc_jam_ctx_t *, void *, size_t);
void big_main(tc_jam_ctx_t *, void *, size_t);
void pair_main(tc_jam_ctx_t *, void *, size_t);

int main(int argc, char **argv) {
  void (*const fns[JamCount])(tc_jam_ctx_t *, void *, size_t) = {
      counter_main, crc_main, hooks_main, big_main, pair_main};
  unsigned n = argc == 3 ? (unsigned)atoi(argv[2]) : 0;
  uint8_t buf[256];
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j = 0; j < JamCount; ++j)
      fns[j](NULL, buf, payload(i, j, buf));
  print_results(cjams_result);
  return 0;
}
#else
#include <twochains/twochains.h>
#include "wx_mappings.h"

static int die(const char *what, tc_status_t st) {
  fprintf(stderr, "tc-cjams: %s: %s\n", what, tc_status_string(st));
  return 1;
}

static tc_status_t setup(const char *prefix, uint32_t roles, tc_mailbox_mode_t mode,
                         tc_package_t **pkg, tc_context_t **ctx) {
  tc_package_params_t pp = {TC_PACKAGE_PARAMS_VERSION, roles, prefix, "cjams", NULL};
  tc_status_t st = tc_package_load(&pp, pkg);
  if (st != TC_OK)
    return st;
  tc_context_params_t cp;
  memset(&cp, 0, sizeof cp);
  cp.version = TC_CONTEXT_PARAMS_VERSION;
  cp.mailbox_mode = mode; /* default slots: 64 of 4096 bytes */
  if ((st = tc_context_create(&cp, ctx)) != TC_OK)
    return st;
  return tc_context_add_package(*ctx, *pkg);
}

int main(int argc, char **argv) {
  if (argc != 6 || (strcmp(argv[1], "receiver") && strcmp(argv[1], "sender"))) {
    fprintf(stderr, "usage: tc-cjams receiver PREFIX PORT FRAMES cache|nocache\n"
                    "       tc-cjams sender PREFIX PORT N local|injected\n");
    return 2;
  }
  tc_package_t *pkg;
  tc_context_t *ctx;
  tc_status_t st;
  uint16_t port = (uint16_t)atoi(argv[3]);
  unsigned n = (unsigned)atoi(argv[4]);
  if (!strcmp(argv[1], "receiver")) {
    tc_mailbox_mode_t mode = strcmp(argv[5], "nocache") ? TC_MAILBOX_CODE_CACHE : TC_MAILBOX_NO_CACHE;
    if ((st = setup(argv[2], TC_PACKAGE_RECEIVER, mode, &pkg, &ctx)) != TC_OK)
      return die("receiver", st);
    if ((st = tc_listen(ctx, "127.0.0.1", port)) != TC_OK)
      return die("listen", st);
    printf("listening\n");
    fflush(stdout);
    tc_stats_t s;
    do {
      tc_progress(ctx, NULL);
      tc_context_stats(ctx, &s);
    } while (s.frames_executed_local + s.frames_executed_injected + s.frames_rejected < n);
    /* Its sender is still connected, waiting for the last credits. */
    tc_peer_t *from;
    tc_peer_stats_t ps;
    if (tc_context_peer(ctx, 1, &from) == TC_OK && tc_peer_stats(from, &ps) == TC_OK)
      printf("peer 1: executed %llu, rejected %llu, abandoned %llu\n",
             (unsigned long long)ps.frames_executed, (unsigned long long)ps.frames_rejected,
             (unsigned long long)ps.jams_abandoned);
    /* The sender's flush waits for the last credits: keep them coming. */
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
      tc_progress(ctx, NULL);
      clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 500000000L);
    const uint64_t *r = tc_package_symbol(pkg, "cjams_result");
    if (tc_package_symbol(pkg, "printf") || tc_package_symbol(pkg, "nonexistent_symbol"))
      return die("tc_package_symbol found a name outside the package's rieds",
                 TC_ERR_INVALID_PARAM);
    if (!r)
      return die("no cjams_result", TC_ERR_UNKNOWN_ELEMENT);
    print_results(r);
    printf("local %llu injected %llu rejected %llu installs %llu shipped ahead %llu\n",
           (unsigned long long)s.frames_executed_local,
           (unsigned long long)s.frames_executed_injected,
           (unsigned long long)s.frames_rejected, (unsigned long long)s.cache_installs,
           (unsigned long long)s.code_transfers_received);
    printf("writable+executable mappings: %d\n", writable_executable_mappings());
    tc_context_destroy(ctx);
    return s.frames_rejected ? 1 : 0;
  }
  tc_send_mode_t mode = strcmp(argv[5], "local") ? TC_SEND_INJECTED : TC_SEND_LOCAL;
  if ((st = setup(argv[2], TC_PACKAGE_SENDER, TC_MAILBOX_DEFAULT, &pkg, &ctx)) != TC_OK)
    return die("sender", st);
  tc_peer_t *peer = NULL;
  st = TC_ERR_IO;
  for (int k = 0; k < 100 && st != TC_OK; ++k)
    st = tc_connect(ctx, "127.0.0.1", port, 2000, &peer);
  if (st != TC_OK)
    return die("connect", st);
  uint32_t ids[JamCount];
  for (unsigned j = 0; j < JamCount; ++j)
    if ((st = tc_package_find(pkg, Jams[j], &ids[j])) != TC_OK)
      return die(Jams[j], st);
  uint8_t buf[256];
  for (unsigned i = 0; i < n; ++i)
    for (unsigned j = 0; j < JamCount; ++j) {
      size_t size = payload(i, j, buf);
      while ((st = tc_send(peer, pkg, ids[j], mode, buf, size)) == TC_ERR_NO_CREDIT)
        tc_progress(ctx, NULL);
      if (st != TC_OK)
        return die("send", st);
    }
  if ((st = tc_flush(peer, 30000)) != TC_OK)
    return die("flush", st);
  printf("sent %u frames\n", n * JamCount);
  /* Code in the frame itself, as TC_SEND_INJECTED_FULL asks, cannot fit. */
  st = tc_send(peer, pkg, ids[3], TC_SEND_INJECTED_FULL, buf, 16);
  printf("big, code in the frame: %s\n", tc_status_string(st));
  tc_peer_stats_t ps;
  if (tc_peer_stats(peer, &ps) == TC_OK)
    printf("peer: sent %llu, shipped ahead %llu, faults %llu\n",
           (unsigned long long)ps.frames_sent, (unsigned long long)ps.code_transfers,
           (unsigned long long)ps.faults_reported);
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  return 0;
}
#endif
