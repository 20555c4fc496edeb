//===- isolation.cpp - A victim beside a flooding or a stalling peer ------===//
//
//   isolation receiver PORT SECONDS         runs frames for that long
//   isolation victim PORT N                 N echo round trips (p50, p99 and
//       worst of the round trip), then 10N count frames streamed as fast as
//       it can (its saturating rate), then 10N paced at TC_VICTIM_RATE
//       frames a second (default 1,000,000: a well-behaved peer that does not
//       itself fill the receiver) and the rate it reached; prints one line
//   isolation flood PORT SECONDS            count frames at full speed
//   isolation stall PORT SECONDS            echo frames, never draining the
//       replies (it never calls tc_progress)
//   isolation churn PORT SECONDS            connects and closes in a loop: the
//       receiver's handshakes and reaping, beside the victim's frames
//
// All use the containment test package (test/e2e/packages/containment):
// echo answers with a count frame, count adds one to a ried counter.
// bench/run-isolation.sh runs the three configurations and the ratios.
//
//===----------------------------------------------------------------------===//
#include <twochains/twochains.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

using Clock = std::chrono::steady_clock;

static double since(Clock::time_point T) {
  return std::chrono::duration<double, std::nano>(Clock::now() - T).count();
}

static int fail(const char *What, tc_status_t St) {
  std::fprintf(stderr, "isolation: %s: %s\n", What, tc_status_string(St));
  return 1;
}

struct Side {
  tc_package_t *Pkg = nullptr;
  tc_context_t *Ctx = nullptr;
  tc_peer_t *Peer = nullptr;
  uint32_t Echo = 0, Count = 0;
};

static tc_status_t setUp(Side &S, uint32_t Roles) {
  tc_package_params_t P = {TC_PACKAGE_PARAMS_VERSION, Roles, TC_ISOLATION_PREFIX, "containment",
                           nullptr};
  tc_status_t St = tc_package_load(&P, &S.Pkg);
  if (St != TC_OK)
    return St;
  tc_package_find(S.Pkg, "echo", &S.Echo);
  tc_package_find(S.Pkg, "count", &S.Count);
  if ((St = tc_context_create(nullptr, &S.Ctx)) != TC_OK)
    return St;
  return tc_context_add_package(S.Ctx, S.Pkg);
}

static tc_status_t connect(Side &S, const char *Port) {
  tc_status_t St = TC_ERR_IO;
  for (int I = 0; I < 50 && St != TC_OK; ++I)
    St = tc_connect(S.Ctx, "127.0.0.1", uint16_t(std::atoi(Port)), 2000, &S.Peer);
  return St;
}

static tc_status_t send(Side &S, uint32_t Element, bool Progress) {
  uint64_t Word = 1;
  tc_status_t St;
  while ((St = tc_send(S.Peer, S.Pkg, Element, TC_SEND_LOCAL, &Word, sizeof Word)) ==
         TC_ERR_NO_CREDIT)
    if (Progress)
      tc_progress(S.Ctx, nullptr);
  return St;
}

static int receiver(char **Argv) {
  Side S;
  tc_status_t St = setUp(S, TC_PACKAGE_RECEIVER);
  if (St != TC_OK || (St = tc_listen(S.Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[2])))) != TC_OK)
    return fail("receiver", St);
  std::printf("isolation: listening\n");
  std::fflush(stdout);
  auto End = Clock::now() + std::chrono::seconds(std::atoi(Argv[3]));
  while (Clock::now() < End)
    tc_progress(S.Ctx, nullptr);
  tc_context_destroy(S.Ctx);
  return 0;
}

