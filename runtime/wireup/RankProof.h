//===- RankProof.h - A job's rank proved in the handshake -----------------===//
#ifndef TWOCHAINS_RUNTIME_WIREUP_RANKPROOF_H
#define TWOCHAINS_RUNTIME_WIREUP_RANKPROOF_H

#include "wire/Wire.h"
#include "wireup/WireupContext.h"

#include <string>

namespace twochains::rt {

/// A job's offer about to leave: its rank's proof, for For, under Label
/// (HELLO and WELCOME sign differently, so that neither passes for the
/// other). False if this side cannot sign (no key: libcrypto failed).
bool proveRank(const CoreContext *Ctx, const char *Label, size_t LabelSize, const tc_peer *Peer,
               uint32_t For, Offer &O);
/// Whether an offer that claims rank O.JobRank of this side's job proves
/// it: a rank of the job, its signature by that rank's published key, for
/// For. Why says what failed (after "it" or "the receiver").
bool rankProved(const CoreContext *Ctx, const char *Label, size_t LabelSize, const tc_peer *Peer,
                const Offer &O, uint32_t For, std::string &Why);

} // namespace twochains::rt

#endif
