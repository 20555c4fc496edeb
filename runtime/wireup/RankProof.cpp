//===- RankProof.cpp - A job's rank proved in the handshake ---------------===//
//
// A rank of a job proves its rank in its HELLO or WELCOME, checked with
// the key its address blob published: a rank is proved, not claimed
// (Handshake.cpp). Proved to a rank it knows (a job's own connects, and
// every WELCOME to a rank), it is a MAC under the secret the two ranks'
// keys agree, made once per pair: a signature cost its checker three
// times what agreeing costs each side, and a 64-rank job's first round
// made and checked 8,000 of them. Proved to whoever it reached (a connect
// to an address the application named), it is the rank key's Ed25519
// signature, which anyone can check.
//
//===----------------------------------------------------------------------===//
#include "wireup/RankProof.h"
#include "wireup/PeerWireup.h"

#include "wire/Formats.h"

#include "Signature.h"

#include <algorithm>
#include <openssl/crypto.h>

using namespace twochains::rt;

/// What a rank signs to prove its rank in an offer: the label (HELLO and
/// WELCOME differ, so that neither passes for the other), the job, the
/// rank, whom the proof is for, and both nonces, the receiver's fresh: a
/// proof is good for one handshake, and one side of it.
static std::vector<uint8_t> rankProofText(const char *Label, size_t LabelSize, uint64_t Job,
                                          uint32_t Rank, uint32_t For, const tc_peer *Peer) {
  std::vector<uint8_t> T(Label, Label + LabelSize);
  auto Put = [&](uint64_t V, int Bytes) {
    for (int I = 0; I < Bytes; ++I)
      T.push_back(uint8_t(V >> (8 * I)));
  };
  Put(Job, 8);
  Put(Rank, 4);
  Put(For, 4);
  T.insert(T.end(), Peer->Wireup->ClientNonce, Peer->Wireup->ClientNonce + NonceSize);
  T.insert(T.end(), Peer->Wireup->ServerNonce, Peer->Wireup->ServerNonce + NonceSize);
  return T;
}

/// The MAC key this rank shares with Rank: HMAC(the keys' X25519 secret,
/// label, job, both ranks' keys in rank order), agreed at the pair's first
/// handshake and kept. False if the keys agree nothing (libcrypto failed,
/// or Rank's published key is of small order).
static bool pairKey(CoreContext *Ctx, uint32_t Rank, const JobKey *&Out) {
  JobIdentity &Job = Ctx->Wireup->Job;
  if (Job.PairKeys.size() != Job.RankKeys.size())
    Job.PairKeys.resize(Job.RankKeys.size());
  JobIdentity::PairKey &Pair = Job.PairKeys[Rank];
  if (!Pair.Key.present() || Pair.With != Job.RankKeys[Rank]) {
    static const char Label[] = "tc-rank-v2 pair";
    JobKey Secret;
    Secret.Bytes.resize(32);
    if (Job.Rank >= Job.RankKeys.size() ||
        !Job.RankKey.agree(Job.RankKeys[Rank].data(), Secret.Bytes.data()))
      return false;
    const auto &Low = Job.RankKeys[std::min(Rank, Job.Rank)];
    const auto &High = Job.RankKeys[std::max(Rank, Job.Rank)];
    Pair.Key.Bytes.resize(MacSize);
    bool Made = hmacSha256(Secret,
                           {{Label, sizeof Label},
                            {&Job.Id, sizeof Job.Id},
                            {Low.data(), Low.size()},
                            {High.data(), High.size()}},
                           Pair.Key.Bytes.data());
    OPENSSL_cleanse(Secret.Bytes.data(), Secret.Bytes.size());
    if (!Made) { // kept for no later proof: the next tries again
      Pair.Key.Bytes.clear();
      return false;
    }
    Pair.With = Job.RankKeys[Rank];
  }
  Out = &Pair.Key;
  return true;
}

/// The proof a MAC makes: the MAC in the field's first half, zeros after.
static bool macProof(CoreContext *Ctx, uint32_t Other, const std::vector<uint8_t> &Text,
                     uint8_t Out[64]) {
  const JobKey *Key = nullptr;
  std::fill(Out, Out + 64, uint8_t(0));
  return pairKey(Ctx, Other, Key) && hmacSha256(*Key, {{Text.data(), Text.size()}}, Out);
}

bool twochains::rt::proveRank(CoreContext *Ctx, const char *Label, size_t LabelSize,
                              const tc_peer *Peer, uint32_t For, Offer &O) {
  O.ProofFor = For;
  std::vector<uint8_t> T = rankProofText(Label, LabelSize, O.Job, O.JobRank, For, Peer);
  if (For == NoJobRank || For >= Ctx->Wireup->Job.RankKeys.size())
    return Ctx->Wireup->Job.RankKey.sign(T.data(), T.size(), O.RankProof);
  return macProof(Ctx, For, T, O.RankProof);
}

bool twochains::rt::rankProved(CoreContext *Ctx, const char *Label, size_t LabelSize,
                               const tc_peer *Peer, const Offer &O, uint32_t For,
                               std::string &Why) {
  if (O.JobRank >= Ctx->Wireup->Job.RankKeys.size()) {
    Why = "claims rank " + std::to_string(O.JobRank) + " of a job of " +
          std::to_string(Ctx->Wireup->Job.RankKeys.size());
    return false;
  }
  std::vector<uint8_t> T = rankProofText(Label, LabelSize, O.Job, O.JobRank, For, Peer);
  bool Proved;
  if (For == NoJobRank) {
    Proved = twochains::format::verifyEd25519(Ctx->Wireup->Job.RankKeys[O.JobRank].data(), T.data(),
                                              T.size(), O.RankProof);
  } else {
    // Only this rank and O.JobRank hold the pair's key: a proof meant for
    // another rank is no proof here.
    uint8_t Expected[64];
    Proved = For == Ctx->Wireup->Job.Rank && macProof(Ctx, O.JobRank, T, Expected) &&
             equalMacs(Expected, O.RankProof) && equalMacs(Expected + 32, O.RankProof + 32);
  }
  if (!Proved) {
    Why = "claims rank " + std::to_string(O.JobRank) +
          " and does not prove it (no proof of this handshake by that rank's key)";
    return false;
  }
  return true;
}
