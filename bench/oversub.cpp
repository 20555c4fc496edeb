//===- oversub.cpp - Call round trips with more processes than cores ------===//
//
//   oversub callee PORT SECONDS   listens on 127.0.0.1:PORT and answers
//       calls (the containment package's echo jam "answer") with its
//       executor thread, for SECONDS at most
//   oversub caller PORT N         connects and makes N calls (after N/10
//       to warm up), one at a time; prints the round trips' median, 90th
//       and 99th percentiles and mean, in microseconds
//
// bench/run-oversubscribed.sh runs P/2 such pairs at once (docs/
// performance.md, "Sharing cores"). Both sides' waits sleep once they
// have polled a while, unless TC_BUSY_POLL=1 (pure polling, as before).
//
//===----------------------------------------------------------------------===//
#include "twochains/twochains.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

static int fail(const char *What, tc_status_t St) {
  std::fprintf(stderr, "oversub: %s: %s\n", What, tc_status_string(St));
  return 1;
}

static tc_status_t setUp(uint32_t Roles, tc_package_t **Pkg, tc_context_t **Ctx) {
  tc_package_params_t P = {TC_PACKAGE_PARAMS_VERSION, Roles, TC_OVERSUB_PREFIX, "containment",
                           nullptr};
  tc_status_t St = tc_package_load(&P, Pkg);
  if (St != TC_OK)
    return St;
  tc_context_params_t C = {TC_CONTEXT_PARAMS_VERSION};
  if ((St = tc_context_create(&C, Ctx)) != TC_OK)
    return St;
  return tc_context_add_package(*Ctx, *Pkg);
}

int main(int Argc, char **Argv) {
  if (Argc != 4 || (std::string_view(Argv[1]) != "callee" &&
                    std::string_view(Argv[1]) != "caller")) {
    std::fprintf(stderr, "usage: oversub callee PORT SECONDS | caller PORT N\n");
    return 2;
  }
  uint16_t Port = uint16_t(std::atoi(Argv[2]));
  tc_package_t *Pkg;
  tc_context_t *Ctx;
  if (std::string_view(Argv[1]) == "callee") {
    tc_status_t St = setUp(TC_PACKAGE_RECEIVER, &Pkg, &Ctx);
    if (St != TC_OK || (St = tc_listen(Ctx, "127.0.0.1", Port)) != TC_OK ||
        (St = tc_executor_start(Ctx)) != TC_OK)
      return fail("callee", St);
    std::printf("oversub: listening\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(std::atoi(Argv[3])));
    tc_executor_stop(Ctx);
    tc_context_destroy(Ctx);
    return 0;
  }
  tc_status_t St = setUp(TC_PACKAGE_SENDER, &Pkg, &Ctx);
  tc_peer_t *Peer = nullptr;
  if (St != TC_OK || (St = tc_connect(Ctx, "127.0.0.1", Port, 30000, &Peer)) != TC_OK)
    return fail("caller", St);
  uint32_t Answer;
  if ((St = tc_package_find(Pkg, "answer", &Answer)) != TC_OK)
    return fail("answer", St);
  long N = std::atol(Argv[3]);
  std::vector<double> Us;
  Us.reserve(size_t(N));
  for (long I = -N / 10; I < N; ++I) {
    uint64_t Word = uint64_t(I), Got = 0;
    size_t Size = 0;
    auto T = Clock::now();
    St = tc_call(Peer, Pkg, Answer, TC_SEND_LOCAL, &Word, sizeof Word, &Got, sizeof Got, &Size,
                 10000);
    double D = std::chrono::duration<double, std::micro>(Clock::now() - T).count();
    if (St != TC_OK || Got != Word)
      return fail("call", St != TC_OK ? St : TC_ERR_IO);
    if (I >= 0)
      Us.push_back(D);
  }
  std::sort(Us.begin(), Us.end());
  double Sum = 0;
  for (double D : Us)
    Sum += D;
  auto At = [&](double Q) { return Us[std::min(Us.size() - 1, size_t(Q * double(Us.size())))]; };
  tc_stats_t S = {};
  tc_context_stats(Ctx, &S);
  std::printf("oversub: calls %ld median %.2f p90 %.2f p99 %.2f mean %.2f us sleeps %llu\n", N,
              At(0.5), At(0.9), At(0.99), Sum / double(Us.size()), (unsigned long long)S.sleeps);
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  return 0;
}
