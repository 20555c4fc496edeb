//===- Peer.h - One connection, and the parts the layers keep of it -------===//
//
// A peer is what core knows of a connection (its endpoint, name, identity,
// polling and statistics) and a short list of parts, each declared and
// written by the layer that owns it (core/PeerPart.h): the frame path's
// halves (path/PeerPath.h), send's, receive's, code's, package's,
// wireup's and calls' parts. runtime/README.md has the table.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_PEER_H
#define TWOCHAINS_RUNTIME_PEER_H

#include "base/Log.h"
#include "core/PeerIdentity.h"
#include "core/PeerPart.h"
#include "wire/Frame.h"
#include "wire/Wire.h"
#include "twochains/twochains.h"

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <ucp/api/ucp.h>
#include <vector>

struct tc_call;
struct tc_package;

namespace twochains::rt {
struct CoreContext;
struct JamRun;
struct PeerWireup;
struct PeerControl;
struct PeerCalls;
struct PeerReceive;
struct PeerCode;
struct PeerPackage;
struct PeerSend;
struct PeerJob;
struct PeerSendHalf;
struct PeerReceiveHalf;
} // namespace twochains::rt

/// What a running jam receives as its tc_jam_ctx_t.
struct tc_jam_ctx {
  tc_peer *Peer;
  /// The sequence of the frame's slot, which answers and fault reports
  /// name (a bundle's frames share their slot's).
  uint64_t Sequence;
  const tc_package *Package;
  /// The running thread's containment state: callers set the jam's code
  /// range in it before the call.
  twochains::rt::JamRun *Run;
  /// The frame's number, counted per sender in frames (tc_jam_sequence):
  /// its slot's sequence, but for the frames of bundles before it.
  uint64_t Frame = 0;
  /// tc_jam_return answered this frame already.
  bool Returned = false;
};


struct tc_peer {
  twochains::rt::CoreContext *Ctx = nullptr;
  ucp_ep_h Ep = nullptr;      // from sockaddr connection establishment (control)
  unsigned Number = 0;        // tc_jam_sender: 1, 2, ... in connection order
  /// Receiver: the application was given this handle (tc_context_peer), so
  /// it outlives its connection (CoreContext::Gone).
  bool HandedOut = false;
  std::string Name;           // "peer N (address:port)", for messages
  /// Who it is beyond this connection: what quarantine is kept by.
  twochains::rt::PeerIdentity Identity;
  /// Receiver: the address it connected from, without the port (limits on
  /// connections still authenticating, per address; deployers' names).
  std::string Address;
  /// How frames and credits travel in both directions (Wire.h).
  twochains::rt::FramePath Path = twochains::rt::PathAm;
  /// RMA path: the endpoint puts go through, on the RMA worker, created
  /// from the peer's RMA worker address: unlike the sockaddr one, UCX may
  /// give it shared-memory lanes.
  ucp_ep_h DataEp = nullptr;
  /// Set by UCX's callbacks in whichever thread progresses: read by a
  /// sending thread that holds only its channel.
  std::atomic<bool> Failed{false};
  /// TC_CONTEXT_THREADS with an RMA path (set when welcomed): calls on this
  /// peer hold Channel alone, so threads on different peers run at once
  /// (docs/runtime.md, "Threads"). The executor only tries it.
  bool Channelled = false;
  std::recursive_mutex Channel;
  bool RefusalLogged = false; // a refused message from it was logged (once)
  /// What it can make every layer log again and again: its messages
  /// refused (code offers, answers, rieds, forwards: out of bounds, or past
  /// its share of a queue), its answers as a receiver (base/Log.h,
  /// logLimited). Its frames refused and abandoned are receive's to log,
  /// its fault reports send's (their parts).
  twochains::rt::LogLimit RefusedMessageLog, AnswerLog;

