/*===- tc_deploy.c - Code the receiver never had, deployed while it runs ---===
 *
 *   tc-deploy receiver PREFIX PORT POLICY [SIGNERS]
 *       loads package 'dep' (the build in PREFIX), listens on 127.0.0.1
 *       under the code-trust policy (package, job, signed, verified), runs frames
 *       on its executor until STOP appears on stdin (or 120 s), then
 *       prints its deployment counters
 *   tc-deploy sender PREFIX PORT SCENARIO [PREFIX2]
 *       loads 'dep' from PREFIX (a later build), connects and runs the
 *       scenario; prints one line per check, "ok" or "FAILED"
 *
 * Scenarios:
 *   new-jam      the jam 'hist' the receiver's build lacks, called Local
 *                then injected; answers compared with this process's
 *                own computation; 'add' of the new build on the shared ried
 *   refused      the same call: the receiver (policy package) refuses it;
 *                tc_deploy says TC_ERR_REFUSED
 *   missing      tc_deploy of package 'lost' (PREFIX2): TC_ERR_MISSING_IMPORT
 *   fresh        tc_deploy of the whole package 'fresh' (PREFIX2): its ried,
 *                Local library and jam, then calls in both modes
 *   expect=S     tc_deploy of 'dep' must end with status S (a number): the
 *                signed policy's refusals
 *   measure      the costs bench/run-deploy-cost.sh reports: the first call
 *                of the new jam (its deployment, linking and install), then
 *                its first injected call (the image installed into the code
 *                cache), then N more of each mode (their p50)
 *
 *   tc-deploy job PREFIX
 *       a rank of a job launched by mpirun (joined from PMIx), policy job:
 *       every rank deploys package 'fresh' (PREFIX), which no rank runs,
 *       to every rank at once (tc_job_deploy), then calls its jam on every
 *       rank in both modes; prints "job: rank R of P PASSED"
 *===----------------------------------------------------------------------===*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <twochains/twochains.h>

static int failures;

static void check(int ok, const char *what, tc_status_t st) {
  printf("%s: %s (%s)\n", ok ? "ok" : "FAILED", what, tc_status_string(st));
  fflush(stdout);
  failures += !ok;
}

static tc_package_t *load(const char *prefix, const char *name, uint32_t roles) {
  tc_package_params_t pp = {TC_PACKAGE_PARAMS_VERSION, roles, prefix, name, NULL};
  tc_package_t *pkg = NULL;
  if (tc_package_load(&pp, &pkg) != TC_OK) {
    fprintf(stderr, "cannot load package '%s' from %s\n", name, prefix);
    exit(1);
  }
  return pkg;
}

static uint32_t element(tc_package_t *pkg, const char *name) {
  uint32_t id;
  if (tc_package_find(pkg, name, &id) != TC_OK) {
    fprintf(stderr, "no element '%s'\n", name);
    exit(1);
  }
  return id;
}

static int receiver(const char *prefix, uint16_t port, const char *policy, const char *signers) {
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION};
  cp.code_trust = !strcmp(policy, "job")        ? TC_CODE_TRUST_JOB
                  : !strcmp(policy, "signed")   ? TC_CODE_TRUST_SIGNED
                  : !strcmp(policy, "verified") ? TC_CODE_TRUST_VERIFIED
                                                : TC_CODE_TRUST_PACKAGE;
  cp.trusted_signers = signers;
  /* Slots smaller than the images: injected frames ship them ahead. */
  if (getenv("DEPLOY_SLOT_SIZE"))
    cp.slot_size = (uint32_t)atoi(getenv("DEPLOY_SLOT_SIZE"));
  tc_context_t *ctx;
  tc_package_t *pkg = load(prefix, "dep", TC_PACKAGE_RECEIVER | TC_PACKAGE_SENDER);
  if (tc_context_create(&cp, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK ||
      tc_listen(ctx, getenv("DEPLOY_LISTEN") ? getenv("DEPLOY_LISTEN") : "127.0.0.1", port) !=
          TC_OK ||
      tc_executor_start(ctx) != TC_OK)
    return 1;
  printf("listening\n");
  fflush(stdout);
  char line[64];
  time_t end = time(NULL) + 120;
  while (time(NULL) < end && fgets(line, sizeof line, stdin))
    if (!strncmp(line, "STOP", 4))
      break;
  tc_executor_stop(ctx);
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  printf("receiver: %llu deployed, %llu refused\n", (unsigned long long)s.deployments_received,
         (unsigned long long)s.deployments_refused);
  /* Its own build's ried: deployed builds that share it share its state. */
  const long *total = tc_package_symbol(pkg, "dep_total");
  printf("receiver: ried total %ld\n", total ? *total : -1);
  tc_context_destroy(ctx);
  return 0;
}

