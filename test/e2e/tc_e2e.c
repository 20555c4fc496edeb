/*===- tc_e2e.c - A receiver and a sender over real UCX transports ---------===
 *
 *   tc-e2e receiver PREFIX PORT FRAMES   runs FRAMES frames, prints results
 *   tc-e2e sender   PREFIX PORT FRAMES   sends FRAMES frames of the standard
 *                                        package, half local, half injected
 *   tc-e2e chainer  PREFIX PORT FRAMES NEXT
 *                                        sends FRAMES chain frames; each makes
 *                                        the receiver forward server_side_sum
 *                                        of 1..8 to 127.0.0.1:NEXT
 *   tc-e2e requester PREFIX PORT 40      sends 20 frames in each mode: put,
 *                                        get, fetch_add x10, compare_swap,
 *                                        kv_put, kv_get, kv_del, kv_get,
 *                                        scatter, gather, append; checks every
 *                                        reply (the receiver reports the log)
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
#include "wx_mappings.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int die(const char *what, tc_status_t st) {
  fprintf(stderr, "tc-e2e: %s: %s\n", what, tc_status_string(st));
  return 1;
}

static void print_sender_stats(tc_context_t *ctx) {
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  printf("sender: code in %llu frames (%llu bytes), cached %llu, resent %llu\n",
         (unsigned long long)s.frames_sent_with_code, (unsigned long long)s.code_bytes_sent,
         (unsigned long long)s.frames_sent_cached, (unsigned long long)s.frames_resent);
  printf("sender: peers by rma %llu, of which by direct stores %llu\n",
         (unsigned long long)s.peers_rma, (unsigned long long)s.peers_direct);
  printf("sender: frames coalesced %llu\n", (unsigned long long)s.frames_coalesced);
}

#define REPLIES 16

struct get_request { uint64_t offset, reply_offset; uint32_t length, reserved; };
struct fetch_add_request { uint64_t offset; int64_t value; uint64_t reply_offset; };
struct compare_swap_request { uint64_t offset; int64_t expected, desired; uint64_t reply_offset; };
struct kv_get_request { char key[32]; uint64_t reply_offset; };
struct gather_request { uint64_t reply_offset; uint32_t count, reserved; uint64_t offsets[3]; };

static tc_status_t send_retrying(tc_context_t *ctx, tc_peer_t *peer, const tc_package_t *pkg,
                                 uint32_t id, tc_send_mode_t mode, const void *p, size_t n) {
  tc_status_t st;
  while ((st = tc_send(peer, pkg, id, mode, p, n)) == TC_ERR_NO_CREDIT)
    tc_progress(ctx, NULL);
  return st;
}

/* Retries a send while the peer's ring is full, progressing meanwhile
   (replies to us need our progress to free the peer's slots). */
#define RETRY(ctx, expr)                                                        \
  ({                                                                          \
    tc_status_t st_;                                                          \
    while ((st_ = (expr)) == TC_ERR_NO_CREDIT)                                \
      tc_progress((ctx), NULL);                                               \
    st_;                                                                      \
  })

/* Every jam that replies, each checked against what the receiver must have
   answered. Replies run here, as deliver frames, when we progress. */
