//===- Job.cpp - Joining a job: ranks and their addresses -----------------===//
//
// tc_job_join gives every rank every rank's address blob (Bootstrap.cpp's
// format, each in a slot of JobBlobSlot bytes so that an allgather moves
// one size): from PMIx when a PMIx server launched the process (mpirun,
// prterun, srun), from the application's allgather (MPI_Allgather: see
// twochains/mpi.h), or from blobs the application exchanged itself. Each
// blob carries its rank's public rank key (made with its context), with
// which the handshake checks a claim of that rank. No connection is made
// here: each is made when a rank is first used.
//
//===----------------------------------------------------------------------===//
#include "job/Job.h"
#include "job/Pmix.h"

#include "base/Log.h"
#include "core/Lock.h"
#include "wireup/Wireup.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <unistd.h>

using namespace twochains::rt;

/// A blob in the allgather: its size (u32, little-endian), then the blob
/// (its addresses and rank key).
static constexpr size_t JobBlobSlot = 4 + MaxAddressBlobSize;

namespace {

/// FNV-1a: the job's identity only tells jobs apart (what authenticates a
/// rank is the key); it must be the same on every rank, which it is, being
/// made from the same bytes.
uint64_t jobIdentity(const std::vector<std::vector<uint8_t>> &Blobs) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (const auto &B : Blobs) {
    for (uint8_t C : B)
      H = (H ^ C) * 0x100000001b3ull;
    H = (H ^ 0xff) * 0x100000001b3ull;
  }
  return H ? H : 1;
}

/// Every rank's addresses and rank key. A blob without a key is refused:
/// its rank could not prove its rank, and a job runs one build.
tc_status_t parseBlobs(CoreContext *Ctx, uint32_t Rank,
                       const std::vector<std::vector<uint8_t>> &Blobs) {
  if (Rank >= Blobs.size())
    return TC_ERR_INVALID_PARAM;
  std::vector<RouteTarget> Ranks(Blobs.size());
  std::vector<std::array<uint8_t, RankKeySize>> Keys(Blobs.size());
  for (size_t R = 0; R < Blobs.size(); ++R) {
    std::string Why;
    std::vector<uint8_t> Key;
    if (tc_status_t St = parseAddressBlob(Blobs[R].data(), Blobs[R].size(), Ranks[R].Port,
                                          Ranks[R].Addresses, Key, Ranks[R].WorkerAddress, Why);
        St != TC_OK) {
      logError("tc_job_join: the address of rank " + std::to_string(R) + ": " + Why +
               (St == TC_ERR_BAD_VERSION ? " (every rank of a job runs the same build)" : ""));
      return St;
    }
    if (Ranks[R].Addresses.empty()) {
      logError("tc_job_join: rank " + std::to_string(R) + " names no address");
      return TC_ERR_BAD_LENGTH;
    }
    if (Key.size() != RankKeySize) {
      logError("tc_job_join: the address of rank " + std::to_string(R) +
               " carries no rank key, without which it cannot prove its rank (" +
               (R == Rank ? std::string("libcrypto could not make one here")
                          : "its libcrypto could not make one, or it is an older build: "
                            "every rank of a job runs the same build") +
               ")");
      return TC_ERR_BAD_LENGTH;
    }
    std::copy(Key.begin(), Key.end(), Keys[R].begin());
    Ranks[R].Rank = uint32_t(R);
  }
  // Its own blob (given by the application, on the blobs path) must be
  // this context's: no other proves this rank.
  if (!Ctx->Wireup->Job.RankKey.present() || Keys[Rank] != Ctx->Wireup->Job.RankKey.publicKey()) {
    logError("tc_job_join: the address given for this rank (" + std::to_string(Rank) +
             ") is not this context's: its rank key differs (pass the blob of this "
             "context's tc_context_address)");
    return TC_ERR_INVALID_PARAM;
  }
  Ctx->Job->Ranks = std::move(Ranks);
  Ctx->Wireup->Job.RankKeys = std::move(Keys);
  return TC_OK;
}

/// This rank's blob in its slot.
std::vector<uint8_t> slotOf(const std::vector<uint8_t> &Blob) {
  std::vector<uint8_t> Slot(JobBlobSlot, 0);
  uint32_t Size = uint32_t(Blob.size());
  for (int I = 0; I < 4; ++I)
    Slot[I] = uint8_t(Size >> (8 * I));
  std::memcpy(Slot.data() + 4, Blob.data(), Blob.size());
  return Slot;
}

/// A slot from another rank, checked: its size inside the slot.
bool blobOfSlot(const uint8_t *Slot, std::vector<uint8_t> &Blob) {
  uint32_t Size = 0;
  for (int I = 0; I < 4; ++I)
    Size |= uint32_t(Slot[I]) << (8 * I);
  if (Size > JobBlobSlot - 4)
    return false;
  Blob.assign(Slot + 4, Slot + 4 + Size);
  return true;
}

