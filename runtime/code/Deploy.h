//===- Deploy.h - Packages deployed into running peers --------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_DEPLOY_H
#define TWOCHAINS_RUNTIME_CODE_DEPLOY_H

#include "code/CodeContext.h"
#include "code/PeerCode.h"

#include <vector>

namespace twochains::rt {

/// Registers the handlers and housekeeping of deployments; removes what
/// deployments wrote (at the context's end, after the packages are gone).
ucs_status_t setupDeploy(CoreContext *Ctx);
void removeDeployments(CoreContext *Ctx);

/// What the other side's authenticated offer says of its code (wireup, as
/// it takes the offer): the package builds it holds (identity tags); its
/// code-trust policy (a receiver that takes deployments gets the packages
/// it lacks deployed before their frames; one that takes none gets the
/// frames, and refuses them), how it runs injected code and as which
/// instruction set.
void takeOfferedPackages(tc_peer *Peer, std::vector<uint64_t> Tags);
void takeOfferedCode(tc_peer *Peer, uint32_t CodeTrust, tc_mailbox_mode_t Mode, uint32_t Isa);

/// Whether the peer holds this build of the package: it said so in its
/// offer, or took its deployment. Inline: sends to receivers that take
/// deployments ask (one compare, mostly).
inline bool peerHolds(tc_peer *Peer, const tc_package *Pkg) {
  if (Pkg->Tag == Peer->Code->HeldTag)
    return true;
  for (uint64_t Tag : Peer->Code->RemotePackages)
    if (Tag == Pkg->Tag) {
      Peer->Code->HeldTag = Tag;
      return true;
    }
  return false;
}

/// Why the peer refused to take this package for good, or TC_OK.
tc_status_t deployRefusal(const tc_peer *Peer, const tc_package *Pkg);

/// Sender: starts deploying Pkg to the peer, not waiting for anything:
/// TC_OK once its offer is on its way; TC_ERR_INVALID_PARAM while another
/// deployment to the peer is unanswered (one at a time); TC_ERR_IO if the
/// package's files cannot be read (logged).
tc_status_t startDeployment(tc_peer *Peer, const tc_package *Pkg);

/// Sender: moves the deployment in flight on (sends the files the receiver
/// asked for) and says where it stands: TC_ERR_INCOMPLETE while it goes
/// on; else its end, once: TC_OK (the peer holds the package from now on),
/// or why not (the receiver's refusal, logged with its reason;
/// TC_ERR_TIMED_OUT; TC_ERR_IO if the peer failed). TC_ERR_INVALID_PARAM:
/// none in flight.
tc_status_t advanceDeployment(tc_peer *Peer);

} // namespace twochains::rt

#endif
