//===- Send.h - Sending frames --------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_SEND_SEND_H
#define TWOCHAINS_RUNTIME_SEND_SEND_H

#include "path/PathContext.h"
#include "send/PeerSend.h"

namespace twochains::rt {

/// tc_send's work, with the peer held as tc_send holds it (PeerGuard);
/// *Sequence (if not null) is the frame's, on TC_OK. A frame whose image
/// must be shipped ahead, and every frame behind frames queued for the
/// peer, is queued (bounded: TC_ERR_NO_CREDIT past it) and TC_OK; its
/// *Sequence is then a key with QueuedCallKey set, until it is sent
/// (PathContext::CallSent).
/// Borrow (TC_SEND_NO_COPY): a payload that goes ahead of its frame is
/// sent from the caller's buffer (send/PayloadAhead.h).
tc_status_t sendLocked(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, tc_send_mode_t Mode,
                       const void *Payload, size_t PayloadSize, uint64_t *Sequence,
                       PayloadHold Hold = PayloadHold::Copy);
/// What keys a queued call's frame has: sequences never reach it.
constexpr uint64_t QueuedCallKey = 1ull << 63;
/// A running jam's send (tc_jam_reply, tc_jam_forward), which never waits:
/// as sendLocked, and on a full ring queued too. Origin as queueFrame's.
tc_status_t sendFromJamLocked(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                              tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                              tc_peer *Origin);
/// The payload the element's helpers write from Args, in this thread's
/// scratch buffer (valid until its next call).
tc_status_t payloadFromArgs(const tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                            const void *Args, const uint8_t **Payload, size_t *PayloadSize);
/// An answer frame (FrameAnswer) to the peer's call of sequence
/// CallSequence; TC_ERR_NO_CREDIT when its ring is full.
tc_status_t sendAnswer(tc_peer *Peer, uint64_t CallSequence, const void *Bytes, size_t Size);

/// Frames sent from running jams, which never wait: queued for the peer
/// while its ring is full (bounded: TC_ERR_NO_CREDIT past the bound), sent
/// in order as credits come back and code shipped ahead is installed. Origin: the peer whose frame's jam
/// forwards this one to Peer (tc_jam_forward), which may fill only its
/// share of the queue; null for Peer's own (tc_jam_reply, answers).
tc_status_t queueFrame(tc_peer *Peer, QueuedFrame F, tc_peer *Origin = nullptr);
void sendQueued(tc_peer *Peer);
/// A frame for a handle (core/Peer.h, Proxy) whose connection is still
/// being made: checked as far as it can be without the receiver, then
/// queued on the handle (bounded; TC_ERR_NO_CREDIT when full), TC_ERR_IO
/// if it has gone. Origin as for queueFrame.
tc_status_t queueOnHandle(tc_peer *Handle, const tc_package *Pkg, uint32_t Element,
                          tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                          tc_peer *Origin);

/// Sender: sends again, with code, the cached frames the receiver reported
/// missing.
void resendMissing(tc_peer *Peer);
/// Sender: takes a report of an abandoned frame from the credit line.
void takeFaultReport(tc_peer *Peer);

/// Whether the receiver has written a miss or fault report this side has
/// not taken: two loads, where taking them is a few hundred instructions.
inline bool reportsWaiting(const tc_peer *Peer) {
  const volatile uint64_t *W = Peer->Tx->CreditWord;
  return W && Peer->Tx->Send &&
         (Peer->Sending->Misses.mayTake(W[CreditWordMiss]) ||
          W[CreditWordFault] != Peer->Sending->FaultSeen);
}
/// Whether the peer's send side has work for the executor's turn.
inline bool sendsDue(const tc_peer *Peer, bool ReportTurn) {
  return (ReportTurn && reportsWaiting(Peer)) || !Peer->Sending->Queued.empty() ||
         Peer->Tx->BatchFrames || Peer->Sending->Bundle.Slot;
}
/// The send side's part of a peer's turn: on a report turn its miss and
/// fault reports, then a corked batch and what jams queued. The caller
/// holds the peer.
void serviceSends(tc_peer *Peer, bool ReportTurn);

/// tc_flush's work: until every frame sent is credited (and its put
/// complete) and none is queued, or TimeoutMs passes (TC_ERR_TIMED_OUT).
/// Frames dropped since the last flush (their code refused or not
/// answered for) make it return why, once.
tc_status_t flushPeer(tc_peer *Peer, int TimeoutMs);

} // namespace twochains::rt

#endif