/// Where this rank listens, unless the application listens already: every
/// interface where a key guards the port (or the context is insecure by
/// choice), else loopback, where a job without a key may run.
tc_status_t listenForJob(CoreContext *Ctx, const char *Address) {
  if (Ctx->Wireup->Listener)
    return TC_OK;
  if (!Address)
    Address = Ctx->Key.present() || (Ctx->Flags & TC_CONTEXT_INSECURE) ? "" : "127.0.0.1";
  return tc_listen(reinterpret_cast<tc_context_t *>(Ctx), Address, 0);
}

tc_status_t myBlob(CoreContext *Ctx, std::vector<uint8_t> &Blob) {
  size_t Size = 0;
  auto *Api = reinterpret_cast<const tc_context_t *>(Ctx);
  if (tc_status_t St = tc_context_address(Api, nullptr, &Size); St != TC_OK)
    return St;
  Blob.resize(Size);
  return tc_context_address(Api, Blob.data(), &Size);
}

tc_status_t exchange(CoreContext *Ctx, const tc_job_params_t *P, uint32_t &Rank,
                     std::vector<std::vector<uint8_t>> &Blobs) {
  bool Given = P && (P->allgather || P->blobs);
  if (Given && (P->size == 0 || P->size > MaxJobRanks || P->rank >= P->size)) {
    logError("tc_job_join: rank " + std::to_string(P->rank) + " of a job of " +
             std::to_string(P->size) + " ranks");
    return TC_ERR_INVALID_PARAM;
  }
  if (P && P->blobs) {
    if (!P->blob_sizes)
      return TC_ERR_INVALID_PARAM;
    Rank = P->rank;
    Blobs.resize(P->size);
    for (uint32_t R = 0; R < P->size; ++R) {
      if (!P->blobs[R] || P->blob_sizes[R] > MaxAddressBlobSize)
        return TC_ERR_INVALID_PARAM;
      auto *B = static_cast<const uint8_t *>(P->blobs[R]);
      Blobs[R].assign(B, B + P->blob_sizes[R]);
    }
    return TC_OK;
  }
  std::vector<uint8_t> Mine;
  if (tc_status_t St = listenForJob(Ctx, P ? P->listen_address : nullptr); St != TC_OK)
    return St;
  if (tc_status_t St = myBlob(Ctx, Mine); St != TC_OK)
    return St;
  std::vector<uint8_t> Slot = slotOf(Mine);
  std::vector<std::vector<uint8_t>> Slots;
  if (P && P->allgather) {
    Rank = P->rank;
    std::vector<uint8_t> All(size_t(P->size) * JobBlobSlot);
    if (P->allgather(Slot.data(), All.data(), JobBlobSlot, P->allgather_arg) != 0) {
      logError("tc_job_join: the application's allgather failed");
      return TC_ERR_IO;
    }
    for (uint32_t R = 0; R < P->size; ++R)
      Slots.emplace_back(All.begin() + R * JobBlobSlot, All.begin() + (R + 1) * JobBlobSlot);
  } else {
    if (!launchedByPmix()) {
      logError("tc_job_join: this process was not launched by a PMIx server (mpirun, "
               "prterun, srun), and no allgather or address blobs were given");
      return TC_ERR_INVALID_PARAM;
    }
    unsigned PmixRank = 0, PmixSize = 0;
    std::string Why;
    if (pmixAllgather(Slot, PmixRank, PmixSize, Slots, Why) != TC_OK) {
      logError("tc_job_join: PMIx: " + Why);
      return TC_ERR_IO;
    }
    if (PmixSize == 0 || PmixSize > MaxJobRanks || PmixRank >= PmixSize)
      return TC_ERR_IO;
    Rank = PmixRank;
  }
  Blobs.resize(Slots.size());
  for (size_t R = 0; R < Slots.size(); ++R)
    if (Slots[R].size() != JobBlobSlot || !blobOfSlot(Slots[R].data(), Blobs[R])) {
      logError("tc_job_join: rank " + std::to_string(R) + "'s address does not fit its slot");
      return TC_ERR_BAD_LENGTH;
    }
  return TC_OK;
}

} // namespace

/// A job's rings by default: at most the context's default (64 slots), at
/// least 16. More did not help: 512 slots made examples/graph (8 ranks,
/// SCALE 14) 2-10x slower here, as rings that go cold between levels give
/// back and fault in again pages of slots written once.
constexpr uint32_t JobRingMinSlots = 16;

/// The ring memory a rank's rings may take at most, for all of its ranks:
/// 256 MiB, or a sixteenth of the host's memory if less.
static uint64_t jobRingBudget() {
  uint64_t Budget = 256ull << 20;
  long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
  if (Pages > 0 && PageSize > 0)
    Budget = std::min<uint64_t>(Budget, uint64_t(Pages) * uint64_t(PageSize) / 16);
  return Budget;
}

