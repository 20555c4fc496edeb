//===- test_receiver.h - The receiver of the security and containment tests --===//
//
//   <tool> receiver PREFIX PKG PORT FRAMES [ADDRESS]
//       loads package PKG, listens, runs FRAMES frames (or until 60 s
//       pass without one: a long run such as 'cycles' is not cut off), and
//       prints its statistics, whether its canary (heap memory no peer may
//       reach) is intact, and what the test rieds saw. Environment:
//       TC_TEST_ACCEPT_RIEDS, TC_TEST_EXECUTOR (run frames on the
//       runtime's executor thread), TC_TEST_STOP_FILE (also stop once this
//       file exists: for runs whose number of frames is not known).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_TEST_E2E_TEST_RECEIVER_H
#define TWOCHAINS_TEST_E2E_TEST_RECEIVER_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <twochains/twochains.h>
#include <unistd.h>
#include <vector>

// The monotonic clock in nanoseconds: these programs use the public API
// alone, not the runtime's own clock.
static uint64_t monotonicNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

// Mappings of this process: shared-memory segments a closed peer left
// attached show here, not in the segment files (their owner unlinked them).
static long mappings() {
  FILE *F = std::fopen("/proc/self/maps", "r");
  if (!F)
    return -1;
  long N = 0;
  for (int C; (C = std::fgetc(F)) != EOF;)
    N += C == '\n';
  std::fclose(F);
  return N;
}

static long residentKb() {
  FILE *F = std::fopen("/proc/self/status", "r");
  if (!F)
    return -1;
  char Line[256];
  long Kb = -1;
  while (std::fgets(Line, sizeof Line, F))
    if (!std::strncmp(Line, "VmRSS:", 6))
      Kb = std::atol(Line + 6);
  std::fclose(F);
  return Kb;
}

// Open file descriptors: sockets a closed peer left open show here.
static long descriptors() {
  DIR *D = opendir("/proc/self/fd");
  if (!D)
    return -1;
  long N = 0;
  while (readdir(D))
    ++N;
  closedir(D);
  return N - 3; // ".", ".." and the directory's own descriptor
}

static int fail(const std::string &What) {
  std::fprintf(stderr, "%s\n", What.c_str());
  return 1;
}

static tc_package_t *load(const char *Prefix, const char *Name, uint32_t Roles) {
  tc_package_params_t P = {TC_PACKAGE_PARAMS_VERSION, Roles, Prefix, Name, nullptr};
  tc_package_t *Pkg = nullptr;
  return tc_package_load(&P, &Pkg) == TC_OK ? Pkg : nullptr;
}

static tc_context_t *context(tc_package_t *Pkg, uint32_t Flags = 0) {
  tc_context_params_t CP = {};
  CP.version = TC_CONTEXT_PARAMS_VERSION;
  CP.slots = 16;
  CP.slot_size = 1024;
  CP.credit_batch = 4;
  CP.flags = Flags;
  tc_context_t *Ctx = nullptr;
  if (tc_context_create(&CP, &Ctx) != TC_OK)
    return nullptr;
  if (Pkg && tc_context_add_package(Ctx, Pkg) != TC_OK)
    return nullptr;
  return Ctx;
}

