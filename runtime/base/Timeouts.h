//===- Timeouts.h - Every bounded wait of the runtime, named --------------===//
//
// No wait on a peer is unbounded; these are the bounds, in the clock's unit
// (base/Clock.h). Periods of the executor's own turns live with it
// (context/Progress.cpp); protocol deadlines a peer must meet live with the
// format that names them (wire/).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_BASE_TIMEOUTS_H
#define TWOCHAINS_RUNTIME_BASE_TIMEOUTS_H

#include <cstdint>

namespace twochains::rt {

constexpr uint64_t NsPerMs = 1'000'000;
constexpr uint64_t NsPerS = 1'000'000'000;

/// A put from a slot's copy, or a credit report in flight, to complete
/// before the peer is failed.
constexpr uint64_t PutCompleteTimeoutNs = 1 * NsPerS;
/// A credit report waited for while the previous one is in flight.
constexpr uint64_t CreditReportWaitNs = 100 * NsPerMs;
/// Releasing a live peer: its last puts and messages let land.
constexpr uint64_t ReleaseFlushTimeoutNs = 1 * NsPerS;
/// Releasing a failed peer: nothing of it is expected to land.
constexpr uint64_t ReleaseFailedFlushTimeoutNs = 10 * NsPerMs;
/// Closing an endpoint that has nothing left to flush.
constexpr uint64_t EndpointCloseTimeoutNs = 10 * NsPerMs;
/// A refused handshake's REFUSED message, let leave before its endpoint
/// closes (the receiver goes on meanwhile).
constexpr uint64_t RefusedCloseTimeoutNs = 100 * NsPerMs;
/// A connection that has not authenticated by then is closed (the
/// context's handshake_timeout_ms, TC_HANDSHAKE_TIMEOUT_MS): long enough
/// for a handshake held up by a jam at its time limit, short enough that
/// one that never comes holds its place briefly.
constexpr uint64_t DefaultHandshakeTimeoutMs = 3000;
/// A failed peer whose last frame never completes is released after this.
constexpr uint64_t IncompleteFrameGiveUpNs = 10 * NsPerS;
/// A message's bytes moved by rendezvous (code shipped ahead, a call's
/// answer, a pushed ried) to arrive, or an answer sent so to be taken:
/// past it the transfer is cancelled and the peer that held it up is cut
/// off (control/ControlMessage.h), so that it holds no place for ever.
constexpr uint64_t RendezvousTimeoutNs = 10 * NsPerS;
/// tc_connect's attempts while nothing listens: the first back-off, and
/// the longest.
constexpr uint64_t ConnectBackoffFirstNs = 1 * NsPerMs;
constexpr uint64_t ConnectBackoffMaxNs = 100 * NsPerMs;
/// tc_connect_address: the first slice of the time given to one address.
constexpr uint64_t AddressSliceFirstNs = 20 * NsPerMs;
/// A jam's onward connection (tc_jam_forward), one attempt.
constexpr uint64_t ForwardConnectTimeoutNs = 5 * NsPerS;
/// Flushing a jam's route at the context's end.
constexpr int RouteFlushTimeoutMs = 5000;

} // namespace twochains::rt

#endif