static int request_and_check(tc_context_t *ctx, tc_peer_t *peer, tc_package_t *pkg,
                             tc_send_mode_t mode, uint64_t base) {
  uint8_t pattern[64];
  for (int i = 0; i < 64; i++)
    pattern[i] = (uint8_t)(i * 3 + 1);
  /* Each round (one per mode) uses its own memory words and inbox area. */
  const uint64_t mem = 4096 + base * 16384, word = mem + 4096, box = base * 4096;
  uint64_t who = box + 3072; /* first frame of the round: who am I, which sequence */
  tc_status_t st = send_retrying(ctx, peer, pkg, STDLIB_WHOAMI, mode, &who, sizeof who);
  struct put_args put = {mem, pattern, sizeof pattern};
  if (st == TC_OK)
    st = RETRY(ctx, stdlib_send_put(peer, pkg, mode, &put));
  struct get_request get = {mem, box, 64, 0};
  if (st == TC_OK)
    st = send_retrying(ctx, peer, pkg, STDLIB_GET, mode, &get, sizeof get);
  for (int i = 1; st == TC_OK && i <= 10; i++) {
    struct fetch_add_request fa = {word, i, box + 256 + 8 * (uint64_t)(i - 1)};
    st = send_retrying(ctx, peer, pkg, STDLIB_FETCH_ADD, mode, &fa, sizeof fa);
  }
  struct compare_swap_request cas = {word, 55, 1000, box + 512};
  if (st == TC_OK)
    st = send_retrying(ctx, peer, pkg, STDLIB_COMPARE_SWAP, mode, &cas, sizeof cas);
  struct kv_put_args kv = {"alpha", "beta-value", 11};
  if (st == TC_OK)
    st = RETRY(ctx, stdlib_send_kv_put(peer, pkg, mode, &kv));
  struct kv_get_request kg = {"alpha", box + 1024};
  if (st == TC_OK)
    st = send_retrying(ctx, peer, pkg, STDLIB_KV_GET, mode, &kg, sizeof kg);
  if (st == TC_OK)
    st = send_retrying(ctx, peer, pkg, STDLIB_KV_DEL, mode, "alpha", 6);
  struct kv_get_request gone = {"alpha", box + 1536};
  if (st == TC_OK)
    st = send_retrying(ctx, peer, pkg, STDLIB_KV_GET, mode, &gone, sizeof gone);
  /* scatter a word, then gather it back with the put's first word. */
  uint64_t scatter_offset = word + 64, scatter_word = 0x5ca77e4ull + base;
  struct scatter_args sc = {&scatter_offset, &scatter_word, 1};
  if (st == TC_OK)
    st = RETRY(ctx, stdlib_send_scatter(peer, pkg, mode, &sc));
  struct gather_request ga = {box + 2048, 3, 0, {mem, word, word + 64}};
  if (st == TC_OK)
    st = send_retrying(ctx, peer, pkg, STDLIB_GATHER, mode, &ga, sizeof ga);
  if (st == TC_OK)
    st = send_retrying(ctx, peer, pkg, STDLIB_APPEND, mode, "log record", 10);
  if (st != TC_OK)
    return die("sending requests", st);

  volatile uint64_t *deliveries = dlsym(RTLD_DEFAULT, "tc_stdlib_inbox_deliveries");
  uint8_t *inbox = dlsym(RTLD_DEFAULT, "tc_stdlib_inbox");
  if (!deliveries || !inbox)
    return die("finding the inbox ried", TC_ERR_MISSING_IMPORT);
  double deadline = now() + 20;
  uint64_t expected = (base + 1) * REPLIES;
  while (*deliveries < expected && now() < deadline)
    tc_progress(ctx, NULL);
  int bad = 0;
  inbox += box;
  if (*deliveries != expected)
    fprintf(stderr, "requester: %llu replies, expected %llu\n", (unsigned long long)*deliveries,
            (unsigned long long)expected), bad = 1;
  if (memcmp(inbox, pattern, 64))
    fprintf(stderr, "requester: get returned other bytes\n"), bad = 1;
  int64_t sum = 0;
  for (int i = 1; i <= 10; i++) {
    int64_t old;
    memcpy(&old, inbox + 256 + 8 * (i - 1), 8);
    if (old != sum)
      fprintf(stderr, "requester: fetch_add %d saw %lld, expected %lld\n", i, (long long)old,
              (long long)sum), bad = 1;
    sum += i;
  }
  int64_t old;
  memcpy(&old, inbox + 512, 8);
  if (old != 55)
    fprintf(stderr, "requester: compare_swap saw %lld\n", (long long)old), bad = 1;
  int32_t len;
  memcpy(&len, inbox + 1024, 4);
  if (len != 11 || memcmp(inbox + 1028, "beta-value", 11))
    fprintf(stderr, "requester: kv_get returned length %d\n", len), bad = 1;
  memcpy(&len, inbox + 1536, 4);
  if (len != -1)
    fprintf(stderr, "requester: kv_get after kv_del returned length %d\n", len), bad = 1;
  uint64_t words[3];
  memcpy(words, inbox + 2048, 24);
  uint64_t first;
  memcpy(&first, pattern, 8);
  if (words[0] != first || words[1] != 1000 || words[2] != scatter_word)
    fprintf(stderr, "requester: gather returned other words\n"), bad = 1;
  struct { uint32_t sender, reserved; uint64_t sequence; } me;
  memcpy(&me, inbox + 3072, sizeof me);
  if (me.sender != 1 || me.sequence != base * 21)
    fprintf(stderr, "requester: whoami says sender %u, sequence %llu\n", me.sender,
            (unsigned long long)me.sequence), bad = 1;
  if (!bad)
    printf("requester: all %d replies correct (%s)\n", REPLIES,
           mode == TC_SEND_LOCAL ? "local" : "injected");
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 5 && !(argc == 6 && !strcmp(argv[1], "chainer")))
    return fprintf(stderr, "usage: tc-e2e receiver|sender|requester PREFIX PORT FRAMES\n"
                           "       tc-e2e chainer PREFIX PORT FRAMES NEXT_PORT\n"), 2;
  int receiver = !strcmp(argv[1], "receiver");
  int requester = !strcmp(argv[1], "requester");
  const char *prefix = argv[2];
  uint16_t port = (uint16_t)atoi(argv[3]);
  unsigned frames = (unsigned)atoi(argv[4]);
  /* Where the receiver listens and the senders connect (default loopback). */
  const char *address = getenv("TC_E2E_ADDRESS") ? getenv("TC_E2E_ADDRESS") : "127.0.0.1";

  tc_package_t *pkg;
  /* A requester receives too: replies are frames that run on its side. */
  tc_status_t st = stdlib_package_load(
      prefix, receiver ? TC_PACKAGE_RECEIVER
                       : requester ? TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER : TC_PACKAGE_SENDER,
      &pkg);
  if (st != TC_OK)
    return die("loading stdlib", st);
  /* The mailbox mode comes from TC_MAILBOX_MODE (the runtime reads it);
     TC_E2E_CODE_CACHE sets the code cache's size in bytes, TC_E2E_SLOT_SIZE
     the slots' (small slots make images travel ahead of their frames). */
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION, 16,
                            getenv("TC_E2E_SLOT_SIZE") ? (uint32_t)atoi(getenv("TC_E2E_SLOT_SIZE")) : 1024,
                            4, TC_WAIT_AUTO,
                            getenv("TC_E2E_ORDERED") ? TC_CONTEXT_ORDERED_PLACEMENT : 0,
                            TC_MAILBOX_DEFAULT,
                            getenv("TC_E2E_CODE_CACHE") ? (uint32_t)atoi(getenv("TC_E2E_CODE_CACHE")) : 0};
  /* Where jams may forward to (the chain test's middle receiver). */
  cp.forward_allow = getenv("TC_E2E_FORWARD_ALLOW");
  tc_context_t *ctx;
  if ((st = tc_context_create(&cp, &ctx)) != TC_OK)
    return die("creating the context", st);
  if ((st = tc_context_add_package(ctx, pkg)) != TC_OK)
    return die("adding the package", st);

  if (receiver) {
    if ((st = tc_listen(ctx, address, port)) != TC_OK)
      return die("listening", st);
    printf("receiver: mailbox %s\n", tc_mailbox_mode_name(ctx));
    printf("receiver: listening on %s:%u\n", address, port);
    fflush(stdout);
    unsigned done = 0;
    double deadline = now() + 60;
    if (getenv("TC_E2E_EXECUTOR")) { /* the runtime's executor thread runs the frames */
      if ((st = tc_executor_start(ctx)) != TC_OK)
        return die("starting the executor", st);
      printf("receiver: executor thread, waiting with %s\n", tc_wait_mode_name(ctx));
      fflush(stdout);
      tc_stats_t s;
      do {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        tc_context_stats(ctx, &s);
        done = (unsigned)(s.frames_executed_local + s.frames_executed_injected + s.frames_rejected);
      } while (done < frames && now() < deadline);
      tc_executor_stop(ctx);
    } else {
      /* TC_E2E_PAUSE_AFTER=N: after N frames, a second without progress
         (what arrives meanwhile, and what fails, is seen all at once). */
      unsigned pause_after = getenv("TC_E2E_PAUSE_AFTER") ? (unsigned)atoi(getenv("TC_E2E_PAUSE_AFTER")) : 0;
      while (done < frames && now() < deadline) {
        unsigned n = 0;
        tc_progress(ctx, &n);
        done += n;
        if (pause_after && done >= pause_after) {
          struct timespec second = {1, 0};
          nanosleep(&second, NULL);
          pause_after = 0;
        }
      }
    }
    /* Replies the jams queued for a full ring go out as the requester's
       credits come back: wait for them (a fixed number of polls is no time
       at all on a loaded machine), then let the last credit puts complete. */
    /* TC_E2E_LINGER=0: none of that, the context destroyed at once: what
       the sender's tc_flush still needs (the last frames' credits) must go
       out with the close. */
    const char *linger = getenv("TC_E2E_LINGER");
    if (!linger || atoi(linger)) {
      tc_peer_t *answered;
      for (unsigned n = 1; tc_context_peer(ctx, n, &answered) == TC_OK; n++)
        tc_flush(answered, 5000);
      for (int i = 0; i < 1000; i++)
        tc_progress(ctx, NULL);
    }
    int64_t *total = dlsym(RTLD_DEFAULT, "tc_stdlib_total");
    int32_t *array = dlsym(RTLD_DEFAULT, "tc_stdlib_array");
    tc_stats_t s;
    tc_context_stats(ctx, &s);
    printf("receiver: ran %u frames: %llu local, %llu injected, %llu rejected\n", done,
           (unsigned long long)s.frames_executed_local,
           (unsigned long long)s.frames_executed_injected,
           (unsigned long long)s.frames_rejected);
    printf("receiver: images shipped ahead %llu\n",
           (unsigned long long)s.code_transfers_received);
    printf("receiver: cache: installs %llu, cached runs %llu, misses %llu, evictions %llu, "
           "hash mismatches %llu\n",
           (unsigned long long)s.cache_installs, (unsigned long long)s.frames_executed_cached,
           (unsigned long long)s.cache_misses, (unsigned long long)s.cache_evictions,
           (unsigned long long)s.cache_hash_mismatches);
    printf("receiver: peers by rma %llu, by messages %llu; refused: auth %llu, offers %llu, "
           "messages %llu\n",
           (unsigned long long)s.peers_rma, (unsigned long long)s.peers_am,
           (unsigned long long)s.auth_failures, (unsigned long long)s.offers_refused,
           (unsigned long long)s.messages_refused);
    printf("receiver: writable+executable mappings: %d\n", writable_executable_mappings());
    printf("receiver: total %lld\n", (long long)*total);
    long long checksum = 0;
    for (int i = 0; i < 2000; i++)
      checksum += array[i];
    printf("receiver: array checksum %lld\n", checksum);
    uint64_t (*records)(void) = (uint64_t (*)(void))dlsym(RTLD_DEFAULT, "tc_stdlib_log_records");
    printf("receiver: log records %llu\n", records ? (unsigned long long)records() : 0ull);
    tc_context_destroy(ctx);
    tc_package_unload(pkg);
    return done == frames ? 0 : 1;
  }

  tc_peer_t *peer = NULL;
  double deadline = now() + 20;
  while ((st = tc_connect(ctx, address, port, 2000, &peer)) != TC_OK && now() < deadline)
    ;
  if (st != TC_OK)
    return die("connecting", st);
  if (argc == 6) { /* chainer */
    struct {
      struct chain_header { char address[40]; uint16_t port, reserved; char element[32];
                            uint32_t length; } h;
      int32_t values[8];
    } c;
    memset(&c, 0, sizeof c);
    strcpy(c.h.address, "127.0.0.1");
    c.h.port = (uint16_t)atoi(argv[5]);
    strcpy(c.h.element, "server_side_sum");
    c.h.length = sizeof c.values;
    for (int i = 0; i < 8; i++)
      c.values[i] = i + 1;
    for (unsigned i = 0; i < frames; i++)
      if ((st = send_retrying(ctx, peer, pkg, STDLIB_CHAIN, i % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL,
                              &c, sizeof c)) != TC_OK)
        return die("sending chain frames", st);
    if ((st = tc_flush(peer, 20000)) != TC_OK)
      return die("flushing", st);
    printf("chainer: %u chain frames sent\n", frames);
    tc_peer_close(peer);
    tc_context_destroy(ctx);
    tc_package_unload(pkg);
    return 0;
  }
  if (requester) {
    /* Every jam of the standard package, Local then Injected. */
    int bad = request_and_check(ctx, peer, pkg, TC_SEND_LOCAL, 0);
    if (!bad)
      bad = request_and_check(ctx, peer, pkg, TC_SEND_INJECTED, 1);
    tc_flush(peer, 20000);
    tc_peer_close(peer);
    tc_context_destroy(ctx);
    tc_package_unload(pkg);
    return bad;
  }
  /* TC_E2E_CORK: frames by message leave in batches (tc_peer_cork). */
  if (getenv("TC_E2E_CORK") && (st = tc_peer_cork(peer, 1)) != TC_OK)
    return die("corking", st);
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
  print_sender_stats(ctx);
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  return 0;
}