/* What hist answers, computed here: the native build's result. */
static void native_hist(const unsigned char *deg, size_t n, long out[8]) {
  memset(out, 0, 8 * sizeof *out);
  for (size_t i = 0; i < n; ++i)
    ++out[deg[i] >= 7 ? 7 : deg[i]];
}

static void new_jam(tc_peer_t *peer, tc_package_t *pkg) {
  unsigned char deg[160]; /* a frame of it fits a 256-byte slot; the image does not */
  for (size_t i = 0; i < sizeof deg; ++i)
    deg[i] = (unsigned char)((i * 7919u) % 13u);
  long want[8];
  native_hist(deg, sizeof deg, want);
  uint32_t hist = element(pkg, "hist"), add = element(pkg, "add");
  tc_send_mode_t modes[2] = {TC_SEND_LOCAL, TC_SEND_INJECTED};
  for (int m = 0; m < 2; ++m) {
    long got[9] = {0};
    size_t n = 0;
    tc_status_t st = tc_call(peer, pkg, hist, modes[m], deg, sizeof deg, got, sizeof got, &n,
                             10000);
    check(st == TC_OK && n == sizeof got && !memcmp(got, want, sizeof want),
          m ? "a jam built after the receiver started runs injected, as natively"
            : "a jam built after the receiver started runs Local, as natively",
          st);
  }
  long one = 5, total = 0;
  size_t n = 0;
  tc_status_t st = tc_call(peer, pkg, add, TC_SEND_INJECTED, &one, sizeof one, &total, sizeof total,
                           &n, 10000);
  check(st == TC_OK && total == 5, "the new build's 'add' shares the receiver's ried", st);
  tc_status_t again = tc_deploy(peer, pkg, 5000);
  check(again == TC_OK, "tc_deploy of a build the receiver holds now", again);
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void measure(tc_peer_t *peer, tc_package_t *pkg) {
  unsigned char deg[64];
  for (size_t i = 0; i < sizeof deg; ++i)
    deg[i] = (unsigned char)(i % 11);
  long got[9];
  size_t n;
  uint32_t hist = element(pkg, "hist");
  double t0 = now_us();
  tc_status_t st = tc_call(peer, pkg, hist, TC_SEND_LOCAL, deg, sizeof deg, got, sizeof got, &n,
                           30000);
  double first_local = now_us() - t0;
  t0 = now_us();
  tc_status_t st2 = tc_call(peer, pkg, hist, TC_SEND_INJECTED, deg, sizeof deg, got, sizeof got, &n,
                            30000);
  double first_injected = now_us() - t0;
  check(st == TC_OK && st2 == TC_OK, "first calls", st == TC_OK ? st2 : st);
  enum { N = 2000 };
  static double times[N];
  const char *names[2] = {"local", "injected"};
  tc_send_mode_t modes[2] = {TC_SEND_LOCAL, TC_SEND_INJECTED};
  printf("measure: first call (deployed, linked, installed) %.1f us\n", first_local);
  printf("measure: first injected call (image into the code cache) %.1f us\n", first_injected);
  for (int m = 0; m < 2; ++m) {
    for (int i = 0; i < N; ++i) {
      t0 = now_us();
      st = tc_call(peer, pkg, hist, modes[m], deg, sizeof deg, got, sizeof got, &n, 30000);
      times[i] = now_us() - t0;
      if (st != TC_OK) {
        check(0, "a measured call", st);
        return;
      }
    }
    qsort(times, N, sizeof *times, by_value);
    printf("measure: %s call p50 %.2f us p99 %.2f us\n", names[m], times[N / 2],
           times[N * 99 / 100]);
  }
}

static void fresh(tc_context_t *ctx, tc_peer_t *peer, const char *prefix) {
  tc_package_t *pkg = load(prefix, "fresh", TC_PACKAGE_SENDER);
  tc_context_add_package(ctx, pkg);
  tc_status_t st = tc_deploy(peer, pkg, 10000);
  check(st == TC_OK, "a whole new package deploys (ried, Local library, jam)", st);
  long v[4] = {1, 2, 3, 4}, sum = 0;
  uint32_t scale = element(pkg, "scale");
  tc_send_mode_t modes[2] = {TC_SEND_LOCAL, TC_SEND_INJECTED};
  for (int m = 0; m < 2; ++m) {
    size_t n = 0;
    sum = 0;
    st = tc_call(peer, pkg, scale, modes[m], v, sizeof v, &sum, sizeof sum, &n, 10000);
    check(st == TC_OK && sum == 30,
          m ? "its jam runs injected, its ried initialised" : "its jam runs Local", st);
  }
}

static int job(const char *prefix) {
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION};
  cp.code_trust = TC_CODE_TRUST_JOB;
  cp.slots = 16;
  tc_context_t *ctx;
  /* Sender only: no rank runs 'fresh' until it is deployed to it. */
  tc_package_t *pkg = load(prefix, "fresh", TC_PACKAGE_SENDER);
  if (tc_context_create(&cp, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return 1;
  unsigned rank, size;
  tc_status_t st = tc_job_join(ctx, NULL);
  if (st != TC_OK || tc_job_rank(ctx, &rank, &size) != TC_OK) {
    fprintf(stderr, "tc_job_join: %s\n", tc_status_string(st));
    return 1;
  }
  st = tc_job_deploy(ctx, pkg, 60000);
  check(st == TC_OK, "tc_job_deploy to every rank", st);
  uint32_t scale = element(pkg, "scale");
  tc_send_mode_t modes[2] = {TC_SEND_LOCAL, TC_SEND_INJECTED};
  for (unsigned k = 0; k < size; ++k) {
    unsigned to = (rank + k) % size;
    tc_peer_t *peer;
    tc_job_peer(ctx, to, &peer);
    for (int m = 0; m < 2; ++m) {
      long v[2] = {(long)rank, (long)to}, sum = 0;
      size_t n = 0;
      st = tc_call(peer, pkg, scale, modes[m], v, sizeof v, &sum, sizeof sum, &n, 30000);
      if (st != TC_OK || sum != 3 * (long)(rank + to)) {
        printf("rank %u: call to %u (%s): %s, %ld\n", rank, to, m ? "injected" : "local",
               tc_status_string(st), sum);
        ++failures;
      }
    }
  }
  check(tc_job_quiesce(ctx, 60000) == TC_OK, "tc_job_quiesce", TC_OK);
  tc_stats_t s;
  tc_context_stats(ctx, &s);
  check(s.deployments_received == 1, "this rank took the package once", TC_OK);
  tc_context_destroy(ctx);
  printf("job: rank %u of %u %s\n", rank, size, failures ? "FAILED" : "PASSED");
  return failures != 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "job"))
    return job(argv[2]);
  if (argc < 5)
    return 2;
  uint16_t port = (uint16_t)atoi(argv[3]);
  if (!strcmp(argv[1], "receiver"))
    return receiver(argv[2], port, argv[4], argc > 5 ? argv[5] : NULL);
  const char *scenario = argv[4];
  tc_package_t *pkg = load(argv[2], "dep", TC_PACKAGE_SENDER);
  tc_context_t *ctx;
  tc_context_params_t cp = {TC_CONTEXT_PARAMS_VERSION};
  if (tc_context_create(&cp, &ctx) != TC_OK || tc_context_add_package(ctx, pkg) != TC_OK)
    return 1;
  tc_peer_t *peer;
  /* DEPLOY_HOST: another loopback address is another deployer. */
  tc_status_t st = tc_connect(ctx, getenv("DEPLOY_HOST") ? getenv("DEPLOY_HOST") : "127.0.0.1",
                              port, 5000, &peer);
  check(st == TC_OK, "a build that adds jams connects", st);
  if (st != TC_OK)
    return 1;
  if (!strcmp(scenario, "new-jam")) {
    new_jam(peer, pkg);
  } else if (!strcmp(scenario, "measure")) {
    measure(peer, pkg);
  } else if (!strcmp(scenario, "refused")) {
    long got[9];
    size_t n = 0;
    unsigned char deg[4] = {1, 2, 3, 9};
    st = tc_call(peer, pkg, element(pkg, "hist"), TC_SEND_LOCAL, deg, sizeof deg, got, sizeof got,
                 &n, 5000);
    check(st != TC_OK, "a frame of a build the receiver lacks does not run", st);
    st = tc_deploy(peer, pkg, 5000);
    check(st == TC_ERR_REFUSED, "the package policy refuses the deployment", st);
  } else if (!strcmp(scenario, "missing") && argc > 5) {
    tc_package_t *lost = load(argv[5], "lost", TC_PACKAGE_SENDER);
    st = tc_deploy(peer, lost, 10000);
    check(st == TC_ERR_MISSING_IMPORT, "a jam whose import nothing defines is refused", st);
  } else if (!strcmp(scenario, "fresh") && argc > 5) {
    fresh(ctx, peer, argv[5]);
  } else if (!strncmp(scenario, "calls=", 6)) {
    /* calls=<n>: n calls of 'add' (of 0: the ried's total stays), each
     * given 2 s. */
    int calls = atoi(scenario + 6), answered = 0;
    for (int i = 0; i < calls; ++i) {
      long zero = 0, total = -1;
      size_t n = 0;
      st = tc_call(peer, pkg, element(pkg, "add"), TC_SEND_LOCAL, &zero, sizeof zero, &total,
                   sizeof total, &n, 2000);
      answered += st == TC_OK && n == sizeof total;
    }
    printf("calls: %d of %d answered\n", answered, calls);
    check(answered == calls, "every call is answered", answered == calls ? TC_OK : st);
  } else if (!strncmp(scenario, "deploy=", 7) && argc > 6) {
    /* deploy=<status> <prefix> <package>: that package's deployment ends
     * with that status. */
    tc_package_t *other = load(argv[5], argv[6], TC_PACKAGE_SENDER);
    tc_context_add_package(ctx, other);
    st = tc_deploy(peer, other, 10000);
    printf("deploy %s: %d\n", argv[6], (int)st);
    check(st == (tc_status_t)atoi(scenario + 7), "the deployment ends as expected", st);
  } else if (!strncmp(scenario, "expect=", 7)) {
    tc_status_t want = (tc_status_t)atoi(scenario + 7);
    /* A file changed after this side loaded the package, before it is
     * sent: what the receiver gets is not what was signed. */
    if (getenv("DEPLOY_TAMPER") && *getenv("DEPLOY_TAMPER")) {
      FILE *f = fopen(getenv("DEPLOY_TAMPER"), "r+b");
      int c;
      if (!f || fseek(f, 100, SEEK_SET) || (c = fgetc(f)) == EOF || fseek(f, 100, SEEK_SET) ||
          fputc(c ^ 0x5a, f) == EOF || fclose(f)) {
        fprintf(stderr, "cannot change %s\n", getenv("DEPLOY_TAMPER"));
        return 1;
      }
    }
    st = tc_deploy(peer, pkg, 10000);
    printf("deploy: %d\n", (int)st);
    check(st == want, "the deployment ends as expected", st);
    if (want == TC_OK)
      new_jam(peer, pkg);
  } else {
    return 2;
  }
  tc_peer_close(peer);
  tc_context_destroy(ctx);
  printf("sender: %d failed\n", failures);
  return failures != 0;
}
