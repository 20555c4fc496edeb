//===- RankProof.h - A job's rank proved in the handshake -----------------===//
#ifndef TWOCHAINS_RUNTIME_WIREUP_RANKPROOF_H
#define TWOCHAINS_RUNTIME_WIREUP_RANKPROOF_H

#include "wire/Wire.h"
#include "wireup/WireupContext.h"

#include <string>

namespace twochains::rt {

/// A job's offer about to leave: its rank's proof, for For, under Label
/// (HELLO and WELCOME prove differently, so that neither passes for the
/// other): a MAC under the key this rank shares with For, or a signature
/// when For is NoJobRank. False if this side cannot prove (no key:
/// libcrypto failed; For's published key agrees nothing).
bool proveRank(CoreContext *Ctx, const char *Label, size_t LabelSize, const tc_peer *Peer,
               uint32_t For, Offer &O);
/// Whether an offer that claims rank O.JobRank of this side's job proves
/// it: a rank of the job, its proof by that rank's published key, for For
/// (this rank: a MAC under the pair's key; NoJobRank: a signature). Why
/// says what failed (after "it" or "the receiver").
bool rankProved(CoreContext *Ctx, const char *Label, size_t LabelSize, const tc_peer *Peer,
                const Offer &O, uint32_t For, std::string &Why);

} // namespace twochains::rt

#endif
