//===- JobRanks.h - Contexts made ranks of one job by hand ----------------===//
//
// What tc_job_join leaves a context with (its job, its rank, every rank's
// published key and, if given, address), set without a launcher, for
// tests of what a connection may claim and what a rank is charged for.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_TEST_UNIT_JOBRANKS_H
#define TWOCHAINS_TEST_UNIT_JOBRANKS_H

#include "context/Context.h"
#include "job/JobContext.h"
#include "wire/Wire.h"

#include <arpa/inet.h>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

namespace twochains::rt::test {

inline constexpr uint64_t TestJob = 0x7e57'10b5'0000'0001ull;

using RankKey = std::array<uint8_t, RankKeySize>;

/// The public rank key a context publishes with its address.
inline RankKey publishedKey(tc_context_t *Api) {
  return coreOf(Api)->Wireup->Job.RankKey.publicKey();
}

/// The keys the contexts publish, rank by rank in the order given.
inline std::vector<RankKey> keysOf(std::initializer_list<tc_context_t *> Ranks) {
  std::vector<RankKey> Keys;
  for (tc_context_t *Ctx : Ranks)
    Keys.push_back(publishedKey(Ctx));
  return Keys;
}

/// The control worker address a listening context publishes in its blob
/// (empty if it has none, or does not listen).
inline std::vector<uint8_t> publishedWorker(tc_context_t *Api) {
  size_t Size = 0;
  if (tc_context_address(Api, nullptr, &Size) != TC_OK)
    return {};
  std::vector<uint8_t> Blob(Size), Key, Worker;
  std::vector<uint32_t> Addresses;
  uint16_t Port = 0;
  std::string Why;
  if (tc_context_address(Api, Blob.data(), &Size) != TC_OK ||
      parseAddressBlob(Blob.data(), Size, Port, Addresses, Key, Worker, Why) != TC_OK)
    return {};
  return Worker;
}

/// Ctx as rank Rank of a job whose ranks published Keys (what tc_job_join
/// sets from their blobs); rank R listens on 127.0.0.1:Ports[R], if given,
/// and its control worker is at Workers[R], if given.
inline void makeRank(tc_context_t *Api, uint32_t Rank, const std::vector<RankKey> &Keys,
                     const std::vector<uint16_t> &Ports = {},
                     const std::vector<std::vector<uint8_t>> &Workers = {}) {
  auto *Ctx = coreOf(Api);
  std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
  Ctx->Wireup->Job.Id = TestJob;
  Ctx->Wireup->Job.Rank = Rank;
  Ctx->Job->JobSize = uint32_t(Keys.size());
  Ctx->Job->Joined = true;
  Ctx->Wireup->Job.RankKeys = Keys;
  Ctx->Job->Ranks.resize(Keys.size());
  for (uint32_t R = 0; R < Keys.size(); ++R) {
    Ctx->Job->Ranks[R].Rank = R;
    if (R < Ports.size() && Ports[R]) {
      Ctx->Job->Ranks[R].Addresses = {htonl(INADDR_LOOPBACK)};
      Ctx->Job->Ranks[R].Port = Ports[R];
    }
    if (R < Workers.size())
      Ctx->Job->Ranks[R].WorkerAddress = Workers[R];
  }
}

} // namespace twochains::rt::test

#endif
