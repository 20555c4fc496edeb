/* dht-example: a hash table in a receiver's memory, used through calls.
 *
 *   dht-example [--threads N] [--keys K] [--hops H] [--walks W] [--mode local|injected|both]
 *       forks a server on this host (port 0 on loopback) and runs the client
 *   dht-example serve [--port P]       a server alone (prints its port)
 *   dht-example client HOST PORT [...]  the client, against a server elsewhere
 *
 * The client inserts K keys from N threads (each thread its own
 * connection, calls kept 16 outstanding with tc_call_start/tc_call_wait),
 * looks every key up with blocking calls (dht_call_lookup), then walks H
 * hops through the table, W times: once with one call whose jam walks on
 * the server, once with one lookup call per hop. The keys form one cycle
 * (value = next key), so every walk can go on for as long as asked; every
 * answer is checked. Midway, between the two send modes, the client
 * deploys a jam the server never loaded (package census, built with it
 * but not loaded by the server) into the running server, and calls it:
 * the server takes code from peers that hold the job's key (code_trust
 * job, docs/deploying.md). Set TC_KEY_FILE (or TC_KEY) to use a key. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <twochains/twochains.h>
#include <twochains/packages/census.h>
#include <twochains/packages/dht.h>

#include "census_api.h"
#include "dht.h"

static struct {
  unsigned threads, keys, hops, walks;
  const char *mode;
  const char *host;
  uint16_t port;
} opt = {4, 1u << 14, 64, 200, "both", "127.0.0.1", 0};

static tc_package_t *pkg;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The keys 1..K form one cycle: an LCG of full period over 0..K-1 (K a
 * power of two). */
static uint64_t next_key(uint64_t key) {
  uint64_t k = key - 1;
  return ((k * 1103515245u + 12345u) & (opt.keys - 1)) + 1;
}

static int die(const char *what, tc_status_t st) {
  fprintf(stderr, "dht-example: %s: %s\n", what, tc_status_string(st));
  return 1;
}

static tc_context_t *make_context(uint32_t flags) {
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.flags = flags;
  /* The server takes packages its peers deploy (the census jam, midway). */
  p.code_trust = TC_CODE_TRUST_JOB;
  tc_context_t *ctx = NULL;
  tc_status_t st = tc_context_create(&p, &ctx);
  if (st == TC_OK && (st = tc_context_add_package(ctx, pkg)) != TC_OK) {
    tc_context_destroy(ctx);
    ctx = NULL;
  }
  if (st != TC_OK)
    die("cannot create a context", st);
  return ctx;
}

/* ---- server ------------------------------------------------------------- */

static volatile sig_atomic_t stopping;
static void on_stop(int sig) { (void)sig; stopping = 1; }

static int serve(int port_pipe) {
  tc_status_t st = dht_package_load(DHT_PACKAGE_PREFIX, TC_PACKAGE_RECEIVER, &pkg);
  if (st != TC_OK)
    return die("cannot load the dht package", st);
  tc_context_t *ctx = make_context(0);
  uint16_t port = 0;
  if (!ctx)
    return 1;
  if ((st = tc_listen(ctx, opt.host, opt.port)) != TC_OK ||
      (st = tc_listen_port(ctx, &port)) != TC_OK)
    return die("cannot listen", st);
  signal(SIGTERM, on_stop);
  signal(SIGINT, on_stop);
  if (port_pipe >= 0) {
    if (write(port_pipe, &port, sizeof port) != (ssize_t)sizeof port)
      return 1;
    close(port_pipe);
  } else {
    printf("dht-example: serving on %s:%u\n", opt.host, port);
    fflush(stdout);
  }
  while (!stopping)
    tc_progress(ctx, NULL);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  return 0;
}

/* ---- client ------------------------------------------------------------- */

struct worker {
  tc_context_t *ctx;
  unsigned index;
  tc_send_mode_t mode;
  tc_peer_t *peer;
  unsigned bad;
  double lookup_s;
};

enum { Window = 16 };

static void *insert_keys(void *arg) {
  struct worker *w = arg;
  tc_call_t *calls[Window] = {0};
  int32_t answers[Window];
  unsigned slot = 0;
  for (uint64_t key = 1 + w->index; key <= opt.keys + Window * opt.threads; key += opt.threads) {
    /* The window's oldest call is waited for before its slot is reused. */
    if (calls[slot]) {
      size_t n = 0;
      tc_status_t st = tc_call_wait(calls[slot], 10000, &n);
      w->bad += st != TC_OK || n != sizeof(int32_t) || answers[slot] < 0;
      tc_call_release(calls[slot]);
      calls[slot] = NULL;
    }
    if (key <= opt.keys) {
      struct dht_insert_args a = {key, next_key(key)};
      tc_status_t st;
      while ((st = tc_call_start(w->peer, pkg, DHT_INSERT, w->mode, &a, sizeof a,
                                 &answers[slot], sizeof answers[slot], &calls[slot])) ==
             TC_ERR_NO_CREDIT)
        tc_progress(w->ctx, NULL);
      w->bad += st != TC_OK;
    }
    slot = (slot + 1) % Window;
  }
  return NULL;
}

