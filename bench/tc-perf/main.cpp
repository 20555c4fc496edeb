//===- main.cpp - tc-perf: Two-Chains against UCX, in the spirit of ucx_perftest
//
//   tc-perf [options]                 the server
//   tc-perf [options] <server-host>   the client, which runs the sweep
//
// See --help and docs/performance.md. A benchmark: it asserts nothing
// about time, and the tests never run it.
//===----------------------------------------------------------------------===//
#include "Clock.h"
#include "Options.h"
#include "Session.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sched.h>

#ifndef TC_PERF_DEFAULT_PREFIX
#define TC_PERF_DEFAULT_PREFIX ""
#endif

namespace tcperf {

const char *transportName() {
  const char *Tls = getenv("UCX_TLS");
  return Tls && *Tls ? Tls : "default";
}

} // namespace tcperf

static bool pinTo(int Cpu) {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  CPU_SET(Cpu, &Set);
  if (sched_setaffinity(0, sizeof Set, &Set) == 0)
    return true;
  perror("tc-perf: --cpu");
  return false;
}

int main(int Argc, char **Argv) {
  using namespace tcperf;
  Options O;
  O.Prefix = TC_PERF_DEFAULT_PREFIX;
  bool Exit;
  int Code = parseOptions(Argc, Argv, &O, &Exit);
  if (Exit)
    return Code;
  if (O.Prefix.empty()) {
    fprintf(stderr, "tc-perf: no stdlib package prefix built in; give --prefix\n");
    return 2;
  }
  if (O.Cpu >= 0 && !pinTo(O.Cpu))
    return 2;
  signal(SIGPIPE, SIG_IGN); // a vanished peer is an error return, not a signal
  setvbuf(stdout, nullptr, _IOLBF, 0);
  Clock::init();
  return O.Server ? runServer(O) : runClient(O);
}
