//===- JobContext.h - The job layer's part of a context -------------------===//
#ifndef TWOCHAINS_RUNTIME_JOB_JOBCONTEXT_H
#define TWOCHAINS_RUNTIME_JOB_JOBCONTEXT_H

#include "base/Log.h"
#include "wire/Wire.h"
#include "wireup/WireupContext.h"

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace twochains::rt {

/// This side's one endpoint to a rank, made from the rank's worker address
/// (job/RankEndpoints.cpp): None (not yet), Made (no peer owns it yet),
/// Owned (a peer's control endpoint, closed with it), Broken (failed
/// before that: closed at the next control turn), Spent (the rank is
/// reached by sockaddr from now on).
struct RankEndpoint {
  enum class State : uint8_t { None, Made, Owned, Broken, Spent };
  State At = State::None;
  ucp_ep_h Ep = nullptr;
  tc_peer *Owner = nullptr;
  /// The KNOCK last sent on it, and UCX's request while it is in flight.
  RankKnock Said = {};
  void *Knock = nullptr;
};

/// Where a proxy's connection is made to, and how the attempts go
/// (job/Route.cpp).
struct RouteTarget {
  std::unique_ptr<tc_peer> Handle; // the proxy the application or jams hold
  uint32_t Rank = NoJobRank;       // a rank of the job, or an address (Port)
  std::vector<uint32_t> Addresses; // IPv4, network order, tried in turn
  uint16_t Port = 0;
  size_t NextAddress = 0;
  tc_peer *Attempt = nullptr;      // this side's connect in flight
  /// The rank's connect this side welcomed, bound once it says it took the
  /// welcome (READY).
  tc_peer *Welcomed = nullptr;
  uint64_t RetryAtNs = 0;          // when to try again (0: not waiting)
  /// The rank said it leaves (its context ends), having finished this
  /// many tc_job_quiesce calls (job/Quiesce.cpp).
  bool Left = false;
  uint64_t LeftAfterQuiesces = 0;
  uint64_t GiveUpNs = 0;           // the first attempt's start + the connect timeout
  unsigned Attempts = 0;
  bool Started = false;
  /// The rank's control worker address (empty: connections go by sockaddr)
  /// and this side's endpoint made from it.
  std::vector<uint8_t> WorkerAddress;
  RankEndpoint Pair;
  /// A higher rank knocked: this side connects to it.
  bool Knocked = false;
};

struct JobContext {
  /// tc_job_join: the job's size (its identity and rank are wireup's Job, which
  /// every offer carries); one target per rank.
  bool Joined = false;
  uint32_t JobSize = 0;
  std::vector<RouteTarget> Ranks;
  /// Per rank, its handle once rankHandle has started its connection (null
  /// before): what tc_job_peer reads without the context's lock.
  std::unique_ptr<std::atomic<tc_peer *>[]> Handles;
  /// tc_jam_forward's routes outside the job, by "host:port", and where
  /// they may go (forward_allow).
  std::map<std::string, RouteTarget> AddressRoutes;
  /// This side's connects in flight (targets with an Attempt): at most
  /// MaxAttemptsAtOnce, the others wait their turn (job/Route.cpp).
  unsigned AttemptsInFlight = 0;
  std::vector<std::string> ForwardAllow;
  /// How long a connection may take to make, retries included.
  uint64_t ConnectTimeoutNs = 30'000'000'000ull;
  /// The connections this layer made (connects in the background), kept
  /// until the context ends: a handle may name one after it is released.
  std::vector<std::unique_ptr<tc_peer>> Owned;
  /// Quiescence (job/Quiesce.cpp): tc_job_quiesce calls made, the wave
  /// this rank waits on, and at rank 0 the reports of each rank.
  uint64_t QuiesceEpoch = 0;
  struct QuiesceState {
    uint32_t Wave = 0;
    bool Reported = false;
    int32_t Decision = -1;     // -1: none yet; 0: another wave; 1: quiet
    uint32_t DecidedWave = 0;
    /// This rank's counts when the job was last found quiet: a report of
    /// the same counts says nothing happened here since.
    uint64_t QuietSent = 0, QuietDone = 0;
    // rank 0
    std::vector<int64_t> ReportWave; // per rank: the wave last reported (-1: none)
    std::vector<uint64_t> Sent, Done;
    std::vector<uint8_t> Unchanged;  // per rank: nothing sent or run since the last quiet
    uint64_t LastSent = ~0ull, LastDone = ~0ull;
  } Quiesce;
  /// KNOCKs refused (job/RankEndpoints.cpp).
  LogLimit KnockLog;
  /// Counters of frames to and from ranks of connections released.
  uint64_t ReleasedSent = 0, ReleasedDone = 0;
};

} // namespace twochains::rt

#endif
