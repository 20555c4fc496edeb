//===- threads.cpp - Many sending threads on one context ------------------===//
//
//   threads receiver PORT SECONDS [FRAMES]   runs frames for that long, or
//       until FRAMES ran; prints how many ran and the count they made
//   threads sender PORT T N [executor]  one context (TC_CONTEXT_THREADS),
//       with its executor thread running if asked; T application threads,
//       each with a peer of its own (a channel), stream N count frames each
//       at once, then make N/20 calls each at once (tc_call, answered by the
//       answer jam with tc_jam_return)
//
// Prints one line: aggregate and per-thread rate, the p50/p99 of one
// tc_send call, and the p50/p99 of a call's round trip with T threads
// calling. bench/run-threads.sh runs T = 1, 2, 4 (docs/performance.md,
// "Threads"); TC_THREAD_CHANNELS=0 makes the threads share one lock.
//
//===----------------------------------------------------------------------===//
#include <twochains/twochains.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <string_view>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

static double since(Clock::time_point T) {
  return std::chrono::duration<double, std::nano>(Clock::now() - T).count();
}

static int fail(const char *What, tc_status_t St) {
  std::fprintf(stderr, "threads: %s: %s\n", What, tc_status_string(St));
  return 1;
}

static tc_status_t setUp(uint32_t Roles, uint32_t Flags, tc_package_t **Pkg,
                         tc_context_t **Ctx) {
  tc_package_params_t P = {TC_PACKAGE_PARAMS_VERSION, Roles, TC_THREADS_PREFIX, "containment",
                           nullptr};
  tc_status_t St = tc_package_load(&P, Pkg);
  if (St != TC_OK)
    return St;
  tc_context_params_t C = {TC_CONTEXT_PARAMS_VERSION};
  C.flags = Flags;
  if ((St = tc_context_create(&C, Ctx)) != TC_OK)
    return St;
  return tc_context_add_package(*Ctx, *Pkg);
}

