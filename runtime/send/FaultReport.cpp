//===- FaultReport.cpp - A receiver's report of a frame it abandoned -------===//
//
// The receiver writes word 2 of the credit line when a frame faulted, ran
// past its time limit, was quarantined or refused: the sender checks the
// report against what it sent, ends the frame's call, posts an event and
// answers the next tc_flush with it (tc_peer_last_fault says which).
//
//===----------------------------------------------------------------------===//
#include "send/Send.h"

#include "base/Log.h"
#include "base/StatusString.h"
#include "containment/JamGuard.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Stats.h"

#include <cstddef>

using namespace twochains::rt;

namespace twochains::rt {

void takeFaultReport(tc_peer *Peer) {
  if (!Peer->Tx->CreditWord || !Peer->Tx->Send)
    return;
  uint64_t W = Peer->Tx->CreditWord[CreditWordFault];
  if (W == Peer->Sending->FaultSeen || !(W >> 63))
    return;
  Peer->Sending->FaultSeen = W;
  // The frame was sent, so its sequence is the last one below next() with
  // these low 32 bits.
  uint64_t Next = Peer->Tx->Send->next();
  uint64_t Seq = (Next & ~0xffffffffull) | uint32_t(W);
  if (Seq >= Next && Seq >= (1ull << 32))
    Seq -= 1ull << 32;
  // The receiver writes the word: a report of a frame this side never sent
  // is false, and so is one of a frame credited more than a ring ago (the
  // word is read before every credit is taken, so a true report is at
  // most one ring of credits old). Taken for nothing: counted, logged once.
  uint64_t Finished = Peer->Tx->Send->finished();
  if (Seq >= Next || Seq + Peer->Tx->Slots < Finished) {
    count(Peer->Ctx, &tc_stats_t::messages_refused);
    logOnce(Peer->Sending->FalseFaultLogged, TC_LOG_ERROR,
            Peer->Name + " reported frame " + std::to_string(Seq) + " abandoned, which " +
                (Seq >= Next ? "this side never sent" : "finished a ring of frames ago") +
                ": ignored (further false reports are counted, not logged)");
    return;
  }
  tc_jam_fault_t &F = Peer->Sending->LastFault;
  uint32_t Count = F.count + 1;
  uint32_t Kind = uint32_t(W >> 56 & 0xf);
  int32_t Signal = int32_t(W >> 48 & 0xff);
  tc_status_t Ended = Kind == TC_JAM_TIMED_OUT     ? TC_ERR_JAM_TIMEOUT
                      : Kind == TC_JAM_QUARANTINED ? TC_ERR_QUARANTINED
                                                   : TC_ERR_JAM_FAULT;
  if (Kind == TC_JAM_REFUSED) {
    // The signal's field carries the refusal's status, negated: one the
    // API names, or else a bare refusal.
    Ended = Signal > 0 && -Signal >= TC_ERR_UNTRUSTED ? tc_status_t(-Signal) : TC_ERR_REFUSED;
    Signal = 0;
  }
  F = {Seq, uint32_t(W >> 32 & 0xffff), Signal, Kind, Count, Ended};
  Peer->Sending->FaultUnflushed = Kind == TC_JAM_REFUSED ? Ended : TC_ERR_JAM_FAULT;
  count(Peer->Ctx, &tc_stats_t::faults_reported);
  count(Peer, &tc_peer_stats_t::faults_reported);
  postEvent(Peer->Ctx, TC_EVENT_FAULT_REPORTED, Peer->Number, Ended, F.element, F.sequence,
            F.signal);
  Peer->Ctx->Path->FrameAbandoned.notify(Peer, Seq, Ended);
  if (Kind == TC_JAM_REFUSED) {
    logLimited(Peer->Sending->FaultReportLog, TC_LOG_ERROR,
               Peer->Name + " refused frame " + std::to_string(Seq) + " (element " +
                   std::to_string(F.element) + "): " + statusString(Ended));
    return;
  }
  const char *How = Kind == TC_JAM_TIMED_OUT     ? "ran past its time limit"
                    : Kind == TC_JAM_QUARANTINED ? "is quarantined for this sender"
                                                 : "faulted";
  logLimited(Peer->Sending->FaultReportLog, TC_LOG_ERROR,
             Peer->Name + " abandoned frame " + std::to_string(Seq) + ": element " +
                 std::to_string(F.element) + " " + How +
                 (Kind == TC_JAM_FAULTED ? " (" + std::string(signalName(F.signal)) + ")" : ""));
}

} // namespace twochains::rt

extern "C" tc_status_t tc_peer_last_fault_sized(tc_peer_t *Peer, tc_jam_fault_t *Out, size_t Size) {
  if (!Peer || !Out || Size < offsetof(tc_jam_fault_t, status) ||
      (Peer->Proxy && !(Peer = connectionOf(Peer))))
    return TC_ERR_INVALID_PARAM;
  PeerGuard Guard(Peer);
  if (!Peer->Welcomed)
    return TC_ERR_IO; // gone: released, its credit line with it
  takeFaultReport(Peer);
  if (!Peer->Sending->LastFault.count)
    return TC_ERR_INVALID_PARAM;
  // Whole fields only, and none past what the caller's struct has.
  tc_jam_fault_t F = Peer->Sending->LastFault;
  std::memcpy(Out, &F, Size < sizeof F ? offsetof(tc_jam_fault_t, status) : sizeof F);
  return TC_OK;
}

// Programs built before tc_peer_last_fault_sized call this one: their
// struct ends before status.
#undef tc_peer_last_fault
extern "C" tc_status_t tc_peer_last_fault(tc_peer_t *Peer, tc_jam_fault_t *Out) {
  return tc_peer_last_fault_sized(Peer, Out, offsetof(tc_jam_fault_t, status));
}
