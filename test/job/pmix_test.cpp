// The PMIx bootstrap (runtime/job/Pmix.cpp), run as a job is: under mpirun
// (cmake/TwoChainsMpi.cmake) and, for the fallback, alone.
//
//   pmix_test exchange <np>   every rank gets every rank's 64 bytes, twice,
//                             then again after every context ended
//   pmix_test mismatch        rank 1 puts 65 bytes: every rank fails,
//                             naming a rank whose size differs
//   pmix_test timeout <dir>   rank 1 does not exchange: rank 0's fence
//                             gives up (TC_PMIX_TIMEOUT_S), then lets rank 1
//                             go on by creating a file in <dir>
//   pmix_test alone           not launched by PMIx: launchedByPmix() is
//                             false and the exchange fails at once
//
// Exits 0 when every check holds; otherwise prints what did not, with the
// rank, and exits 1.
#include "job/Pmix.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace twochains::rt;

namespace {

int Failures = 0;
std::string Me = "?";

void check(bool Ok, const std::string &What) {
  if (!Ok) {
    std::fprintf(stderr, "pmix_test rank %s: FAIL: %s\n", Me.c_str(), What.c_str());
    ++Failures;
  }
}

/// The launcher's own word for this process's rank and the job's size,
/// independent of PMIx: Open MPI's, else PMIx's environment.
long envNumber(const char *Name, const char *Else) {
  const char *V = std::getenv(Name);
  if (!V)
    V = Else ? std::getenv(Else) : nullptr;
  return V ? std::strtol(V, nullptr, 10) : -1;
}

/// 64 bytes that only rank R of round Round puts.
std::vector<uint8_t> bytesOf(unsigned R, unsigned Round, size_t Length = 64) {
  std::vector<uint8_t> B(Length);
  for (size_t I = 0; I < Length; ++I)
    B[I] = static_cast<uint8_t>(R * 131 + I * 7 + Round * 29 + 1);
  return B;
}

/// One exchange of round Round: Rank, Size and every rank's bytes checked.
void exchangeRound(unsigned Round, long EnvRank, long EnvSize, long Np) {
  unsigned Rank = ~0u, Size = 0;
  std::vector<std::vector<uint8_t>> All;
  std::string Why;
  tc_status_t S = pmixAllgather(bytesOf(static_cast<unsigned>(EnvRank), Round), Rank, Size, All,
                                Why);
  std::string R = "round " + std::to_string(Round) + ": ";
  check(S == TC_OK, R + "pmixAllgather: " + std::to_string(S) + " " + Why);
  if (S != TC_OK)
    return;
  check(Rank == EnvRank,
        R + "rank " + std::to_string(Rank) + ", the launcher says " + std::to_string(EnvRank));
  check(Size == EnvSize && Size == Np, R + "size " + std::to_string(Size) + ", the launcher says " +
                                           std::to_string(EnvSize) + ", -np " + std::to_string(Np));
  check(All.size() == Size, R + std::to_string(All.size()) + " values");
  for (unsigned I = 0; I < All.size(); ++I)
    check(All[I] == bytesOf(I, Round),
          R + "rank " + std::to_string(I) + "'s bytes are not its own");
}

int exchange(long Np) {
  long EnvRank = envNumber("OMPI_COMM_WORLD_RANK", "PMIX_RANK");
  long EnvSize = envNumber("OMPI_COMM_WORLD_SIZE", nullptr);
  check(launchedByPmix(), "launchedByPmix() is false under mpirun");
  check(EnvRank >= 0 && EnvSize > 0, "the launcher names no rank and size");
  if (Failures)
    return 1;
  // Two contexts of one process each exchange; a later exchange must see
  // the later values, never what an earlier one left.
  auto Start = std::chrono::steady_clock::now();
  exchangeRound(0, EnvRank, EnvSize, Np);
  double FirstMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count();
  exchangeRound(1, EnvRank, EnvSize, Np);
  pmixFinalize();
  pmixFinalize();
  pmixFinalize(); // one too many: nothing
  // A context created after every earlier one ended exchanges too; no
  // rank looks gone to the server meanwhile. PMIx ends at exit, which
  // mpirun checks (a process that started PMIx and exits without ending
  // it fails the job).
  exchangeRound(2, EnvRank, EnvSize, Np);
  pmixFinalize();
  if (!Failures && EnvRank == 0)
    // Measured, not checked: the first includes waiting for the last rank
    // to start.
    std::printf("pmix_test: %ld ranks exchanged 64 bytes each, three times; the first "
                "exchange took %.1f ms on rank 0\n",
                Np, FirstMs);
  return Failures ? 1 : 0;
}

int mismatch() {
  long EnvRank = envNumber("OMPI_COMM_WORLD_RANK", "PMIX_RANK");
  unsigned Rank = 0, Size = 0;
  std::vector<std::vector<uint8_t>> All;
  std::string Why;
  tc_status_t S = pmixAllgather(bytesOf(static_cast<unsigned>(EnvRank), 0, EnvRank == 1 ? 65 : 64),
                                Rank, Size, All, Why);
  check(S == TC_ERR_IO, "a value of another size is accepted: " + std::to_string(S));
  // Rank 1 sees rank 0's 64 bytes first; every other rank sees rank 1's 65.
  std::string Named = EnvRank == 1 ? "rank 0 put 64 bytes" : "rank 1 put 65 bytes";
  check(Why.find(Named) != std::string::npos, "the error does not say \"" + Named + "\": " + Why);
  if (!Failures && EnvRank == 0)
    std::printf("pmix_test: %s\n", Why.c_str());
  return Failures ? 1 : 0;
}

int timeout(const std::string &Dir) {
  long EnvRank = envNumber("OMPI_COMM_WORLD_RANK", "PMIX_RANK");
  const char *Job = std::getenv("PMIX_NAMESPACE");
  std::string Done = Dir + "/timeout." + (Job ? Job : "none");
  unsigned Rank = 0, Size = 0;
  std::vector<std::vector<uint8_t>> All;
  std::string Why;
  if (EnvRank == 1) {
    // Alive, launched, but not exchanging until rank 0 is done (bounded by
    // the test's own time limit). It exchanges then, as mpirun wants every
    // process to have started PMIx if one did; whatever that gives.
    for (int I = 0; I < 6000 && access(Done.c_str(), F_OK) != 0; ++I)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    unlink(Done.c_str());
    tc_status_t S = pmixAllgather(bytesOf(1, 0), Rank, Size, All, Why);
    std::printf("pmix_test rank 1, late: %d %s\n", S, Why.c_str());
    if (S == TC_OK)
      pmixFinalize();
    return 0;
  }
  tc_status_t S = pmixAllgather(bytesOf(0, 0), Rank, Size, All, Why);
  check(S == TC_ERR_IO, "an exchange without rank 1 did not fail: " + std::to_string(S));
  check(Why.find("not every rank") != std::string::npos, "not a timeout: " + Why);
  if (FILE *F = std::fopen(Done.c_str(), "w"))
    std::fclose(F);
  if (!Failures)
    std::printf("pmix_test: %s\n", Why.c_str());
  return Failures ? 1 : 0;
}

/// PMIx's variables taken out of the environment, or set to a server that
/// is not there.
void clearPmixEnvironment() {
  std::vector<std::string> Names;
  for (char **E = environ; *E; ++E)
    if (std::strncmp(*E, "PMIX_", 5) == 0)
      Names.emplace_back(*E, std::strchr(*E, '=') - *E);
  for (const std::string &N : Names)
    unsetenv(N.c_str());
}

void expectFallback(const std::string &Case, const char *WhyHas) {
  unsigned Rank = 0, Size = 0;
  std::vector<std::vector<uint8_t>> All;
  std::string Why;
  tc_status_t S = pmixAllgather(bytesOf(0, 0), Rank, Size, All, Why);
  check(S == TC_ERR_IO, Case + ": the exchange gives " + std::to_string(S));
  check(Why.find(WhyHas) != std::string::npos,
        Case + ": the reason does not say \"" + WhyHas + "\": " + Why);
  std::printf("pmix_test: %s: %s\n", Case.c_str(), Why.c_str());
}

#ifdef TWOCHAINS_HAVE_PMIX
const char *const NotLaunched = "not launched by a PMIx server";
const char *const ServerGone = "PMIx_Init";
#else
const char *const NotLaunched = "built without PMIx";
const char *const ServerGone = "built without PMIx";
#endif

int alone() {
  Me = "alone";
  // As CTest started it: no PMIx server anywhere.
  check(!launchedByPmix(), "launchedByPmix() is true without mpirun");
  expectFallback("not launched", NotLaunched);
  // A namespace and rank without a server's address are no server either.
  clearPmixEnvironment();
  setenv("PMIX_NAMESPACE", "twochains-test", 1);
  setenv("PMIX_RANK", "0", 1);
  check(!launchedByPmix(), "launchedByPmix() is true without a server's address");
  expectFallback("no server address", NotLaunched);
  // A server named but gone (a process that outlived its mpirun): PMIx
  // is tried and fails, at once.
  setenv("PMIX_SERVER_URI4", "twochains-test.0;tcp4://127.0.0.1:1", 1);
  setenv("PMIX_SERVER_URI41", "twochains-test.0;tcp4://127.0.0.1:1", 1);
  check(launchedByPmix(), "launchedByPmix() is false with a server named");
  expectFallback("server gone", ServerGone);
  pmixFinalize(); // nothing was initialised: nothing to end
  return Failures ? 1 : 0;
}

} // namespace

int main(int Argc, char **Argv) {
  if (const char *R = std::getenv("OMPI_COMM_WORLD_RANK"))
    Me = R;
  std::string Mode = Argc > 1 ? Argv[1] : "";
  if (Mode == "exchange" && Argc == 3)
    return exchange(std::strtol(Argv[2], nullptr, 10));
  if (Mode == "mismatch")
    return mismatch();
  if (Mode == "timeout" && Argc == 3)
    return timeout(Argv[2]);
  if (Mode == "alone")
    return alone();
  std::fprintf(stderr, "usage: pmix_test exchange <np> | mismatch | timeout <dir> | alone\n");
  return 2;
}