static void *lookup_keys(void *arg) {
  struct worker *w = arg;
  double t0 = now_s();
  for (uint64_t key = 1 + w->index; key <= opt.keys; key += opt.threads) {
    struct dht_found f;
    size_t n = 0;
    tc_status_t st = dht_call_lookup(w->peer, pkg, w->mode, &key, sizeof key, &f, sizeof f, &n,
                                     10000);
    w->bad += st != TC_OK || n != sizeof f || !f.found || f.value != next_key(key);
  }
  w->lookup_s = now_s() - t0;
  return NULL;
}

static int run_mode(tc_send_mode_t mode, const char *name) {
  /* One context for all threads (TC_CONTEXT_THREADS), a connection each. */
  tc_context_t *ctx = make_context(TC_CONTEXT_THREADS);
  if (!ctx)
    return 1;
  struct worker *w = calloc(opt.threads, sizeof *w);
  pthread_t *t = calloc(opt.threads, sizeof *t);
  for (unsigned i = 0; i < opt.threads; i++) {
    w[i] = (struct worker){ctx, i, mode, NULL, 0, 0};
    tc_status_t st = tc_connect(ctx, opt.host, opt.port, 10000, &w[i].peer);
    if (st != TC_OK)
      return die("cannot connect", st);
  }
  printf("%s frames, %u threads, %u keys\n", name, opt.threads, opt.keys);

  double t0 = now_s();
  for (unsigned i = 0; i < opt.threads; i++)
    pthread_create(&t[i], NULL, insert_keys, &w[i]);
  for (unsigned i = 0; i < opt.threads; i++)
    pthread_join(t[i], NULL);
  double insert_s = now_s() - t0;
  printf("  insert  %6u calls, %u outstanding per thread   %8.1f ms  %6.2f M calls/s\n",
         opt.keys, Window, insert_s * 1e3, opt.keys / insert_s / 1e6);

  t0 = now_s();
  for (unsigned i = 0; i < opt.threads; i++)
    pthread_create(&t[i], NULL, lookup_keys, &w[i]);
  for (unsigned i = 0; i < opt.threads; i++)
    pthread_join(t[i], NULL);
  double lookup_s = now_s() - t0;
  printf("  lookup  %6u blocking calls                   %8.1f ms  %6.2f M calls/s\n",
         opt.keys, lookup_s * 1e3, opt.keys / lookup_s / 1e6);

  /* The walk, from one thread: on the receiver, then one call per hop. */
  unsigned bad = 0;
  uint64_t start = 1;
  double remote_s = 0, per_hop_s = 0;
  for (unsigned i = 0; i < opt.walks; i++, start = next_key(start * 7 % opt.keys + 1)) {
    struct dht_walk req = {start, opt.hops, 0};
    struct dht_walked got;
    size_t n = 0;
    double a = now_s();
    tc_status_t st = dht_call_walk(w[0].peer, pkg, mode, &req, sizeof req, &got, sizeof got, &n,
                                   10000);
    remote_s += now_s() - a;
    uint64_t key = start;
    a = now_s();
    for (unsigned h = 0; h < opt.hops; h++) {
      struct dht_found f;
      if (dht_call_lookup(w[0].peer, pkg, mode, &key, sizeof key, &f, sizeof f, &n, 10000) !=
              TC_OK ||
          !f.found) {
        bad++;
        break;
      }
      key = f.value;
    }
    per_hop_s += now_s() - a;
    uint64_t want = start;
    for (unsigned h = 0; h < opt.hops; h++)
      want = next_key(want);
    bad += st != TC_OK || got.hops != opt.hops || got.key != want || key != want;
  }
  printf("  walk    %u hops, %u walks: on the receiver %8.1f us, one call per hop %8.1f us "
         "(%.1fx)\n",
         opt.hops, opt.walks, remote_s / opt.walks * 1e6, per_hop_s / opt.walks * 1e6,
         per_hop_s / remote_s);

  for (unsigned i = 0; i < opt.threads; i++) {
    bad += w[i].bad;
    tc_peer_close(w[i].peer);
  }
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  printf("  calls answered %llu, failed %llu; wrong answers %u\n",
         (unsigned long long)s.calls_answered, (unsigned long long)s.calls_failed, bad);
  tc_context_destroy(ctx);
  free(w);
  free(t);
  return bad != 0;
}

/* Midway: a jam the server never had, deployed into it while it runs and
 * called; its answer checked against what the client inserted. */
