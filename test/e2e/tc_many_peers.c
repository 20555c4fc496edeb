/* tc-many-peers: one receiver, one active caller, and idle connected peers
 * added between measurements (docs/scaling.md).
 *   tc-many-peers <calls prefix> <idle counts, e.g. 0,16,64,256,1024>
 *                 [calls per step] [idle processes] [max ring KiB]
 * The receiver runs its executor thread (busy polling, TC_WAIT_POLL); the
 * idle peers come from [idle processes] processes that each connect many
 * times and then sleep in tc_wait; the caller makes echo calls (Local, 8
 * bytes) and reports their latency. At each step the receiver reports
 * its resident memory and how much of it its rings hold.
 * MANY_PEERS_ACTIVE=N: the caller's calls take N connections in turn.
 * Prints per step:
 *   many-peers idle=N p50_ns=.. p99_ns=.. rate=..  rss_kib=.. shmem_kib=..
 *     ring_resident_kib=.. ring_kib=.. rings_polled=.. connect_us=..
 * (connect_us: the mean time of the step's tc_connect calls), then the
 * median of one call from every idle peer into its cold ring, and the
 * rings' resident memory once every peer is quiet. "many-peers: PASSED"
 * when every call was answered with its own bytes, every idle connection
 * was made, the idle rings went cold, and (with [max ring KiB]) the rings'
 * resident memory once all were quiet stayed within the bound. */
#include <fcntl.h>
#include <inttypes.h>
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

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static long status_kib(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':')
      v = strtol(line + n + 1, NULL, 10);
  if (f)
    fclose(f);
  return v;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int read_full(int fd, void *p, size_t n) {
  char *c = p;
  while (n) {
    ssize_t r = read(fd, c, n);
    if (r <= 0)
      return -1;
    c += r;
    n -= (size_t)r;
  }
  return 0;
}