/// Rings for a job, unless the application chose them (parameters,
/// TC_SLOTS, TC_SLOT_SIZE): halved from the default while a ring to every
/// rank would take more than the budget, down to JobRingMinSlots. A job of
/// 1,024 ranks keeps 64 slots of 4 KiB within 256 MiB.
static void sizeRingsForJob(CoreContext *Ctx) {
  if (Ctx->SlotsChosen || !Ctx->Accepted.empty() || !Ctx->Connected.empty() ||
      !Ctx->Connecting.empty())
    return; // rings made already keep their shape
  uint64_t Budget = jobRingBudget();
  uint32_t Slots = Ctx->Slots;
  while (Slots > JobRingMinSlots && uint64_t(Slots) * Ctx->SlotSize * Ctx->Job->JobSize > Budget)
    Slots /= 2;
  if (Slots == Ctx->Slots)
    return;
  Ctx->Slots = Slots;
  if (!Ctx->BatchChosen)
    Ctx->Batch = std::max(1u, Slots / 4);
}

extern "C" tc_status_t tc_job_join(tc_context_t *Api, const tc_job_params_t *Params) {
  auto *Ctx = coreOf(Api);
  if (!Ctx || (Params && Params->version != TC_JOB_PARAMS_VERSION) || ThreadRunningJamOf == Ctx)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  if (Ctx->Job->Joined) {
    logError("tc_job_join: this context has joined a job already");
    return TC_ERR_INVALID_PARAM;
  }
  uint32_t Rank = 0;
  std::vector<std::vector<uint8_t>> Blobs;
  if (tc_status_t St = exchange(Ctx, Params, Rank, Blobs); St != TC_OK)
    return St;
  if (tc_status_t St = parseBlobs(Ctx, Rank, Blobs); St != TC_OK)
    return St;
  if (Params && Params->connect_timeout_ms > 0)
    Ctx->Job->ConnectTimeoutNs = msToNs(uint64_t(Params->connect_timeout_ms));
  Ctx->Job->JobSize = uint32_t(Blobs.size());
  Ctx->Wireup->Job.Rank = Rank;
  Ctx->Wireup->Job.Id = jobIdentity(Blobs);
  Ctx->Job->Joined = true;
  // Ranks on one host connect from one address, all at once: unless the
  // application chose the limit, each may have its place (up to the limit
  // of all, max_startups).
  if (!Ctx->Wireup->StartupsPerAddressChosen)
    Ctx->Wireup->MaxStartupsPerAddress = std::max(
        Ctx->Wireup->MaxStartupsPerAddress, std::min(Ctx->Job->JobSize, Ctx->Wireup->MaxStartups));
  sizeRingsForJob(Ctx);
  Ctx->Job->Handles = std::make_unique<std::atomic<tc_peer *>[]>(Ctx->Job->JobSize);
  Ctx->Job->Quiesce.ReportWave.assign(Ctx->Job->JobSize, -1);
  Ctx->Job->Quiesce.Sent.assign(Ctx->Job->JobSize, 0);
  Ctx->Job->Quiesce.Done.assign(Ctx->Job->JobSize, 0);
  Ctx->Job->Quiesce.Unchanged.assign(Ctx->Job->JobSize, 0);
  logInfo("joined a job of " + std::to_string(Ctx->Job->JobSize) + " ranks as rank " +
          std::to_string(Rank) + "; rings of " + std::to_string(Ctx->Slots) + " slots of " +
          std::to_string(Ctx->SlotSize) + " bytes");
  return TC_OK;
}

extern "C" tc_status_t tc_job_rank(const tc_context_t *Api, unsigned *Rank, unsigned *Size) {
  const auto *Ctx = coreOf(Api);
  if (!Ctx || !Ctx->Job->Joined)
    return TC_ERR_INVALID_PARAM;
  if (Rank)
    *Rank = Ctx->Wireup->Job.Rank;
  if (Size)
    *Size = Ctx->Job->JobSize;
  return TC_OK;
}

extern "C" tc_status_t tc_job_peer(tc_context_t *Api, unsigned Rank, tc_peer_t **Out) {
  auto *Ctx = coreOf(Api);
  if (!Ctx || !Out || !Ctx->Job->Joined || Rank >= Ctx->Job->JobSize)
    return TC_ERR_INVALID_PARAM;
  // A handle whose connection was started is the rank's for the context's
  // life: found without the context's lock, which a program that asks
  // for it at every send (as the docs' examples do) would otherwise take
  // and give back per message (30 % of a BFS's time at 8 bytes a visit).
  if (tc_peer *Handle = Ctx->Job->Handles ? Ctx->Job->Handles[Rank].load(std::memory_order_acquire)
                                          : nullptr) {
    *Out = Handle;
    return TC_OK;
  }
  // A jam's own calls hold the context already (tc_jam_forward_rank).
  std::unique_lock<std::recursive_mutex> Guard(Ctx->Lock, std::defer_lock);
  if (ThreadRunningJamOf != Ctx)
    Guard.lock();
  *Out = rankHandle(Ctx, Rank);
  return TC_OK;
}

ucs_status_t twochains::rt::setupJob(CoreContext *Ctx) {
  if (ucs_status_t St = setupRankEndpoints(Ctx); St != UCS_OK)
    return St;
  if (ucs_status_t St = setupRoutes(Ctx); St != UCS_OK)
    return St;
  return setupQuiesce(Ctx);
}
