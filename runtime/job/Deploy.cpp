//===- Deploy.cpp - tc_deploy and tc_job_deploy ---------------------------===//
//
// The application's way to deploy a package and learn when it is done
// (code/Deploy.cpp does the work): to a connection, a job rank's handle
// (connected first, in the background), or every rank at once. The waits
// run the context meanwhile, so ranks deploying to each other at once
// each answer the other.
//
//===----------------------------------------------------------------------===//
#include "code/Deploy.h"
#include "core/Lock.h"
#include "core/Sleep.h"
#include "job/Job.h"
#include "send/Send.h"

#include <algorithm>
#include <vector>

using namespace twochains::rt;

namespace {

/// One handle's deployment, moved on: TC_ERR_INCOMPLETE while it goes on.
tc_status_t step(tc_peer *Handle, const tc_package *Pkg, bool &Started) {
  if (Handle->ProxyGone)
    return TC_ERR_IO;
  tc_peer *Peer = connectionOf(Handle);
  if (!Peer)
    return TC_ERR_INCOMPLETE; // still connecting
  if (!Peer->Welcomed || Peer->Failed)
    return TC_ERR_IO;
  // The deployment in flight, and the frames queued behind it, moved on.
  if (Peer->Code->Deploying.active())
    sendQueued(Peer);
  if (peerHolds(Peer, Pkg))
    return TC_OK;
  if (tc_status_t Refused = deployRefusal(Peer, Pkg); Refused != TC_OK)
    return Refused;
  if (Peer->Code->Deploying.active())
    return TC_ERR_INCOMPLETE; // this one, or another before it
  if (tc_status_t Ended; Started && Peer->Code->Deploying.endedFor(Pkg->Tag, &Ended))
    return Ended; // ended without a refusal for good
  tc_status_t St = startDeployment(Peer, Pkg);
  Started = St == TC_OK;
  return St == TC_OK ? TC_ERR_INCOMPLETE : St;
}

tc_status_t deployAll(CoreContext *Ctx, const std::vector<tc_peer *> &Handles,
                      const tc_package *Pkg, int TimeoutMs) {
  uint64_t Deadline = nowNs() + msToNs(TimeoutMs > 0 ? TimeoutMs : 0);
  std::vector<bool> Started(Handles.size()), Done(Handles.size());
  IdleWait Idle;
  for (;;) {
    // Answers come, and others' deployments are answered. A turn may end
    // a deployment without leaving anything to wake a sleep after it:
    // the steps look after each turn, before any sleep.
    bool Ran = Ctx->Progress(Ctx) != 0;
    size_t Left = 0;
    {
      lockContext(Ctx);
      std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock, std::adopt_lock);
      for (size_t I = 0; I < Handles.size(); ++I) {
        if (Done[I])
          continue;
        bool S = Started[I];
        tc_status_t St = step(Handles[I], Pkg, S);
        Started[I] = S;
        if (St == TC_ERR_INCOMPLETE)
          ++Left;
        else if (St != TC_OK)
          return St;
        else
          Done[I] = true;
      }
    }
    if (!Left)
      return TC_OK;
    // Answers and handshakes wake a sleep; an offer made again after a
    // busy answer, or a connect retried, at its due time.
    if (!Idle.after(Ctx, Ran, Deadline))
      return TC_ERR_TIMED_OUT;
  }
}

} // namespace

extern "C" tc_status_t tc_deploy(tc_peer_t *Peer, const tc_package_t *Pkg, int TimeoutMs) {
  if (!Peer || !Pkg)
    return TC_ERR_INVALID_PARAM;
  if (ThreadRunningJamOf == Peer->Ctx)
    return TC_ERR_INVALID_PARAM; // a jam never waits on a peer
  return deployAll(Peer->Ctx, {Peer}, Pkg, TimeoutMs);
}

extern "C" tc_status_t tc_job_deploy(tc_context_t *Api, const tc_package_t *Pkg, int TimeoutMs) {
  auto *Ctx = coreOf(Api);
  if (!Ctx || !Pkg || !Ctx->Job->Joined || ThreadRunningJamOf == Ctx)
    return TC_ERR_INVALID_PARAM;
  std::vector<tc_peer *> Handles;
  {
    std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
    for (uint32_t Rank = 0; Rank < Ctx->Job->JobSize; ++Rank)
      Handles.push_back(rankHandle(Ctx, Rank));
  }
  return deployAll(Ctx, Handles, Pkg, TimeoutMs);
}
