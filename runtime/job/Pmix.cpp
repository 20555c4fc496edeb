//===- Pmix.cpp - A job's ranks from the PMIx server that launched it -----===//
//
// The exchange is PMIx's modex, as Open MPI, OpenSHMEM and UCC run it: each
// rank puts its bytes (PMIX_GLOBAL: for ranks on every node), commits them
// to its local server, and fences with PMIX_COLLECT_DATA, after which every
// rank's value is in the local store and PMIx_Get of (namespace, rank)
// answers without another round trip. The job's size is PMIX_JOB_SIZE of
// the namespace's wildcard rank.
//
// Checked with Debian 12's Open MPI 4.1.4 (mpirun is ORTE, its PMIx server
// the libpmix2 4.2.2 that this file's client is too), test/job.
//
//===----------------------------------------------------------------------===//
#include "job/Pmix.h"

#include <cstdlib>
#include <cstring>
#include <atomic>
#include <mutex>

#ifdef TWOCHAINS_HAVE_PMIX
#include <pmix.h>
#endif

extern char **environ;

using namespace twochains::rt;

namespace {

/// What the server's environment must name: the namespace and rank this
/// process is, and where the server listens (PMIX_SERVER_URI, ..URI2,
/// ..URI21, ..URI3, ..URI4, ..URI41: one per protocol version it speaks).
bool serverInEnvironment() {
  if (!std::getenv("PMIX_NAMESPACE") || !std::getenv("PMIX_RANK"))
    return false;
  static const char Uri[] = "PMIX_SERVER_URI";
  for (char **E = environ; E && *E; ++E)
    if (std::strncmp(*E, Uri, sizeof(Uri) - 1) == 0)
      return true;
  return false;
}

} // namespace

bool twochains::rt::launchedByPmix() { return serverInEnvironment(); }

#ifndef TWOCHAINS_HAVE_PMIX

tc_status_t twochains::rt::pmixAllgather(const std::vector<uint8_t> &, unsigned &, unsigned &,
                                         std::vector<std::vector<uint8_t>> &, std::string &Why) {
  Why = "built without PMIx (libpmix-dev was not found at configure time)";
  return TC_ERR_IO;
}

void twochains::rt::pmixFinalize() {}

#else

