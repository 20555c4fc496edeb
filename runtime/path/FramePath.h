//===- FramePath.h - How frames and credits reach a peer's ring -----------===//
#ifndef TWOCHAINS_RUNTIME_PATH_FRAMEPATH_H
#define TWOCHAINS_RUNTIME_PATH_FRAMEPATH_H

#include "core/Sleep.h"
#include "path/PathContext.h"

namespace twochains::rt {

/// Puts Size bytes of a frame into the peer's slot, or sends them for the
/// peer to write there. TC_ERR_IO marks the peer failed. With Pipelined
/// (RMA only), the put is not waited for: its request is kept in
/// Peer->Tx->Puts[Slot], and Frame must stay as it is until
/// completePut(Peer, Slot).
tc_status_t deliverFrame(tc_peer *Peer, const uint8_t *Frame, size_t Size, uint64_t Sequence,
                         uint32_t Slot, bool Pipelined = false);
/// Sends the frames a corked peer holds (tc_peer_cork), as one message.
/// TC_ERR_IO marks the peer failed.
tc_status_t flushFrameBatch(tc_peer *Peer);
/// tc_peer_cork: while a peer is corked, its frames by message wait and
/// leave together (flushFrameBatch); uncorking sends what waits (TC_ERR_IO
/// as flushFrameBatch). A handle keeps the setting for its connection
/// (keepCork), which takes it when made (takeCork).
tc_status_t corkFrames(tc_peer *Peer, bool Corked);
inline void keepCork(tc_peer *Handle, bool Corked) { Handle->Tx->Corked = Corked; }
inline void takeCork(tc_peer *Handle, tc_peer *Connection) {
  Connection->Tx->Corked = Connection->Tx->Corked || Handle->Tx->Corked;
}
/// A handle's frames are checked against this side's slots until its
/// connection tells the receiver's (a job's ranks share their parameters).
inline void assumeSlotSize(tc_peer *Handle, uint32_t SlotSize) { Handle->Tx->SlotSize = SlotSize; }
/// A quiet ring goes cold (context/Polling.cpp): closed to its sender past
/// the next frame, which it is told in its credit line; counted, for the
/// wakes the sender may send (onWake).
void closeColdRing(tc_peer *Peer);
/// Completes the put from slot Slot's copy, if one is in flight (bounded:
/// a put that does not complete within a second marks the peer failed).
tc_status_t completePut(tc_peer *Peer, uint32_t Slot);
/// Writes word Word of the peer's credit line (put or message), without
/// waiting for it to land. While the previous report is still in flight:
/// Busy (report again later), or with Wait, waits for it a bounded while.
enum class CreditReport { Sent, Busy, Failed };
CreditReport reportCreditWord(tc_peer *Peer, unsigned Word, uint64_t Value, bool Wait = false);
/// Frames gathered into a batch by message leave before the next frame
/// once the first waiting one is this old (microseconds, about): while a
/// thread sends, nothing it gathered waits longer. What it gathered
/// before it left the library leaves at its next tc_progress, tc_wait,
/// tc_flush, tc_call or tc_job_quiesce (or the executor's next turn).
constexpr uint64_t GatherAgeUs = 20;

/// What wakeIfSleeping found: the peer sleeps (sends it an AmWake if its
/// sleep flag is still set, taking it), or its ring is cold (rings its
/// doorbell, and wakes it if it sleeps on that).
void notifyPeer(tc_peer *Peer);
/// After a frame or a credit report stored straight into the peer's
/// memory: if the peer sleeps (it set the flag in our credit line before
/// looking at its rings one last time), wakes it; if it polls this ring no
/// more (cold), rings its doorbell. One line of this side's own, which
/// only the peer writes, and seldom.
inline void wakeIfSleeping(tc_peer *Peer) {
  fenceBeforeSleepFlag();
  const volatile uint64_t *Line = Peer->Tx->CreditWord;
  if (__builtin_expect((Line[CreditWordSleep] | Line[CreditWordCold] | Line[CreditWordLimit]) != 0,
                       0))
    notifyPeer(Peer);
}
/// A frame could not be stored: the receiver closed its cold ring to give
/// its pages back. Asks it to open the ring again: its doorbell, else a
/// wake message (either warms the ring, which lifts the limit).
void askToOpen(tc_peer *Peer);
/// A sender that waits for the peer's credits (tc_flush) rings its
/// doorbell: a receiver polling this ring reports them at its first idle
/// poll after the frames ran, rather than after its idle polls or time
/// (receive/Receive.h). False where there is no doorbell to ring.
bool askForCredits(tc_peer *Peer);
/// Whether frame Seq may be stored into the peer's ring: not if the
/// receiver closed it from there (the limit word of wire/Wire.h, as the
/// load after the last frame stored found it). Refused: the reservation
/// is undone and the receiver asked to open it.
bool openSlot(tc_peer *Peer, uint64_t Seq);
inline bool claimSlot(tc_peer *Peer, uint64_t Seq) {
  return __builtin_expect(!Peer->Tx->ClosedAt, 1) || openSlot(Peer, Seq);
}
/// The worker whose progress moves this peer's frames and credits.
ucp_worker_h frameWorker(tc_peer *Peer);
/// Registers the handlers of frames and credits by message, and the frame
/// path's parts of a sleep's look and of a cold ring's opening.
ucs_status_t setupFramePath(CoreContext *Ctx);
/// Gives core's sleep the frame path's look at a peer (SleepLook.cpp).
void setupSleepLook(CoreContext *Ctx);

} // namespace twochains::rt

#endif
