//===- JobIdentity.h - Who this context is in a job -----------------------===//
//
// The job a context joined and its rank in it, which every offer carries
// (wireup reads it), and the keys that prove ranks: this context's own,
// made with the context (its public half is in its address blob), and
// every rank's public key from the job's blobs. job/ fills it in at
// tc_job_join; below wireup, so that the handshake names no job layer.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_JOBIDENTITY_H
#define TWOCHAINS_RUNTIME_CORE_JOBIDENTITY_H

#include "wire/Auth.h"
#include "wire/Wire.h"

#include "Signature.h"

#include <array>
#include <cstdint>
#include <vector>

namespace twochains::rt {

struct JobIdentity {
  /// The job's identity (0: none joined) and this process's rank in it.
  uint64_t Id = 0;
  uint32_t Rank = NoJobRank;
  /// A HELLO or WELCOME that claims rank r must carry r's proof of the
  /// handshake's nonces (wireup/RankProof.cpp): a rank is proved, not
  /// claimed.
  format::Ed25519KeyPair RankKey;
  std::vector<std::array<uint8_t, RankKeySize>> RankKeys;
  /// The MAC key this rank shares with each rank, agreed at their first
  /// handshake, and the published key it was agreed with: a rank's key
  /// that changes is agreed afresh.
  struct PairKey {
    std::array<uint8_t, RankKeySize> With = {};
    JobKey Key;
  };
  std::vector<PairKey> PairKeys;
};

} // namespace twochains::rt

#endif