namespace {

/// A fence waits for every rank of the job to reach it; one that never
/// does (it failed before, or it bootstraps otherwise) must not hold the
/// others for ever. Ranks starting on shared cores, each creating its
/// context first, can arrive far apart, hence generous. TC_PMIX_TIMEOUT_S
/// (1 to 3600) changes it. The server keeps the bound (PMIX_TIMEOUT):
/// ORTE's answers PMIX_ERR_TIMEOUT.
constexpr int DefaultFenceTimeoutS = 120;
/// More ranks than any job this runtime could connect: a larger size from
/// the server is not believed.
constexpr uint32_t MaxJobSize = 1u << 22;

std::mutex Lock;
/// Whether PMIx_Init succeeded: then PMIx stays up until the process exits.
/// A rank that ended PMIx and started it again would, in between, count as
/// gone for the server, and a fence of the other ranks in that moment
/// fails (PMIX_ERR_PARTIAL_SUCCESS: seen with 16 ranks under Open MPI 4.1
/// when every rank exchanged, finalized and exchanged again). And mpirun
/// takes a process that started PMIx and exits without ending it for a
/// failed one, so an exit handler ends it.
std::atomic<bool> Initialised{false};
/// This process as PMIx names it, once Initialised.
pmix_proc_t Self;
/// Exchanges so far: each has its own key, so a later one never reads a
/// value an earlier one left.
unsigned Exchanges = 0;

void endPmixAtExit() {
  if (Initialised.exchange(false))
    PMIx_Finalize(nullptr, 0);
}

std::string pmixError(const char *What, pmix_status_t Status) {
  return std::string(What) + ": " + PMIx_Error_string(Status);
}

/// The job's size: PMIX_JOB_SIZE of the namespace (its wildcard rank).
bool jobSize(unsigned &Size, std::string &Why) {
  pmix_proc_t Job;
  PMIX_PROC_CONSTRUCT(&Job);
  PMIX_LOAD_PROCID(&Job, Self.nspace, PMIX_RANK_WILDCARD);
  pmix_value_t *Value = nullptr;
  pmix_status_t S = PMIx_Get(&Job, PMIX_JOB_SIZE, nullptr, 0, &Value);
  if (S != PMIX_SUCCESS) {
    Why = pmixError("PMIx_Get(PMIX_JOB_SIZE)", S);
    return false;
  }
  bool Ok = Value->type == PMIX_UINT32;
  uint32_t N = Ok ? Value->data.uint32 : 0;
  PMIX_VALUE_RELEASE(Value);
  if (!Ok || N == 0 || N > MaxJobSize || Self.rank >= N) {
    Why = "the PMIx server gives a job size of " + std::to_string(N) + " for rank " +
          std::to_string(Self.rank);
    return false;
  }
  Size = N;
  return true;
}

/// Puts Mine under Key and commits it to the local server.
bool putMine(const char *Key, const std::vector<uint8_t> &Mine, std::string &Why) {
  pmix_value_t Value;
  PMIX_VALUE_CONSTRUCT(&Value);
  Value.type = PMIX_BYTE_OBJECT;
  // PMIx_Put copies the bytes; Value only lends them, so it is not
  // destructed (which would free them).
  Value.data.bo.bytes = reinterpret_cast<char *>(const_cast<uint8_t *>(Mine.data()));
  Value.data.bo.size = Mine.size();
  pmix_status_t S = PMIx_Put(PMIX_GLOBAL, Key, &Value);
  if (S != PMIX_SUCCESS) {
    Why = pmixError("PMIx_Put", S);
    return false;
  }
  S = PMIx_Commit();
  if (S != PMIX_SUCCESS) {
    Why = pmixError("PMIx_Commit", S);
    return false;
  }
  return true;
}

int fenceTimeoutS() {
  const char *Env = std::getenv("TC_PMIX_TIMEOUT_S");
  if (!Env || !*Env)
    return DefaultFenceTimeoutS;
  char *End = nullptr;
  long S = std::strtol(Env, &End, 10);
  return *End == 0 && S >= 1 && S <= 3600 ? static_cast<int>(S) : DefaultFenceTimeoutS;
}

/// Every rank of the namespace (no procs: the caller's whole namespace),
/// values collected, bounded by fenceTimeoutS().
bool fence(std::string &Why) {
  pmix_info_t Info[2];
  PMIX_INFO_CONSTRUCT(&Info[0]);
  PMIX_INFO_CONSTRUCT(&Info[1]);
  bool Collect = true;
  int Timeout = fenceTimeoutS();
  PMIX_INFO_LOAD(&Info[0], PMIX_COLLECT_DATA, &Collect, PMIX_BOOL);
  PMIX_INFO_LOAD(&Info[1], PMIX_TIMEOUT, &Timeout, PMIX_INT);
  pmix_status_t S = PMIx_Fence(nullptr, 0, Info, 2);
  PMIX_INFO_DESTRUCT(&Info[0]);
  PMIX_INFO_DESTRUCT(&Info[1]);
  if (S == PMIX_ERR_TIMEOUT) {
    Why = "PMIx_Fence: not every rank of the job came in " + std::to_string(Timeout) +
          " s (TC_PMIX_TIMEOUT_S)";
    return false;
  }
  if (S != PMIX_SUCCESS) {
    Why = pmixError("PMIx_Fence", S);
    return false;
  }
  return true;
}

/// Rank R's value under Key, which must be Length bytes.
bool getRank(const char *Key, unsigned R, size_t Length, std::vector<uint8_t> &Out,
             std::string &Why) {
  pmix_proc_t Peer;
  PMIX_PROC_CONSTRUCT(&Peer);
  PMIX_LOAD_PROCID(&Peer, Self.nspace, R);
  pmix_value_t *Value = nullptr;
  pmix_status_t S = PMIx_Get(&Peer, Key, nullptr, 0, &Value);
  if (S != PMIX_SUCCESS) {
    Why = pmixError(("PMIx_Get of rank " + std::to_string(R)).c_str(), S);
    return false;
  }
  bool Ok = Value->type == PMIX_BYTE_OBJECT && Value->data.bo.size == Length &&
            (Length == 0 || Value->data.bo.bytes);
  if (Ok)
    Out.assign(reinterpret_cast<const uint8_t *>(Value->data.bo.bytes),
               reinterpret_cast<const uint8_t *>(Value->data.bo.bytes) + Length);
  else
    Why = "rank " + std::to_string(R) + " put " +
          (Value->type == PMIX_BYTE_OBJECT
               ? std::to_string(Value->data.bo.size) + " bytes"
               : "a value of PMIx type " + std::to_string(Value->type)) +
          ", not " + std::to_string(Length) + " bytes as this rank";
  PMIX_VALUE_RELEASE(Value);
  return Ok;
}

/// The exchange itself, PMIx initialised.
bool exchange(const std::vector<uint8_t> &Mine, unsigned &Size,
              std::vector<std::vector<uint8_t>> &All, std::string &Why) {
  if (!jobSize(Size, Why))
    return false;
  std::string Key = "twochains.allgather." + std::to_string(Exchanges++);
  if (!putMine(Key.c_str(), Mine, Why) || !fence(Why))
    return false;
  All.assign(Size, {});
  for (unsigned R = 0; R < Size; ++R)
    if (!getRank(Key.c_str(), R, Mine.size(), All[R], Why))
      return false;
  return true;
}

} // namespace

tc_status_t twochains::rt::pmixAllgather(const std::vector<uint8_t> &Mine, unsigned &Rank,
                                         unsigned &Size, std::vector<std::vector<uint8_t>> &All,
                                         std::string &Why) {
  if (!serverInEnvironment()) {
    Why = "not launched by a PMIx server (no PMIX_NAMESPACE, PMIX_RANK and "
          "PMIX_SERVER_URI* in the environment)";
    return TC_ERR_IO;
  }
  std::lock_guard<std::mutex> G(Lock);
  if (!Initialised) {
    pmix_status_t S = PMIx_Init(&Self, nullptr, 0);
    if (S != PMIX_SUCCESS) {
      Why = pmixError("PMIx_Init", S);
      return TC_ERR_IO;
    }
    static bool Registered = false;
    if (!Registered)
      Registered = std::atexit(endPmixAtExit) == 0;
    Initialised = true;
  }
  std::vector<std::vector<uint8_t>> Got;
  unsigned N = 0;
  if (!exchange(Mine, N, Got, Why))
    return TC_ERR_IO;
  Rank = Self.rank;
  Size = N;
  All = std::move(Got);
  return TC_OK;
}

void twochains::rt::pmixFinalize() {
  // PMIx stays up until the process exits (Initialised says why); a
  // context's end only means this context needs it no more.
}

#endif