static int receiver(int Argc, char **Argv) {
  tc_package_t *Pkg = load(Argv[2], Argv[3], TC_PACKAGE_RECEIVER);
  tc_context_t *Ctx =
      Pkg ? context(Pkg, std::getenv("TC_TEST_ACCEPT_RIEDS") ? TC_CONTEXT_ACCEPT_RIEDS : 0)
          : nullptr;
  if (!Ctx)
    return fail("cannot set up the receiver");
  const char *Address = Argc > 6 ? Argv[6] : "127.0.0.1";
  tc_status_t St = tc_listen(Ctx, Address, uint16_t(std::atoi(Argv[4])));
  if (St != TC_OK)
    return fail(std::string("listening: ") + tc_status_string(St));
  std::vector<uint8_t> Canary(4096, 0xc5);
  std::printf("receiver: canary at 0x%llx\n",
              (unsigned long long)reinterpret_cast<uintptr_t>(Canary.data()));
  std::printf("receiver: listening\n");
  std::fflush(stdout);
  unsigned Frames = unsigned(std::atoi(Argv[5])), Done = 0;
  // Given up on after 60 s without a frame, not 60 s after the start: a
  // long, steady run of peers (containment 'cycles' under load) would
  // otherwise be cut off mid-connection at the 60th second.
  constexpr uint64_t IdleNs = 60'000'000'000ull;
  uint64_t Deadline = monotonicNs() + IdleNs;
  const char *StopFile = std::getenv("TC_TEST_STOP_FILE");
  uint64_t StopLookNs = 0;
  auto Stopped = [&] {
    if (!StopFile || monotonicNs() < StopLookNs)
      return false;
    StopLookNs = monotonicNs() + 10'000'000; // a look every 10 ms
    return access(StopFile, F_OK) == 0;
  };
  if (std::getenv("TC_TEST_EXECUTOR")) {
    tc_executor_start(Ctx);
    tc_stats_t S;
    do {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      tc_context_stats(Ctx, &S);
      unsigned Now = unsigned(S.frames_executed_local + S.frames_executed_injected +
                              S.frames_rejected + S.frames_quarantined);
      if (Now != Done)
        Deadline = monotonicNs() + IdleNs;
      Done = Now;
    } while (Done < Frames && monotonicNs() < Deadline && !Stopped());
    tc_executor_stop(Ctx);
  }
  while (Done < Frames && monotonicNs() < Deadline && !Stopped()) {
    unsigned N = 0;
    tc_progress(Ctx, &N);
    Done += N;
    if (N)
      Deadline = monotonicNs() + IdleNs;
  }
  for (int I = 0; I < 1000; ++I) // the last credit report
    tc_progress(Ctx, nullptr);
  tc_stats_t S;
  tc_context_stats(Ctx, &S);
  std::printf("receiver: ran %u frames: %llu local, %llu injected, %llu rejected\n", Done,
              (unsigned long long)S.frames_executed_local,
              (unsigned long long)S.frames_executed_injected,
              (unsigned long long)S.frames_rejected);
  std::printf("receiver: refused: auth %llu, offers %llu, messages %llu; peers by rma %llu, "
              "by messages %llu\n",
              (unsigned long long)S.auth_failures, (unsigned long long)S.offers_refused,
              (unsigned long long)S.messages_refused, (unsigned long long)S.peers_rma,
              (unsigned long long)S.peers_am);
  std::printf("receiver: before authentication: connections refused %llu, handshakes timed "
              "out %llu\n",
              (unsigned long long)S.connections_refused,
              (unsigned long long)S.handshakes_timed_out);
  std::printf("receiver: abandoned: faulted %llu, timed out %llu; quarantined %llu\n",
              (unsigned long long)S.jams_faulted, (unsigned long long)S.jams_timed_out,
              (unsigned long long)S.frames_quarantined);
  std::printf("receiver: quarantine by address: addresses %llu, connections refused %llu\n",
              (unsigned long long)S.addresses_quarantined, (unsigned long long)S.peers_quarantined);
  // The same as events, each naming its peer (tc_poll_event).
  unsigned Events[5] = {}, LastSignal = 0;
  tc_event_t E;
  while (tc_poll_event(Ctx, &E) == 1)
    if (E.kind >= 1 && E.kind <= 4) {
      ++Events[E.kind];
      if (E.kind == TC_EVENT_JAM_ABANDONED && E.peer == 0)
        std::printf("receiver: an event names no peer\n");
      LastSignal = unsigned(E.signal);
    }
  std::printf("receiver: events: peers gone %u, frames rejected %u, jams abandoned %u "
              "(last signal %u)\n",
              Events[TC_EVENT_PEER_GONE], Events[TC_EVENT_FRAME_REJECTED],
              Events[TC_EVENT_JAM_ABANDONED], LastSignal);
  for (const char *Counter : {"containment_count", "containment_returned", "containment_echoes",
                              "containment_echo_refused"})
    if (auto *V = static_cast<uint64_t *>(dlsym(RTLD_DEFAULT, Counter)))
      std::printf("receiver: %s %llu\n", Counter, (unsigned long long)*V);
  bool Intact = true;
  for (uint8_t B : Canary)
    Intact &= B == 0xc5;
  std::printf("receiver: canary %s\n", Intact ? "intact" : "CHANGED");
  if (auto *Runs = static_cast<uint64_t *>(dlsym(RTLD_DEFAULT, "probe_runs")))
    std::printf("receiver: probe runs %llu, changed %llu, first %llx, second %llx\n",
                (unsigned long long)*Runs,
                (unsigned long long)*static_cast<uint64_t *>(dlsym(RTLD_DEFAULT, "probe_changed")),
                (unsigned long long)*static_cast<uint64_t *>(dlsym(RTLD_DEFAULT, "probe_first")),
                (unsigned long long)*static_cast<uint64_t *>(dlsym(RTLD_DEFAULT, "probe_second")));
  std::printf("receiver: before the context is destroyed: resident %ld kB, mappings %ld, "
              "descriptors %ld\n",
              residentKb(), mappings(), descriptors());
  tc_context_destroy(Ctx);
  return 0;
}

#endif