int main(int Argc, char **Argv) {
  if ((Argc == 4 || Argc == 5) && std::string_view(Argv[1]) == "receiver") {
    tc_package_t *Pkg;
    tc_context_t *Ctx;
    tc_status_t St = setUp(TC_PACKAGE_RECEIVER, 0, &Pkg, &Ctx);
    if (St != TC_OK ||
        (St = tc_listen(Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[2])))) != TC_OK)
      return fail("receiver", St);
    std::printf("threads: listening\n");
    std::fflush(stdout);
    auto End = Clock::now() + std::chrono::seconds(std::atoi(Argv[3]));
    uint64_t Want = Argc == 5 ? std::strtoull(Argv[4], nullptr, 10) : UINT64_MAX, Ran = 0;
    while (Clock::now() < End && Ran < Want) {
      unsigned K = 0;
      tc_progress(Ctx, &K);
      Ran += K;
    }
    for (int K = 0; K < 100000; ++K) // the last credits
      tc_progress(Ctx, nullptr);
    auto *Counted = static_cast<uint64_t *>(dlsym(RTLD_DEFAULT, "containment_count"));
    std::printf("threads: ran %llu frames, counted %llu\n", (unsigned long long)Ran,
                Counted ? (unsigned long long)*Counted : 0ull);
    tc_context_destroy(Ctx);
    return 0;
  }
  if ((Argc != 5 && Argc != 6) || std::string_view(Argv[1]) != "sender") {
    std::fprintf(stderr, "usage: threads receiver PORT SECONDS | sender PORT T N [executor]\n");
    return 2;
  }
  unsigned T = unsigned(std::atoi(Argv[3])), N = unsigned(std::atoi(Argv[4]));
  tc_package_t *Pkg;
  tc_context_t *Ctx;
  tc_status_t St = setUp(TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, TC_CONTEXT_THREADS, &Pkg, &Ctx);
  if (St != TC_OK)
    return fail("sender", St);
  uint32_t Count = 0, Answer = 0;
  tc_package_find(Pkg, "count", &Count);
  if ((St = tc_package_find(Pkg, "answer", &Answer)) != TC_OK)
    return fail("the answer jam", St);
  bool Executor = Argc > 5 && std::string_view(Argv[5]) == "executor";
  if (Executor && (St = tc_executor_start(Ctx)) != TC_OK)
    return fail("executor", St);
  std::vector<tc_peer_t *> Peers(T);
  for (unsigned I = 0; I < T; ++I)
    if ((St = tc_connect(Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[2])), 10000, &Peers[I])) !=
        TC_OK)
      return fail("connect", St);

  std::atomic<unsigned> Ready{0};
  std::atomic<bool> Go{false};
  std::vector<double> Seconds(T);
  std::vector<std::vector<double>> Calls(T);
  std::atomic<int> Failed{0};
  std::vector<std::thread> Threads;
  for (unsigned I = 0; I < T; ++I)
    Threads.emplace_back([&, I] {
      Calls[I].reserve(N / 16 + 1);
      ++Ready;
      while (!Go.load())
        std::this_thread::yield();
      uint64_t Word = 1;
      auto Start = Clock::now();
      for (unsigned K = 0; K < N; ++K) {
        auto C = Clock::now();
        tc_status_t S;
        // The executor reads the credits; a full ring is retried.
        while ((S = tc_send(Peers[I], Pkg, Count, TC_SEND_LOCAL, &Word, sizeof Word)) ==
               TC_ERR_NO_CREDIT)
          std::this_thread::yield();
        if (S != TC_OK) {
          Failed = int(S);
          return;
        }
        if (K % 16 == 0)
          Calls[I].push_back(since(C));
      }
      if (tc_status_t S = tc_flush(Peers[I], 60000); S != TC_OK)
        Failed = int(S);
      Seconds[I] = since(Start) * 1e-9;
    });
  while (Ready.load() < T)
    std::this_thread::yield();
  auto Start = Clock::now();
  Go = true;
  for (std::thread &Th : Threads)
    Th.join();
  double Wall = since(Start) * 1e-9;
  if (Failed)
    return fail("stream", tc_status_t(Failed.load()));
  std::vector<double> All;
  for (auto &C : Calls)
    All.insert(All.end(), C.begin(), C.end());
  std::sort(All.begin(), All.end());

  // Calls, from every thread at once: each waits for its own answers,
  // and progresses the context while it waits (or lets the executor).
  std::vector<std::vector<double>> Rtts(T);
  Threads.clear();
  for (unsigned I = 0; I < T; ++I)
    Threads.emplace_back([&, I] {
      uint64_t Word = I, Got = 0;
      for (unsigned K = 0; K < N / 20 + 100; ++K) {
        size_t Size = 0;
        auto C = Clock::now();
        tc_status_t S = tc_call(Peers[I], Pkg, Answer, TC_SEND_LOCAL, &Word, sizeof Word, &Got,
                                sizeof Got, &Size, 10000);
        if (S != TC_OK || Got != Word) {
          Failed = S != TC_OK ? int(S) : int(TC_ERR_BAD_LENGTH);
          return;
        }
        if (K >= 100)
          Rtts[I].push_back(since(C));
        ++Word;
      }
    });
  for (std::thread &Th : Threads)
    Th.join();
  if (Failed)
    return fail("calls", tc_status_t(Failed.load()));
  std::vector<double> Rtt;
  for (auto &R : Rtts)
    Rtt.insert(Rtt.end(), R.begin(), R.end());
  std::sort(Rtt.begin(), Rtt.end());
  double Slowest = *std::max_element(Seconds.begin(), Seconds.end());
  std::printf("threads %u: rate %.0f msg/s (%.0f per thread), tc_send p50 %.0f ns p99 %.0f ns, "
              "call p50 %.0f ns p99 %.0f ns\n",
              T, T * double(N) / Wall, double(N) / Slowest, All[All.size() / 2],
              All[All.size() * 99 / 100], Rtt.empty() ? 0.0 : Rtt[Rtt.size() / 2],
              Rtt.empty() ? 0.0 : Rtt[Rtt.size() * 99 / 100]);
  if (Executor)
    tc_executor_stop(Ctx);
  for (tc_peer_t *P : Peers)
    tc_peer_close(P);
  tc_context_destroy(Ctx);
  return 0;
}
