//===- Job.h - Jobs: ranks, their handles, quiescence ---------------------===//
//
// A job is P processes that each send and receive (docs/jobs.md). Every
// rank has a handle (a proxy tc_peer, core/Peer.h) whose connection is
// made on demand, in the background, while frames sent to it wait on the
// handle (bounded). Two ranks that connect to each other at once keep one
// connection: the lower rank's.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_JOB_JOB_H
#define TWOCHAINS_RUNTIME_JOB_JOB_H

#include "job/JobContext.h"

#include <netinet/in.h>

namespace twochains::rt {

/// Registers the job layer's hooks, handlers and housekeeping.
ucs_status_t setupJob(CoreContext *Ctx);
/// At the context's end: what waits on handles is given a bounded while
/// to leave, then every connection this layer made is released.
void endJob(CoreContext *Ctx);

/// The handle of rank Rank of the joined job (Rank < JobSize), its
/// connection started if it was not.
tc_peer *rankHandle(CoreContext *Ctx, uint32_t Rank);
/// The handle of tc_jam_forward's route to SA ("host:port" Key), its
/// connection started if it was not.
tc_peer *addressRoute(CoreContext *Ctx, const std::string &Key, const sockaddr_in &SA);

/// Frames this rank has sent to ranks of the job and frames of theirs it
/// has finished (run, refused or abandoned), over every connection, made
/// or released: the counters of quiescence.
void jobFrameCounts(CoreContext *Ctx, uint64_t &Sent, uint64_t &Done);
/// Nothing of this rank's waits to leave: no frame queued on a handle or
/// connection of the job, no corked batch.
bool jobSendsIdle(CoreContext *Ctx);

/// The hooks and housekeeping of handles (Route.cpp), and quiescence's
/// handler (Quiesce.cpp).
ucs_status_t setupRoutes(CoreContext *Ctx);
ucs_status_t setupQuiesce(CoreContext *Ctx);
/// Connections from worker addresses (RankEndpoints.cpp): whether T's
/// next connection is made so; this (higher) rank asks T's to connect
/// (false if no endpoint could be made); this (lower) rank connects to T
/// (null if no endpoint could be made); the endpoints no peer owns close
/// at the context's end.
ucs_status_t setupRankEndpoints(CoreContext *Ctx);
bool connectsFromWorkerAddress(const CoreContext *Ctx, const RouteTarget &T);
bool askRankToConnect(CoreContext *Ctx, RouteTarget &T);
tc_peer *startRankConnect(CoreContext *Ctx, RouteTarget &T, const sockaddr_in &SA,
                          const std::string &Where, uint64_t DeadlineNs);
void closeRankEndpoints(CoreContext *Ctx);
/// The context ends: every rank connected to this one hears how many
/// quiesces it finished, before the connections close.
void announceLeaving(CoreContext *Ctx);

} // namespace twochains::rt

#endif