static tc_context_t *context(tc_package_t *pkg, uint32_t max_peers, uint32_t wait_mode) {
  tc_context_params_t p = {0};
  p.version = TC_CONTEXT_PARAMS_VERSION;
  p.max_peers = max_peers;
  p.wait_mode = wait_mode;
  /* Every idle process connects from 127.0.0.1 at once. */
  p.max_startups = 64;
  p.max_startups_per_address = 64;
  tc_context_t *ctx = NULL;
  if (tc_context_create(&p, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return NULL;
  return ctx;
}

/* An idle process: on each count read from `in`, makes that many more
 * connections and writes back how many it made; sleeps in between; ends
 * when `in` closes. */
/* A child's context, once the receiver's port arrives on `in`. */
static tc_context_t *child_context(const char *prefix, int in, uint32_t wait_mode,
                                   tc_package_t **pkg, uint16_t *port) {
  if (read_full(in, port, sizeof *port) ||
      calls_package_load(prefix, TC_PACKAGE_SENDER, pkg) != TC_OK)
    return NULL;
  return context(*pkg, 0, wait_mode);
}

/* The receiver's counters once `done` holds of them (or 20 s passed: the
 * caller checks what it got). */
static tc_stats_t stats_once(tc_context_t *ctx, int (*done)(const tc_stats_t *, uint64_t),
                             uint64_t arg) {
  tc_stats_t st;
  uint64_t deadline = now_ns() + 20000000000ull;
  do {
    usleep(10000);
    tc_context_stats(ctx, &st);
  } while (!done(&st, arg) && now_ns() < deadline);
  return st;
}
static int polled_at_most(const tc_stats_t *st, uint64_t n) { return st->rings_polled <= n; }
static int rings_below(const tc_stats_t *st, uint64_t bytes) { return st->ring_bytes < bytes; }

#define CALL_EVERY_PEER 0xffffffffu
#define CLOSE_EVERY_PEER 0xfffffffeu

/* MANY_PEERS_IDLE_PUTS=1: the idle peers put their frames rather than
 * store them (TC_DIRECT_STORES=0 in their processes alone). They can
 * neither ring the doorbell nor obey a cold ring's limit, so the receiver
 * must keep polling their rings: checked instead of their going cold. */
static int idle_puts(void) { return getenv("MANY_PEERS_IDLE_PUTS") != NULL; }

/* MANY_PEERS_ACTIVE=N (1 to 64, default 1): the caller makes N connections
 * and its calls take them in turn, so that N of the receiver's rings are
 * in use. */
static unsigned active_count(void) {
  const char *env = getenv("MANY_PEERS_ACTIVE");
  int n = env ? atoi(env) : 1;
  return n < 1 ? 1 : n > 64 ? 64 : (unsigned)n;
}

static int idle_process(const char *prefix, int in, int out) {
  if (idle_puts())
    setenv("TC_DIRECT_STORES", "0", 1);
  uint16_t port;
  tc_package_t *pkg;
  tc_context_t *ctx = child_context(prefix, in, 0, &pkg, &port);
  if (!ctx)
    return 2;
  tc_peer_t **peers = NULL;
  uint32_t npeers = 0;
  fcntl(in, F_SETFL, O_NONBLOCK);
  for (;;) {
    uint32_t more;
    ssize_t r = read(in, &more, sizeof more);
    if (r == 0)
      break;
    if (r == sizeof more && more == CALL_EVERY_PEER) {
      /* One call on every connection, each into a ring gone cold: how
       * many were answered with their own bytes. */
      uint64_t answer[2] = {0, 0}; /* right, median ns */
      uint64_t *lat = calloc(npeers + 1, sizeof *lat);
      for (uint32_t i = 0; i < npeers; i++) {
        uint64_t sent = 0xc01d0000u + i, back = 0;
        size_t size = 0;
        uint64_t t0 = now_ns();
        tc_status_t st = calls_call_echo(peers[i], pkg, TC_SEND_LOCAL, &sent, sizeof sent, &back,
                                         sizeof back, &size, 10000);
        lat[i] = now_ns() - t0;
        answer[0] += st == TC_OK && size == sizeof back && back == sent;
      }
      qsort(lat, npeers, sizeof *lat, cmp_u64);
      answer[1] = npeers ? lat[npeers / 2] : 0;
      free(lat);
      if (write(out, answer, sizeof answer) != sizeof answer)
        return 2;
      continue;
    }
    if (r == sizeof more && more == CLOSE_EVERY_PEER) {
      for (uint32_t i = 0; i < npeers; i++)
        tc_peer_close(peers[i]);
      npeers = 0;
      uint64_t done[2] = {0, 0};
      if (write(out, done, sizeof done) != sizeof done)
        return 2;
      continue;
    }
    if (r == sizeof more) {
      uint64_t made[2] = {0, 0}; /* connections, ns they took */
      uint64_t begin = now_ns();
      peers = realloc(peers, (npeers + more + 1) * sizeof *peers);
      for (uint32_t i = 0; i < more; i++) {
        tc_status_t st = tc_connect(ctx, "127.0.0.1", port, 30000, &peers[npeers]);
        if (st != TC_OK) {
          fprintf(stderr, "idle connection %u: %s\n", i, tc_status_string(st));
          break;
        }
        npeers++;
        made[0]++;
      }
      made[1] = now_ns() - begin;
      if (write(out, &made, sizeof made) != sizeof made)
        return 2;
      continue;
    }
    tc_wait(ctx, 50);
    tc_progress(ctx, NULL);
  }
  for (uint32_t i = 0; i < npeers; i++)
    tc_peer_close(peers[i]);
  free(peers);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  return 0;
}

/* The caller: on each byte read from `in`, makes `calls` echo calls and
 * writes back p50, p99 (ns) and the rate (calls/s). */
static int active_process(const char *prefix, unsigned calls, int in, int out) {
  uint16_t port;
  tc_package_t *pkg;
  tc_context_t *ctx = child_context(prefix, in, TC_WAIT_POLL, &pkg, &port);
  unsigned active = active_count();
  tc_peer_t *peers[64];
  for (unsigned a = 0; a < active; a++)
    if (!ctx || tc_connect(ctx, "127.0.0.1", port, 30000, &peers[a]) != TC_OK)
      return 2;
  uint64_t *lat = calloc(calls, sizeof *lat);
  char go;
  /* Between steps it progresses as a quiet application does: the
   * receiver's answers are credited, so its rings can go cold. */
  fcntl(in, F_SETFL, O_NONBLOCK);
  for (;;) {
    ssize_t r = read(in, &go, 1);
    if (r == 0)
      break;
    if (r != 1) {
      tc_wait(ctx, 50);
      tc_progress(ctx, NULL);
      continue;
    }
    uint64_t result[3] = {0, 0, 0}, bad = 0;
    uint64_t begin = now_ns();
    for (unsigned i = 0; i < calls; i++) {
      uint64_t sent = ((uint64_t)i << 8) ^ 0x5a5a, back = 0;
      size_t size = 0;
      uint64_t t0 = now_ns();
      tc_status_t st = calls_call_echo(peers[i % active], pkg, TC_SEND_LOCAL, &sent, sizeof sent,
                                       &back, sizeof back, &size, 10000);
      lat[i] = now_ns() - t0;
      bad += st != TC_OK || size != sizeof back || back != sent;
    }
    uint64_t total = now_ns() - begin;
    qsort(lat, calls, sizeof *lat, cmp_u64);
    result[0] = bad ? 0 : lat[calls / 2];
    result[1] = lat[calls * 99 / 100];
    result[2] = total ? (uint64_t)calls * 1000000000u / total : 0;
    if (write(out, result, sizeof result) != sizeof result)
      return 2;
  }
  free(lat);
  for (unsigned a = 0; a < active; a++)
    tc_peer_close(peers[a]);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: tc-many-peers <calls prefix> <idle counts> [calls] [idle procs] "
                    "[max ring KiB]\n");
    return 2;
  }
  const char *prefix = argv[1];
  unsigned counts[16], steps = 0;
  for (char *s = argv[2]; *s && steps < 16;) {
    counts[steps++] = (unsigned)strtoul(s, &s, 10);
    if (*s == ',')
      s++;
  }
  unsigned calls = argc > 3 ? (unsigned)atoi(argv[3]) : 20000;
  unsigned procs = argc > 4 ? (unsigned)atoi(argv[4]) : 4;
  long max_ring_kib = argc > 5 ? atol(argv[5]) : 0;
  if (!steps || !calls || !procs || procs > 64)
    return 2;
  signal(SIGPIPE, SIG_IGN);

  int to_idle[64], from_idle[64], to_active, from_active;
  pid_t kids[65];
  unsigned nkids = 0;
  for (unsigned p = 0; p <= procs; p++) {
    int down[2], up[2];
    if (pipe(down) || pipe(up))
      return 2;
    pid_t pid = fork();
    if (pid == 0) {
      close(down[1]);
      close(up[0]);
      _exit(p < procs ? idle_process(prefix, down[0], up[1])
                      : active_process(prefix, calls, down[0], up[1]));
    }
    close(down[0]);
    close(up[1]);
    kids[nkids++] = pid;
    if (p < procs) {
      to_idle[p] = down[1];
      from_idle[p] = up[0];
    } else {
      to_active = down[1];
      from_active = up[0];
    }
  }

  /* The receiver, made after the children (UCX is not forked). */
  tc_package_t *pkg;
  if (calls_package_load(prefix, TC_PACKAGE_RECEIVER, &pkg) != TC_OK)
    return 2;
  unsigned most = 0;
  for (unsigned i = 0; i < steps; i++)
    most = counts[i] > most ? counts[i] : most;
  tc_context_t *ctx = context(pkg, most + active_count() + 8, TC_WAIT_POLL);
  uint16_t port = 0;
  if (!ctx || tc_listen(ctx, "127.0.0.1", 0) != TC_OK || tc_listen_port(ctx, &port) != TC_OK ||
      tc_executor_start(ctx) != TC_OK)
    return 2;
  for (unsigned p = 0; p < procs; p++)
    if (write(to_idle[p], &port, sizeof port) != sizeof port)
      return 2;
  if (write(to_active, &port, sizeof port) != sizeof port)
    return 2;

  int failures = 0;
  unsigned idle = 0;
  long ring_resident_kib = 0;
  uint64_t ring_bytes_last = 0; /* the rings' bytes at the last step */
  for (unsigned s = 0; s < steps && !failures; s++) {
    unsigned want = counts[s] > idle ? counts[s] - idle : 0;
    for (unsigned p = 0; p < procs; p++) {
      uint32_t more = want / procs + (p < want % procs);
      if (write(to_idle[p], &more, sizeof more) != sizeof more)
        return 2;
    }
    uint64_t connect_ns = 0, connects = 0;
    for (unsigned p = 0; p < procs; p++) {
      uint64_t made[2];
      if (read_full(from_idle[p], made, sizeof made))
        return 2;
      idle += (unsigned)made[0];
      connects += made[0];
      connect_ns += made[1];
    }
    if (idle != counts[s]) {
      fprintf(stderr, "FAILED: %u idle connections made, not %u\n", idle, counts[s]);
      failures++;
      break;
    }
    /* The idle peers' rings go cold once quiet a while: waited for (not
     * timed), then the active peer is measured beside them. */
    if (idle_puts()) {
      /* The caller's ring (it stores) goes cold once quiet; theirs not. */
      tc_stats_t st = stats_once(ctx, polled_at_most, idle);
      if (st.rings_polled != idle || st.rings_cooled == 0) {
        fprintf(stderr,
                "FAILED: %" PRIu64 " rings polled beside %u idle peers that put (expected "
                "theirs, the caller's gone cold)\n",
                st.rings_polled, idle);
        failures++;
      }
    }
    tc_stats_t st = stats_once(ctx, polled_at_most, idle_puts() ? idle + 1 : 1);
    if (st.rings_polled > (idle_puts() ? idle + 1 : 1 + idle / 64)) {
      fprintf(stderr, "FAILED: %" PRIu64 " rings still polled every pass beside %u idle peers\n",
              st.rings_polled, idle);
      failures++;
    }
    char go = 1;
    uint64_t result[3];
    if (write(to_active, &go, 1) != 1 || read_full(from_active, result, sizeof result))
      return 2;
    if (!result[0]) {
      fprintf(stderr, "FAILED: calls beside %u idle peers went unanswered or wrong\n", idle);
      failures++;
    }
    tc_context_stats(ctx, &st);
    ring_resident_kib = (long)(st.ring_bytes_resident / 1024);
    ring_bytes_last = st.ring_bytes;
    printf("many-peers idle=%u p50_ns=%" PRIu64 " p99_ns=%" PRIu64 " rate=%" PRIu64
           " rss_kib=%ld shmem_kib=%ld ring_resident_kib=%ld ring_kib=%" PRIu64
           " rings_polled=%" PRIu64 " connect_us=%" PRIu64 "\n",
           idle, result[0], result[1], result[2], status_kib("VmRSS"), status_kib("RssShmem"),
           ring_resident_kib, st.ring_bytes / 1024, st.rings_polled,
           connects ? connect_ns / connects / 1000 : 0);
    fflush(stdout);
  }
  /* Every idle peer calls once into its cold ring: each answered. */
  if (!failures && idle) {
    uint32_t every = CALL_EVERY_PEER, right = 0;
    uint64_t cold_ns = 0;
    for (unsigned p = 0; p < procs; p++)
      if (write(to_idle[p], &every, sizeof every) != sizeof every)
        return 2;
    for (unsigned p = 0; p < procs; p++) {
      uint64_t answer[2];
      if (read_full(from_idle[p], answer, sizeof answer))
        return 2;
      right += (uint32_t)answer[0];
      cold_ns = answer[1] > cold_ns ? answer[1] : cold_ns;
    }
    tc_stats_t st;
    tc_context_stats(ctx, &st);
    printf("many-peers cold calls answered=%u of %u p50_ns=%" PRIu64 " rings_cooled=%" PRIu64
           " rings_warmed=%" PRIu64 "\n",
           right, idle, cold_ns, st.rings_cooled, st.rings_warmed);
    if (right != idle) {
      fprintf(stderr, "FAILED: %u of %u calls into cold rings answered\n", right, idle);
      failures++;
    }
  }
  /* Everyone quiet: every ring goes cold and gives its pages back but its
   * next slot's. Then the caller calls again, into a ring given back. */
  if (!failures && !idle_puts()) {
    tc_stats_t st = stats_once(ctx, polled_at_most, 0);
    ring_resident_kib = (long)(st.ring_bytes_resident / 1024);
    printf("many-peers all cold: rings_polled=%" PRIu64 " ring_resident_kib=%ld\n", st.rings_polled,
           ring_resident_kib);
    char go = 1;
    uint64_t result[3];
    if (write(to_active, &go, 1) != 1 || read_full(from_active, result, sizeof result))
      return 2;
    if (!result[0]) {
      fprintf(stderr, "FAILED: calls into a ring given back went unanswered or wrong\n");
      failures++;
    }
  }
  /* Alone again: the idle peers close, and the caller is measured once
   * more, so that "alone" brackets the steps (this machine's latency
   * changes between modes from run to run). */
  if (!failures && idle) {
    uint32_t close_all = CLOSE_EVERY_PEER;
    for (unsigned p = 0; p < procs; p++) {
      uint64_t done[2];
      if (write(to_idle[p], &close_all, sizeof close_all) != sizeof close_all ||
          read_full(from_idle[p], done, sizeof done))
        return 2;
    }
    /* Released once their closes arrive: the caller's rings left. */
    tc_stats_t st = stats_once(ctx, rings_below,
                               (active_count() + 1) * ring_bytes_last / (idle + active_count()));
    char go = 1;
    uint64_t result[3];
    if (write(to_active, &go, 1) != 1 || read_full(from_active, result, sizeof result))
      return 2;
    printf("many-peers idle=0 (again) p50_ns=%" PRIu64 " p99_ns=%" PRIu64 " rate=%" PRIu64
           " ring_kib=%" PRIu64 "\n",
           result[0], result[1], result[2], st.ring_bytes / 1024);
  }
  if (max_ring_kib && ring_resident_kib > max_ring_kib) {
    fprintf(stderr, "FAILED: the rings hold %ld KiB resident, more than %ld KiB\n",
            ring_resident_kib, max_ring_kib);
    failures++;
  }
  close(to_active);
  for (unsigned p = 0; p < procs; p++)
    close(to_idle[p]);
  for (unsigned k = 0; k < nkids; k++) {
    int status = 0;
    waitpid(kids[k], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) {
      fprintf(stderr, "FAILED: child %u ended with status %d\n", k, status);
      failures++;
    }
  }
  tc_executor_stop(ctx);
  tc_context_destroy(ctx);
  tc_package_unload(pkg);
  printf("many-peers: %s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
