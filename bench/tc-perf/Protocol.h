//===- Protocol.h - What client and server say on the bootstrap socket -----===//
//
//   client -> server  Hello  (protocol version, UCX_TLS, whether it runs
//                             tc-local-job, UCX description)
//   server -> client  Hello  (the same, its mailbox mode and waits, and the
//                             port of its job context, or 0)
//   then the client tc_connects (to both contexts); per test:
//   client -> server  Run    (RunCommand)
//   server -> client  Ready  (set up; the client may start)
//   client -> server  Done   (rate and wait tests: the client has finished)
//   server -> client  Result (ServerResult: what the test cost the server)
//   client -> server  Quit;  server -> client  Bye (its tc_stats_t)
//   either way        Failed (a reason), instead of the expected message
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_PROTOCOL_H
#define TC_PERF_PROTOCOL_H

#include "Options.h"

#include <cstdint>

namespace tcperf {

constexpr uint32_t ProtocolVersion = 2;

struct RunCommand {
  Test T;
  Workload W;
  Variant V;
  uint32_t PayloadBytes;
  uint64_t Iters, Warmup, GapNs;
};

// Measured on the server over the timed part of a test.
struct ServerResult {
  uint64_t Messages = 0;   // messages run (ucx-put rate: sent, as it cannot count)
  uint64_t Polls = 0;      // empty polls (0 where the executor thread polls)
  double WallNs = 0, CpuNs = 0;
  uint64_t Cycles = 0;
  uint32_t CyclesValid = 0;
  uint32_t Reserved = 0;
  uint64_t Rendezvous = 0; // ucx-am: messages that came by rendezvous
};

} // namespace tcperf

#endif
