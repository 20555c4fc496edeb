//===- Options.cpp - tc-perf's command line --------------------------------===//
#include "Options.h"

#include <twochains/twochains.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>

namespace tcperf {

static const char Usage[] =
    "usage: tc-perf [options]                 server: listens, follows the client\n"
    "       tc-perf [options] <server-host>   client: runs the sweep, prints and writes results\n"
    "\n"
    "Two-Chains (tc_send Local / Injected / Injected-full) against raw UCX puts and UCX\n"
    "active messages, in one run over one transport (UCX_TLS, set alike for both sides).\n"
    "\n"
    "  --port N          Two-Chains port (default 13370); bootstrap socket on N+1\n"
    "  --iters N         timed ping-pongs per latency test (default 10000)\n"
    "  --warmup N        untimed messages before each test (default 1000)\n"
    "  --rate-iters N    messages per rate test (default 20000)\n"
    "  --rounds N        split each test into N rounds that take turns with the\n"
    "                    other variants' (default 5; latency merges the samples,\n"
    "                    rate takes the median round): ratios then come from the\n"
    "                    same moments even when the machine drifts\n"
    "  --sizes-max B     largest payload in bytes (default 32768)\n"
    "  --sizes LIST      exactly these payload sizes in bytes (e.g. 12,64,1024), for\n"
    "                    every workload that can take them (indirect_put: 4 + 8n;\n"
    "                    server_side_sum: multiples of 4), up to 32768\n"
    "  --tests LIST      latency,rate,wait (default latency,rate)\n"
    "  --workloads LIST  indirect_put,server_side_sum (default both)\n"
    "  --variants LIST   tc-local,tc-injected,tc-injected-full,ucx-put,ucx-am (default all),\n"
    "                    tc-local-job: tc-local into a second context on each side\n"
    "                    under the job code-trust policy (its jams read their payload in\n"
    "                    the ring), in the same rounds\n"
    "  --gap-us N        wait test: microseconds between the client's messages (default 20)\n"
    "  --prefix DIR      the stdlib package's install prefix (default: this build's)\n"
    "  --csv FILE        client: one row per (test, workload, variant, size)\n"
    "  --ordered         this side's context takes TC_CONTEXT_ORDERED_PLACEMENT (no\n"
    "                    checksum on arrival; give it to both sides)\n"
    "  --quick           3 sizes per workload, 1000 iterations: a smoke check\n"
    "  --cpu N           pin this process to CPU N\n"
    "  --verbose         say more (UCX lanes of the baselines)\n"
    "server only:\n"
    "  --wait MODE       poll|pause|auto: how the server waits between empty polls;\n"
    "                    the wait test runs the runtime's executor with this wait_mode\n"
    "  --stress N        N memory-stress threads (64 MiB memcpy each) during the tests\n"
    "  --code-cache-size B  bytes of the code cache (default: the runtime's, 1 MiB);\n"
    "                    smaller than an image (64), nothing is ever installed: every\n"
    "                    injected frame with code costs what a first message costs\n"
    "  --mailbox MODE    code-cache|no-cache (default: TC_MAILBOX_MODE, else\n"
    "                    code-cache); the client uses the server's unless given its own\n"
    "  --code-trust P    package|job|signed: the code-trust policy of this side's context\n"
    "                    (default: TC_CODE_TRUST, else package); tc-local-job's contexts\n"
    "                    are always job\n";

static bool parseUnsigned(const char *Text, uint64_t Max, uint64_t *Out) {
  if (!*Text || *Text == '-')
    return false;
  errno = 0;
  char *End;
  unsigned long long V = strtoull(Text, &End, 10);
  if (errno || *End || V > Max)
    return false;
  *Out = V;
  return true;
}

// Splits a comma list and maps each name with Find; false on an unknown one.
template <typename T>
static bool parseList(const std::string &Text, const std::function<bool(const std::string &, T *)> &Find,
                      std::vector<T> *Out) {
  std::vector<T> Items;
  std::stringstream In(Text);
  std::string Name;
  while (std::getline(In, Name, ',')) {
    T Item;
    if (!Find(Name, &Item))
      return false;
    Items.push_back(Item);
  }
  if (Items.empty())
    return false;
  *Out = Items;
  return true;
}

static bool findTest(const std::string &N, Test *T) {
  for (Test C : {Test::Latency, Test::Rate, Test::Wait})
    if (N == testName(C))
      return *T = C, true;
  return false;
}

static bool findWorkload(const std::string &N, Workload *W) {
  for (Workload C : {Workload::IndirectPut, Workload::ServerSideSum})
    if (N == workloadName(C))
      return *W = C, true;
  return false;
}

static bool findVariant(const std::string &N, Variant *V) {
  for (Variant C : {Variant::TcLocal, Variant::TcInjected, Variant::TcInjectedFull,
                    Variant::UcxPut, Variant::UcxAm, Variant::TcLocalJob})
    if (N == variantName(C))
      return *V = C, true;
  return false;
}

static bool findWait(const std::string &N, WaitKind *K) {
  for (WaitKind C : {WaitKind::Poll, WaitKind::Pause, WaitKind::Auto})
    if (N == waitName(C))
      return *K = C, true;
  return false;
}

bool mailboxFromName(const std::string &N, uint32_t *M) {
  if (N == "code-cache")
    return *M = TC_MAILBOX_CODE_CACHE, true;
  if (N == "no-cache")
    return *M = TC_MAILBOX_NO_CACHE, true;
  return false;
}

bool codeTrustFromName(const std::string &N, uint32_t *T) {
  if (N == "package")
    return *T = TC_CODE_TRUST_PACKAGE, true;
  if (N == "job")
    return *T = TC_CODE_TRUST_JOB, true;
  if (N == "signed")
    return *T = TC_CODE_TRUST_SIGNED, true;
  return false;
}

static bool findSize(const std::string &N, size_t *B) {
  uint64_t V;
  if (!parseUnsigned(N.c_str(), 32768, &V) || V < 4)
    return false;
  *B = size_t(V);
  return true;
}

static int bad(const char *Option, const char *Value, const char *Expected) {
  fprintf(stderr, "tc-perf: bad value '%s' for %s (expected %s); see --help\n",
          Value ? Value : "", Option, Expected);
  return 2;
}

int parseOptions(int Argc, char **Argv, Options *O, bool *Exit) {
  *Exit = true;
  // --quick sets smaller defaults that explicit options after or before it
  // still override, so look for it first.
  for (int I = 1; I < Argc; ++I)
    if (!strcmp(Argv[I], "--quick")) {
      O->Quick = true;
      O->Iters = 1000;
      O->Warmup = 100;
      O->RateIters = 5000;
    }
  for (int I = 1; I < Argc; ++I) {
    const char *A = Argv[I];
    if (A[0] != '-') {
      if (!O->Host.empty())
        return fprintf(stderr, "tc-perf: more than one server host ('%s', '%s')\n",
                       O->Host.c_str(), A), 2;
      O->Host = A;
      O->Server = false;
      continue;
    }
    if (!strcmp(A, "--help") || !strcmp(A, "-h"))
      return fputs(Usage, stdout), 0;
    if (!strcmp(A, "--quick")) continue;
    if (!strcmp(A, "--verbose")) { O->Verbose = true; continue; }
    if (!strcmp(A, "--ordered")) { O->Ordered = true; continue; }
    // Every other option takes a value.
    static const char *const WithValue[] = {
        "--port", "--iters", "--warmup", "--rate-iters", "--rounds", "--gap-us", "--sizes-max",
        "--tests", "--workloads", "--variants", "--prefix", "--csv", "--wait",
        "--stress", "--mailbox", "--code-cache-size", "--cpu", "--sizes", "--code-trust"};
    bool Known = false;
    for (const char *Name : WithValue)
      Known |= !strcmp(A, Name);
    if (!Known)
      return fprintf(stderr, "tc-perf: unknown option %s; see --help\n", A), 2;
    const char *V = I + 1 < Argc ? Argv[I + 1] : nullptr;
    if (!V)
      return fprintf(stderr, "tc-perf: %s needs a value; see --help\n", A), 2;
    ++I;
    uint64_t N;
    if (!strcmp(A, "--port")) {
      if (!parseUnsigned(V, 65534, &N) || N == 0) return bad(A, V, "1..65534");
      O->Port = uint16_t(N);
    } else if (!strcmp(A, "--iters")) {
      if (!parseUnsigned(V, 100000000, &N) || N == 0) return bad(A, V, "1..1e8");
      O->Iters = N;
    } else if (!strcmp(A, "--warmup")) {
      if (!parseUnsigned(V, 100000000, &N)) return bad(A, V, "0..1e8");
      O->Warmup = N;
    } else if (!strcmp(A, "--rate-iters")) {
      if (!parseUnsigned(V, 1000000000, &N) || N == 0) return bad(A, V, "1..1e9");
      O->RateIters = N;
    } else if (!strcmp(A, "--rounds")) {
      if (!parseUnsigned(V, 1000, &N) || N == 0) return bad(A, V, "1..1000");
      O->Rounds = unsigned(N);
    } else if (!strcmp(A, "--gap-us")) {
      if (!parseUnsigned(V, 1000000, &N)) return bad(A, V, "0..1000000");
      O->GapNs = N * 1000;
    } else if (!strcmp(A, "--sizes-max")) {
      if (!parseUnsigned(V, 32768, &N) || N < 12) return bad(A, V, "12..32768");
      O->SizesMax = size_t(N);
    } else if (!strcmp(A, "--tests")) {
      if (!parseList<Test>(V, findTest, &O->Tests)) return bad(A, V, "latency,rate,wait");
    } else if (!strcmp(A, "--workloads")) {
      if (!parseList<Workload>(V, findWorkload, &O->Workloads))
        return bad(A, V, "indirect_put,server_side_sum");
    } else if (!strcmp(A, "--variants")) {
      if (!parseList<Variant>(V, findVariant, &O->Variants))
        return bad(A, V, "tc-local,tc-injected,tc-injected-full,ucx-put,ucx-am,tc-local-job");
    } else if (!strcmp(A, "--sizes")) {
      if (!parseList<size_t>(V, findSize, &O->Sizes)) return bad(A, V, "sizes of 4..32768 bytes");
    } else if (!strcmp(A, "--code-trust")) {
      if (!codeTrustFromName(V, &O->CodeTrust)) return bad(A, V, "package, job or signed");
    } else if (!strcmp(A, "--prefix")) {
      O->Prefix = V;
    } else if (!strcmp(A, "--csv")) {
      O->Csv = V;
    } else if (!strcmp(A, "--wait")) {
      if (!findWait(V, &O->Wait)) return bad(A, V, "poll, pause or auto");
    } else if (!strcmp(A, "--stress")) {
      if (!parseUnsigned(V, 64, &N)) return bad(A, V, "0..64");
      O->Stress = unsigned(N);
    } else if (!strcmp(A, "--code-cache-size")) {
      if (!parseUnsigned(V, 1u << 30, &N) || N == 0) return bad(A, V, "1..2^30");
      O->CodeCacheSize = uint32_t(N);
    } else if (!strcmp(A, "--mailbox")) {
      if (!mailboxFromName(V, &O->Mailbox)) return bad(A, V, "code-cache or no-cache");
    } else if (!strcmp(A, "--cpu")) {
      if (!parseUnsigned(V, 4095, &N)) return bad(A, V, "a CPU number");
      O->Cpu = int(N);
    }
  }
  if (O->Server && !O->Csv.empty())
    return fprintf(stderr, "tc-perf: --csv is for the client (give it a server host)\n"), 2;
  *Exit = false;
  return 0;
}

bool fitsWorkload(Workload W, size_t Bytes) {
  if (W == Workload::IndirectPut)
    return Bytes >= 12 && (Bytes - 4) % 8 == 0 && (Bytes - 4) / 8 <= 1024;
  return Bytes >= 4 && Bytes % 4 == 0;
}

std::vector<size_t> payloadSizes(const Options &O, Workload W) {
  std::vector<size_t> Sizes;
  if (!O.Sizes.empty()) {
    for (size_t S : O.Sizes)
      if (fitsWorkload(W, S))
        Sizes.push_back(S);
  } else if (W == Workload::IndirectPut) {
    // A uint32 count and n {uint32 index, int32 value} items.
    for (size_t N = 1; N <= 1024; N *= 2)
      if (!O.Quick || N == 1 || N == 32 || N == 1024)
        Sizes.push_back(4 + 8 * N);
  } else {
    for (size_t B = 64; B <= 32768; B *= 2)
      if (!O.Quick || B == 64 || B == 1024 || B == 32768)
        Sizes.push_back(B);
  }
  std::vector<size_t> Fit;
  for (size_t S : Sizes)
    if (S <= O.SizesMax)
      Fit.push_back(S);
  return Fit;
}

const char *testName(Test T) {
  switch (T) {
  case Test::Latency: return "latency";
  case Test::Rate: return "rate";
  case Test::Wait: return "wait";
  }
  return "?";
}

const char *workloadName(Workload W) {
  return W == Workload::IndirectPut ? "indirect_put" : "server_side_sum";
}

const char *variantName(Variant V) {
  switch (V) {
  case Variant::TcLocal: return "tc-local";
  case Variant::TcInjected: return "tc-injected";
  case Variant::TcInjectedFull: return "tc-injected-full";
  case Variant::UcxPut: return "ucx-put";
  case Variant::UcxAm: return "ucx-am";
  case Variant::TcLocalJob: return "tc-local-job";
  }
  return "?";
}

const char *waitName(WaitKind K) {
  switch (K) {
  case WaitKind::Poll: return "poll";
  case WaitKind::Pause: return "pause";
  case WaitKind::Auto: return "auto";
  }
  return "?";
}

bool isTwoChains(Variant V) {
  return V == Variant::TcLocal || V == Variant::TcInjected || V == Variant::TcInjectedFull ||
         V == Variant::TcLocalJob;
}

} // namespace tcperf