static int victim(char **Argv) {
  Side S;
  tc_status_t St = setUp(S, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  if (St != TC_OK || (St = connect(S, Argv[2])) != TC_OK)
    return fail("victim", St);
  auto *Replies = static_cast<volatile uint64_t *>(dlsym(RTLD_DEFAULT, "containment_count"));
  unsigned N = unsigned(std::atoi(Argv[3]));
  std::vector<double> Rtt;
  Rtt.reserve(N);
  for (unsigned I = 0; I < N + N / 10; ++I) { // the first tenth warms up
    uint64_t Before = *Replies;
    auto T = Clock::now();
    if ((St = send(S, S.Echo, true)) != TC_OK)
      return fail("echo", St);
    while (*Replies == Before)
      tc_progress(S.Ctx, nullptr);
    if (I >= N / 10)
      Rtt.push_back(since(T));
  }
  std::sort(Rtt.begin(), Rtt.end());
  auto T = Clock::now();
  for (unsigned I = 0; I < 10 * N; ++I)
    if ((St = send(S, S.Count, true)) != TC_OK)
      return fail("count", St);
  if ((St = tc_flush(S.Peer, 60000)) != TC_OK)
    return fail("flush", St);
  double Rate = 10.0 * N / (since(T) * 1e-9);
  // Paced: frame I leaves no earlier than I / Offered seconds after the
  // start, so a receiver that gives this peer its share keeps the pace, and
  // one that lets a flooder starve it falls behind.
  const char *Env = std::getenv("TC_VICTIM_RATE");
  double Offered = Env ? std::atof(Env) : 1e6;
  T = Clock::now();
  for (unsigned I = 0; I < 10 * N; ++I) {
    while (since(T) < I * 1e9 / Offered)
      tc_progress(S.Ctx, nullptr);
    if ((St = send(S, S.Count, true)) != TC_OK)
      return fail("paced count", St);
  }
  if ((St = tc_flush(S.Peer, 60000)) != TC_OK)
    return fail("flush", St);
  double Paced = 10.0 * N / (since(T) * 1e-9);
  std::printf("victim: p50 %.0f ns, p99 %.0f ns, max %.0f ns, rate %.0f msg/s, "
              "paced %.0f of %.0f msg/s\n",
              Rtt[Rtt.size() / 2], Rtt[Rtt.size() * 99 / 100], Rtt.back(), Rate, Paced, Offered);
  tc_peer_close(S.Peer);
  tc_context_destroy(S.Ctx);
  return 0;
}

static int attacker(char **Argv, bool Stall) {
  Side S;
  tc_status_t St = setUp(S, TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  if (St != TC_OK || (St = connect(S, Argv[2])) != TC_OK)
    return fail("attacker", St);
  std::printf("%s: connected\n", Stall ? "stall" : "flood");
  std::fflush(stdout);
  auto End = Clock::now() + std::chrono::seconds(std::atoi(Argv[3]));
  uint64_t Sent = 0;
  while (Clock::now() < End) {
    uint64_t Word = 1;
    // The flooder keeps its credits coming; the staller never drains.
    St = tc_send(S.Peer, S.Pkg, Stall ? S.Echo : S.Count, TC_SEND_LOCAL, &Word, sizeof Word);
    if (St == TC_OK)
      ++Sent;
    else if (St != TC_ERR_NO_CREDIT)
      break;
    else if (!Stall)
      tc_progress(S.Ctx, nullptr);
  }
  std::printf("%s: %llu frames\n", Stall ? "stall" : "flood", (unsigned long long)Sent);
  std::fflush(stdout);
  std::_Exit(0);
}

static int churn(char **Argv) {
  Side S;
  tc_status_t St = setUp(S, TC_PACKAGE_SENDER);
  if (St != TC_OK)
    return fail("churn", St);
  std::printf("churn: connected\n");
  std::fflush(stdout);
  auto End = Clock::now() + std::chrono::seconds(std::atoi(Argv[3]));
  uint64_t Cycles = 0;
  while (Clock::now() < End && connect(S, Argv[2]) == TC_OK) {
    tc_peer_close(S.Peer);
    ++Cycles;
  }
  std::printf("churn: %llu connect/close cycles\n", (unsigned long long)Cycles);
  std::fflush(stdout);
  std::_Exit(0);
}

int main(int Argc, char **Argv) {
  std::string Verb = Argc == 4 ? Argv[1] : "";
  if (Verb == "receiver")
    return receiver(Argv);
  if (Verb == "victim")
    return victim(Argv);
  if (Verb == "churn")
    return churn(Argv);
  if (Verb == "flood" || Verb == "stall")
    return attacker(Argv, Verb == "stall");
  std::fprintf(stderr, "usage: isolation receiver|victim|flood|stall|churn PORT SECONDS|N\n");
  return 2;
}