  /// Which rings each pass polls (core/Polled.h): its index in
  /// CoreContext::Polled, or -1 while its ring is cold (found by its
  /// doorbell, or by the sweep) or it is not polled at all.
  int PolledAt = -1;
  /// The cold flag is set in its credit line (CreditWordCold).
  bool Cold = false;
  /// Its place in this side's doorbell (NoDoorbell: none).
  uint32_t DoorbellPlace = twochains::rt::NoDoorbell;
  /// Control turns it has been quiet for, since when, and what it had done
  /// then (frames received, frames sent): context/Polling.cpp.
  unsigned QuietTurns = 0;
  uint64_t QuietSinceNs = 0;
  uint64_t QuietReceived = 0, QuietSent = 0;

  /// Jobs (job/Job.h): the rank in this side's job of the process at the
  /// other end, as its authenticated offer says (NoJobRank: outside it).
  uint32_t JobRank = twochains::rt::NoJobRank;
  /// A name for a connection rather than one: a job rank's handle
  /// (tc_job_peer) or a jam's onward route (tc_jam_forward), connected on
  /// demand and in the background. Bound is the connection once it is made
  /// (null before; null again, with ProxyGone, once it has gone); frames
  /// sent to it meanwhile wait in its send part's queue, bounded (job/Route.h).
  bool Proxy = false;
  bool ProxyGone = false;
  tc_peer *Bound = nullptr;
  /// The handshake is over: both offers taken, the rings and credit lines
  /// set up (wireup/).
  bool Welcomed = false;
  /// The Number of the connection of this context that holds the same two
  /// handshake nonces as this one (0: none), as the other end of a
  /// connection this context made to its own listener does (wireup/).
  /// This connection's offers may name that one's segments (and the
  /// doorbell), which no other peer's may (CoreContext::OwnSegmentFiles).
  /// A peer that relays one connection's nonces into another can pair two
  /// of its own connections so: it then names only its own ring.
  unsigned Counterpart = 0;
  /// How the connection is made and proved, from its first message to its
  /// welcome or refusal, and its end: wireup's part (wireup/PeerWireup.h).
  twochains::rt::PeerPart<twochains::rt::PeerWireup> Wireup;
  /// Calls made to it and answers its jams sent: the calls layer's part
  /// (calls/PeerCalls.h), made on its first call.
  twochains::rt::PeerPart<twochains::rt::PeerCalls> Calls;
  /// What running its frames leaves behind (polls, waits, abandoned
  /// frames, refusals to tell): the receive layer's part
  /// (receive/PeerReceive.h).
  twochains::rt::PeerPart<twochains::rt::PeerReceive> Receiving;
  /// The code it holds and the code on its way to it (package builds,
  /// deployments, images shipped ahead): the code layer's part
  /// (code/PeerCode.h).
  twochains::rt::PeerPart<twochains::rt::PeerCode> Code;
  /// A ried push to it awaiting its answer: the package layer's part
  /// (package/PeerPackage.h).
  twochains::rt::PeerPart<twochains::rt::PeerPackage> Package;
  /// Frames waiting to leave, the frame templates and copies, payloads
  /// sent ahead, and the fault reports and drops the next tc_flush tells:
  /// the send layer's part (send/PeerSend.h).
  twochains::rt::PeerPart<twochains::rt::PeerSend> Sending;
  /// A connection the job layer made for a handle: the handle (job/PeerJob.h).
  twochains::rt::PeerPart<twochains::rt::PeerJob> Job;
  /// Control messages UCX still sends on Ep, with the copies it reads: the
  /// control layer's part (control/PeerControl.h).
  twochains::rt::PeerPart<twochains::rt::PeerControl> Control;
  tc_peer_stats_t Stats = {};  // tc_peer_stats
  /// The frame path both ways: the other side's ring and credit line, this
  /// side's ring and its credit reports (path/PeerPath.h).
  twochains::rt::PeerPart<twochains::rt::PeerSendHalf> Tx;
  twochains::rt::PeerPart<twochains::rt::PeerReceiveHalf> Rx;
};

/// The connection a handle names (itself if it is one): null while a
/// proxy's connection is being made.
inline tc_peer *connectionOf(tc_peer *Peer) {
  return Peer->Proxy ? __atomic_load_n(&Peer->Bound, __ATOMIC_ACQUIRE) : Peer;
}

#endif