static int deploy_census(void) {
  tc_package_t *census;
  tc_status_t st = census_package_load(CENSUS_PACKAGE_PREFIX, TC_PACKAGE_SENDER, &census);
  if (st != TC_OK)
    return die("cannot load the census package", st);
  tc_context_t *ctx = make_context(0);
  tc_peer_t *peer = NULL;
  if (!ctx || (st = tc_context_add_package(ctx, census)) != TC_OK ||
      (st = tc_connect(ctx, opt.host, opt.port, 5000, &peer)) != TC_OK)
    return die("cannot connect", st);
  struct census_span span = {1, opt.keys};
  struct census_counted want = {0, 0}, got[2];
  for (uint64_t k = 1; k <= opt.keys; k++) {
    want.present++;
    want.sum += next_key(k);
  }
  double t[2];
  int bad = 0;
  for (int m = 0; m < 2; m++) {
    size_t n = 0;
    double a = now_s();
    /* The first call waits for the package to be deployed and linked. */
    st = tc_call(peer, census, CENSUS_CENSUS, m ? TC_SEND_INJECTED : TC_SEND_LOCAL, &span,
                 sizeof span, &got[m], sizeof got[m], &n, 10000);
    t[m] = now_s() - a;
    bad |= st != TC_OK || n != sizeof got[m] || got[m].present != want.present ||
           got[m].sum != want.sum;
    if (st != TC_OK)
      die("census", st);
  }
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  printf("Deployed into the running server: jam census (package census), %llu bytes\n",
         (unsigned long long)s.deploy_bytes_sent);
  printf("  census  %llu of %u keys present, values summing to %llu: first call %.1f ms "
         "(deployed, linked), injected %.1f ms\n",
         (unsigned long long)got[0].present, opt.keys, (unsigned long long)got[0].sum,
         t[0] * 1e3, t[1] * 1e3);
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  tc_package_unload(census);
  return bad;
}

static int client(void) {
  tc_status_t st = dht_package_load(DHT_PACKAGE_PREFIX, TC_PACKAGE_SENDER, &pkg);
  if (st != TC_OK)
    return die("cannot load the dht package", st);
  int failed = 0;
  if (strcmp(opt.mode, "injected"))
    failed |= run_mode(TC_SEND_LOCAL, "Local");
  failed |= deploy_census();
  if (strcmp(opt.mode, "local"))
    failed |= run_mode(TC_SEND_INJECTED, "Injected");
  tc_package_unload(pkg);
  printf("dht-example: %s\n", failed ? "FAILED" : "every answer checked: OK");
  return failed;
}

static int usage(void) {
  fprintf(stderr,
          "usage: dht-example [--threads N] [--keys K] [--hops H] [--walks W]"
          " [--mode local|injected|both]\n"
          "       dht-example serve [--port P]\n"
          "       dht-example client HOST PORT [options]\n"
          "K is rounded up to a power of two.\n");
  return 2;
}

int main(int argc, char **argv) {
  int i = 1;
  const char *role = "demo";
  if (i < argc && (!strcmp(argv[i], "serve") || !strcmp(argv[i], "client")))
    role = argv[i++];
  if (!strcmp(role, "client")) {
    if (argc - i < 2)
      return usage();
    opt.host = argv[i++];
    opt.port = (uint16_t)atoi(argv[i++]);
  }
  for (; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
      return usage(), 0;
    if (!v)
      return usage();
    if (!strcmp(argv[i], "--threads"))
      opt.threads = (unsigned)atoi(v);
    else if (!strcmp(argv[i], "--keys"))
      opt.keys = (unsigned)atoi(v);
    else if (!strcmp(argv[i], "--hops"))
      opt.hops = (unsigned)atoi(v);
    else if (!strcmp(argv[i], "--walks"))
      opt.walks = (unsigned)atoi(v);
    else if (!strcmp(argv[i], "--mode"))
      opt.mode = v;
    else if (!strcmp(argv[i], "--port"))
      opt.port = (uint16_t)atoi(v);
    else
      return usage();
    i++;
  }
  if (!opt.threads || opt.threads > 64 || opt.keys < 2 || opt.keys > (1u << 17) || !opt.walks ||
      (strcmp(opt.mode, "local") && strcmp(opt.mode, "injected") && strcmp(opt.mode, "both"))) {
    fprintf(stderr, "dht-example: threads 1..64, keys 2..131072, walks 1 or more\n");
    return usage();
  }
  unsigned k = 1;
  while (k < opt.keys)
    k <<= 1;
  opt.keys = k;
  if (!strcmp(role, "serve"))
    return serve(-1);
  if (!strcmp(role, "client"))
    return client();

  /* demo: a server forked here, the client against it. */
  int p[2];
  if (pipe(p))
    return 1;
  pid_t server = fork();
  if (server == 0) {
    close(p[0]);
    _exit(serve(p[1]));
  }
  close(p[1]);
  if (read(p[0], &opt.port, sizeof opt.port) != (ssize_t)sizeof opt.port) {
    fprintf(stderr, "dht-example: the server did not start\n");
    return 1;
  }
  printf("dht-example: a server (pid %d) on 127.0.0.1:%u, the client here\n", (int)server,
         opt.port);
  double t0 = now_s();
  int failed = client();
  kill(server, SIGTERM);
  int status = 0;
  waitpid(server, &status, 0);
  printf("dht-example: ran in %.2f s\n", now_s() - t0);
  return failed || !WIFEXITED(status) || WEXITSTATUS(status);
}
