//===- RankProof.cpp - A job's rank proved in the handshake ---------------===//
//
// A rank of a job proves its rank in its HELLO or WELCOME with its Ed25519
// signature of the handshake, checked with the key its address blob
// published: a rank is proved, not claimed (Handshake.cpp).
//
//===----------------------------------------------------------------------===//
#include "wireup/RankProof.h"
#include "wireup/PeerWireup.h"

#include "wire/Formats.h"

#include "Signature.h"

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

bool twochains::rt::proveRank(const CoreContext *Ctx, const char *Label, size_t LabelSize,
                              const tc_peer *Peer, uint32_t For, Offer &O) {
  O.ProofFor = For;
  std::vector<uint8_t> T = rankProofText(Label, LabelSize, O.Job, O.JobRank, For, Peer);
  return Ctx->Wireup->Job.RankKey.sign(T.data(), T.size(), O.RankProof);
}

bool twochains::rt::rankProved(const CoreContext *Ctx, const char *Label, size_t LabelSize,
                               const tc_peer *Peer, const Offer &O, uint32_t For,
                               std::string &Why) {
  if (O.JobRank >= Ctx->Wireup->Job.RankKeys.size()) {
    Why = "claims rank " + std::to_string(O.JobRank) + " of a job of " +
          std::to_string(Ctx->Wireup->Job.RankKeys.size());
    return false;
  }
  std::vector<uint8_t> T = rankProofText(Label, LabelSize, O.Job, O.JobRank, For, Peer);
  if (!twochains::format::verifyEd25519(Ctx->Wireup->Job.RankKeys[O.JobRank].data(), T.data(),
                                        T.size(), O.RankProof)) {
    Why = "claims rank " + std::to_string(O.JobRank) +
          " and does not prove it (no signature of this handshake by that rank's key)";
    return false;
  }
  return true;
}
