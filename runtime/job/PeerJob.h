//===- PeerJob.h - The job layer's part of a peer -------------------------===//
//
// What the job layer keeps of a connection it made in the background for
// a handle (Route.cpp): the handle it was made for. Read and written by
// job/ alone; made with the connection's attempt (only such connections
// have one). The handle's own state (Proxy, Bound, ProxyGone) is core's:
// send and calls below job read it on every send to a handle.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_JOB_PEERJOB_H
#define TWOCHAINS_RUNTIME_JOB_PEERJOB_H

#include "core/Peer.h"

namespace twochains::rt {

struct PeerJob {
  /// The handle this connection was made for (a connect in the
  /// background). A handle bound to it marks it HandedOut.
  tc_peer *ProxyOf = nullptr;
};

/// The handle Connection was made for, or null (not made by job/).
inline tc_peer *proxyOf(const tc_peer *Connection) {
  return Connection->Job ? Connection->Job->ProxyOf : nullptr;
}
/// Connection is being made for Handle.
inline void makeFor(tc_peer *Connection, tc_peer *Handle) {
  if (!Connection->Job)
    Connection->Job.reset(new PeerJob, [](PeerJob *Part) { delete Part; });
  Connection->Job->ProxyOf = Handle;
}

} // namespace twochains::rt

#endif
