//===- Executor.cpp - Running the frames that arrived ---------------------===//
//
// tc_progress polls every sender's ring at the slot it expects next. A
// frame runs only when it is complete and passes every check, made on a
// private copy taken out of the ring (captureFrame): frame fields
// (Frame.cpp), a package this receiver loaded, an element of it, and for
// injected frames an image identical to the package's own. It then runs
// (Local: the library's copy; Injected: the receiver's own copy of the
// package's image, in W^X memory, GOTP and fixups applied, instruction
// stream synchronised) on the private copy of the payload, the slot is
// released, and credits are reported in batches (FramePath.cpp).
//
//===----------------------------------------------------------------------===//
#include "Frame.h"
#include "Formats.h"
#include "Log.h"
#include "Runtime.h"

#include <csetjmp>
#include <cstdio>

#include <chrono>
#include <cstring>

using namespace twochains::rt;

static void reportCredits(tc_context *Ctx, tc_peer *Peer) {
  if (reportCreditWord(Peer, CreditWordFinished, Peer->Rx.Receive->expected()) ==
      CreditReport::Sent) {
    Peer->Rx.Receive->takeCreditReport();
    ++Ctx->Stats.credit_reports;
  }
}

/// A frame that never completes (a write cut short, a corrupt byte) would
/// stall its ring for ever. It is given up when the sender has written the
/// frame after it (its trailer shows the next sequence, sound or not) and
/// it has stayed incomplete for TruncationDeadlineNs: the sender has moved
/// on, so its bytes are not still landing.
static constexpr uint64_t TruncationDeadlineNs = 100'000'000;
static constexpr unsigned TruncationCheckEvery = 64; // a power of two

static bool truncated(tc_context *Ctx, tc_peer *Peer, uint64_t Seq) {
  uint32_t NextSlot = uint32_t((Seq + 1) % Ctx->Slots);
  if (!frameTrailerShows(ringSlot(Peer->Rx.Ring, Ctx->SlotSize, NextSlot), Ctx->SlotSize,
                         Seq + 1)) {
    Peer->Rx.StalledSinceNs = 0;
    return false;
  }
  uint64_t Now = nowNs();
  if (!Peer->Rx.StalledSinceNs) {
    Peer->Rx.StalledSinceNs = Now;
    return false;
  }
  return Now - Peer->Rx.StalledSinceNs > TruncationDeadlineNs;
}

/// The receiver package a frame names: the last one the peer's frames
/// named, while no package was added since, else a search (packages are
/// only ever added, and the last added of a tag is the one that runs).
static tc_package *receiverPackage(tc_context *Ctx, PeerReceiveHalf &Rx, uint64_t Tag) {
  if (Rx.RunPackage && Rx.RunPackage->Tag == Tag && Rx.RunPackagesSeen == Ctx->Packages.size())
    return Rx.RunPackage;
  tc_package *Pkg = nullptr;
  for (tc_package *P : Ctx->Packages)
    if ((P->Roles & TC_PACKAGE_RECEIVER) && P->Tag == Tag)
      Pkg = P;
  if (Pkg) {
    Rx.RunPackage = Pkg;
    Rx.RunPackagesSeen = Ctx->Packages.size();
  }
  return Pkg;
}

static tc_status_t runFrame(tc_context *Ctx, tc_peer *Peer, const FrameView &V, JamRun &Run) {
  const FrameHeader &H = V.Header;
  tc_package *Pkg = receiverPackage(Ctx, Peer->Rx, H.Package);
  if (!Pkg)
    return TC_ERR_UNKNOWN_PACKAGE;
  if (H.Element >= Pkg->Elements.size())
    return TC_ERR_UNKNOWN_ELEMENT;
  const PackageElement &E = Pkg->Elements[H.Element];
  if (!E.Present || !E.IsJam)
    return TC_ERR_UNKNOWN_ELEMENT;
  if (Peer->Rx.AbandonedCount && Ctx->QuarantineFaults != TC_NEVER_QUARANTINE) {
    auto Abandoned = Peer->Rx.Abandoned.find(H.Element);
    if (Abandoned != Peer->Rx.Abandoned.end() && Abandoned->second >= Ctx->QuarantineFaults)
      return TC_ERR_QUARANTINED;
  }
  tc_jam_ctx JamCtx = {Peer, H.Sequence, Pkg, &Run};
  if (H.Kind == FrameLocal) {
    if (!E.LocalEntry)
      return TC_ERR_UNKNOWN_ELEMENT;
    Run.CodeBegin = Pkg->LocalCodeBegin;
    Run.CodeEnd = Pkg->LocalCodeEnd;
    E.LocalEntry(&JamCtx, const_cast<uint8_t *>(V.Payload), H.PayloadSize);
    ++Ctx->Stats.frames_executed_local;
    return TC_OK;
  }
  if (H.Kind == FrameCached && Ctx->Cache) {
    // The hot path of cached frames, inline: one table probe and the call.
    if (const CachedCode *C = Ctx->Cache->find(H.Code, H.Package, H.Element)) {
      const uint8_t *Code = Ctx->Cache->executableCode(*C);
      Run.CodeBegin = uintptr_t(Code);
      Run.CodeEnd = uintptr_t(Code) + E.Image.Bytes.size();
      reinterpret_cast<JamEntry>(const_cast<uint8_t *>(Code) + E.Image.Entry)(
          &JamCtx, const_cast<uint8_t *>(V.Payload), H.PayloadSize);
      ++Ctx->Stats.frames_executed_cached;
      ++Ctx->Stats.frames_executed_injected;
      return TC_OK;
    }
  }
  tc_status_t St = runInjected(Ctx, *Pkg, H.Element, V, &JamCtx);
  if (St == TC_OK)
    ++Ctx->Stats.frames_executed_injected;
  return St;
}

static tc_status_t abandonFrame(tc_context *Ctx, tc_peer *Peer, const FrameView &V, JamRun &Run,
                                bool Timeout);

/// Runs a frame inside a recovery point: a jam that faults or overruns
/// its time limit is abandoned (JamGuard.h, abandonFrame).
static tc_status_t runContained(tc_context *Ctx, tc_peer *Peer, const FrameView &V,
                                JamRun &Run) {
  Run.Interrupt.store(false, std::memory_order_relaxed);
  Run.Force.store(false, std::memory_order_relaxed);
  Run.CodeBegin = Run.CodeEnd = 0;
  Run.Serial.store(Run.Serial.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  int End = TWOCHAINS_SET_RECOVERY_POINT(Run.Recover);
  if (End == int(JamEnd::Returned)) {
    Run.Active.store(true, std::memory_order_release);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    tc_status_t St = runFrame(Ctx, Peer, V, Run);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    Run.Active.store(false, std::memory_order_release);
    return St;
  }
  // Abandoned: the handler jumped back here.
  return abandonFrame(Ctx, Peer, V, Run, End == int(JamEnd::TimedOut));
}

/// A frame whose jam faulted or ran past its limit: counted, posted,
/// logged once, told to the sender, and counted against the element for
/// quarantine. Out of line: runContained stays small.
__attribute__((noinline)) static tc_status_t
abandonFrame(tc_context *Ctx, tc_peer *Peer, const FrameView &V, JamRun &Run, bool Timeout) {
  const FrameHeader &H = V.Header;
  ++(Timeout ? Ctx->Stats.jams_timed_out : Ctx->Stats.jams_faulted);
  ++Peer->Stats.jams_abandoned;
  postEvent(Ctx, TC_EVENT_JAM_ABANDONED, Peer->Number,
            Timeout ? TC_ERR_JAM_TIMEOUT : TC_ERR_JAM_FAULT, H.Element, H.Sequence,
            Timeout ? 0 : Run.Signal);
  uint32_t Count = ++Peer->Rx.Abandoned[H.Element];
  ++Peer->Rx.AbandonedCount;
  std::string Element = std::to_string(H.Element), Package = "?";
  for (tc_package *P : Ctx->Packages)
    if (P->Tag == H.Package) {
      Package = P->Name;
      if (H.Element < P->Elements.size())
        Element = P->Elements[H.Element].Name;
    }
  char Where[96];
  if (Run.FaultPC >= Run.CodeBegin && Run.FaultPC < Run.CodeEnd)
    std::snprintf(Where, sizeof Where, "at offset 0x%llx in its code",
                  (unsigned long long)(Run.FaultPC - Run.CodeBegin));
  else
    std::snprintf(Where, sizeof Where, "at 0x%llx, outside its code (in a library it called)",
                  (unsigned long long)Run.FaultPC);
  std::string Fault = Timeout ? std::string(Where) : std::string(signalName(Run.Signal)) + " " + Where;
  if (!Timeout) {
    char Address[40];
    std::snprintf(Address, sizeof Address, ", address 0x%llx",
                  (unsigned long long)Run.FaultAddress);
    Fault += Address;
  }
  logError("abandoned frame " + std::to_string(H.Sequence) + " from " + Peer->Name + ": jam '" +
           Element + "' of package '" + Package + "' " +
           (Timeout ? "ran past the time limit (" + std::to_string(Ctx->Dog->limitMs()) +
                          " ms): interrupted "
                    : "raised ") +
           Fault +
           (Ctx->QuarantineFaults != TC_NEVER_QUARANTINE && Count == Ctx->QuarantineFaults
                ? "; its further frames from this peer are refused (quarantine)"
                : ""));
  reportCreditWord(Peer, CreditWordFault,
                   faultWord(H.Sequence, H.Element, Timeout ? 0 : Run.Signal,
                             Timeout ? TC_JAM_TIMED_OUT : TC_JAM_FAULTED),
                   /*Wait=*/true);
  return Timeout ? TC_ERR_JAM_TIMEOUT : TC_ERR_JAM_FAULT;
}

static constexpr unsigned ControlEvery = 8;
/// A clock read costs about 30 ns in a VM, an idle poll about as much:
/// read every 8 calls, it was an eighth of a waiting receiver's time, and
/// a frame that lands during one waits for it.
static constexpr unsigned ClockEvery = 64;
static constexpr unsigned RingBudget = 16;
static constexpr uint64_t ControlPeriodNs = 1'000'000;
static constexpr uint64_t ControlBusyPeriodNs = 10'000'000;
static constexpr unsigned IdleReportPolls = 64;

/// A cached frame named code this receiver does not hold: tell the sender
/// (one put into its credit line) and wait; it sends the frame again, with
/// code, into the same slot. False if the sender cannot be told.
static bool askForCode(tc_context *Ctx, tc_peer *Peer, uint64_t Seq) {
  Peer->Rx.CodeWait.reported(Seq, nowNs());
  ++Ctx->Stats.cache_misses;
  return reportCreditWord(Peer, CreditWordMiss, Seq + 1, /*Wait=*/true) == CreditReport::Sent;
}

/// The word a frame's arrival will write first: the header line of the
/// slot the first ring expects next.
static const volatile void *watchedWord(tc_context *Ctx) {
  static const volatile uint64_t Nothing = 0;
  for (auto &P : Ctx->Accepted)
    if (P->Rx.Ring && P->Rx.Receive)
      return ringSlot(P->Rx.Ring, Ctx->SlotSize, P->Rx.Receive->expectedSlot());
  for (tc_peer *P : Ctx->Connected)
    if (P->Rx.Ring && P->Rx.Receive)
      return ringSlot(P->Rx.Ring, Ctx->SlotSize, P->Rx.Receive->expectedSlot());
  return &Nothing;
}

extern "C" tc_status_t tc_executor_start(tc_context_t *Ctx) {
  if (!Ctx || Ctx->Executor.joinable())
    return TC_ERR_INVALID_PARAM;
  Ctx->StopExecutor = false;
  Ctx->ExecutorRunning = true;
  Ctx->Executor = std::thread([Ctx] {
    while (!Ctx->StopExecutor.load(std::memory_order_relaxed)) {
      unsigned Ran = 0;
      const volatile void *Watched;
      {
        lockContext(Ctx);
        std::lock_guard<std::recursive_mutex> G(Ctx->Lock, std::adopt_lock);
        tc_progress(Ctx, &Ran);
        Watched = watchedWord(Ctx);
      }
      // Application threads waiting for the lock go first.
      while (Ctx->LockWaiters.load(std::memory_order_relaxed) > 0 &&
             !Ctx->StopExecutor.load(std::memory_order_relaxed))
        std::this_thread::yield();
      // An answer to a call comes on the control worker, not into a ring.
      if (!Ran && !Ctx->CallsOutstanding)
        Ctx->Wait->wait(Watched);
    }
  });
  return TC_OK;
}

extern "C" tc_status_t tc_executor_stop(tc_context_t *Ctx) {
  if (!Ctx || !Ctx->Executor.joinable())
    return TC_ERR_INVALID_PARAM;
  Ctx->StopExecutor = true;
  Ctx->Executor.join();
  Ctx->ExecutorRunning = false;
  return TC_OK;
}

extern "C" const char *tc_wait_mode_name(const tc_context_t *Ctx) {
  return Ctx && Ctx->Wait ? Ctx->Wait->name() : "";
}

/// Up to RingBudget frames of a peer's ring, in sequence, and its credit
/// reports. Returns the frames it finished.
static unsigned serveRing(tc_context *Ctx, tc_peer *Peer, JamRun &Run) {
  unsigned Count = 0;
  // A ring gives up its turn after RingBudget frames, so a sender
  // flooding at full speed cannot starve the others.
  for (unsigned Budget = RingBudget; Budget; --Budget) {
    uint64_t Seq = Peer->Rx.Receive->expected();
    uint8_t *Slot = ringSlot(Peer->Rx.Ring, Ctx->SlotSize, Peer->Rx.Receive->expectedSlot());
    // A frame sent again over a complete one lands in any order, whatever
    // the transport: only the checksum tells when it is whole.
    bool Awaiting = Peer->Rx.CodeWait.awaiting(Seq);
    // Idle, one load: the first line's last word. Whether a frame that
    // stays incomplete was cut short is looked at now and then: the
    // deadline is 100 ms, and every empty poll comes here.
    bool Idle = !Awaiting && !frameMayHaveArrived(Slot, Seq);
    if (Idle && (++Peer->Rx.IncompletePolls & (TruncationCheckEvery - 1)))
      break;
    FrameView V;
    tc_status_t St = TC_OK;
    // The common frame, Local or cached, stored in order by a direct
    // sender: in a few compares (one line) or a few more and a copy of its
    // payload; anything else, captureFrame.
    if (Idle || Awaiting ||
        !(captureMarkedLine(Slot, Seq, Ctx->Private.get(), &V) ||
          captureMarkedFrame(Slot, Ctx->SlotSize, Seq, Ctx->Private.get(), &V))) {
      V = {};
      Completion How = Awaiting                                       ? Completion::Checksum
                       : (Ctx->Flags & TC_CONTEXT_ORDERED_PLACEMENT) ? Completion::Ordered
                                                                      : Completion::Marked;
      St = Idle ? TC_ERR_INCOMPLETE
                : captureFrame(Slot, Ctx->SlotSize, Seq, Ctx->Private.get(), &V, How);
    }
    MissWait::Step Step = MissWait::Step::Run;
    if (Awaiting)
      Step = Peer->Rx.CodeWait.step(Seq, St == TC_OK && V.Header.Kind == FrameInjected, nowNs());
    if (Step != MissWait::Step::Run) {
      // The code was asked for: the slot is being rewritten with the
      // frame and its code, and reads as anything until that lands whole.
      if (Step == MissWait::Step::Wait)
        break;
      St = TC_ERR_NOT_CACHED; // the sender never sent it: give up
    } else {
      if (St == TC_ERR_INCOMPLETE &&
          ((!Idle && (++Peer->Rx.IncompletePolls & (TruncationCheckEvery - 1))) ||
           !truncated(Ctx, Peer, Seq)))
        break;
      Peer->Rx.StalledSinceNs = 0;
      if (St == TC_OK && V.Header.Kind == FrameAnswer) {
        takeAnswer(Peer, V.Header.Package, V.Payload, V.Header.PayloadSize);
      } else if (St == TC_OK) {
        Ctx->RunningJam = true;
        ThreadRunningJamOf = Ctx;
        St = runContained(Ctx, Peer, V, Run);
        ThreadRunningJamOf = nullptr;
        Ctx->RunningJam = false;
        Peer->Stats.frames_executed += St == TC_OK;
      }
      if (St == TC_ERR_NOT_CACHED && V.Header.Kind == FrameCached &&
          Ctx->Mode == TC_MAILBOX_CODE_CACHE && askForCode(Ctx, Peer, Seq))
        break; // its code is on the way
    }
    if (St == TC_ERR_QUARANTINED) {
      // Counted, told to the sender once per element, not logged again.
      ++Ctx->Stats.frames_quarantined;
      ++Peer->Stats.frames_rejected;
      postEvent(Ctx, TC_EVENT_FRAME_REJECTED, Peer->Number, St, V.Header.Element, Seq);
      uint32_t &Told = Peer->Rx.Abandoned[V.Header.Element];
      if (Told == Ctx->QuarantineFaults) {
        ++Told;
        reportCreditWord(Peer, CreditWordFault,
                         faultWord(Seq, V.Header.Element, 0, TC_JAM_QUARANTINED), true);
      }
    } else if (St == TC_ERR_JAM_FAULT || St == TC_ERR_JAM_TIMEOUT) {
      ++Ctx->Stats.frames_rejected; // logged where it was found
    } else if (St != TC_OK) {
      ++Ctx->Stats.frames_rejected;
      ++Peer->Stats.frames_rejected;
      logError("dropped frame " + std::to_string(Seq) + " from " + Peer->Name + ": " +
               tc_status_string(St));
      postEvent(Ctx, TC_EVENT_FRAME_REJECTED, Peer->Number, St, V.Header.Element, Seq);
    }
    ++Count;
    Peer->Rx.IdlePolls = 0;
    if (Peer->Rx.Receive->finish())
      reportCredits(Ctx, Peer);
  }
  // Idle with frames unreported: tell the sender, but not at the first
  // empty poll — in a ping-pong that would be one more put and one more
  // cache line crossing cores per message; the batch reports keep a
  // streaming sender going, this one only unblocks a sender that waits.
  if (Peer->Rx.Receive->creditPending() && ++Peer->Rx.IdlePolls >= IdleReportPolls)
    reportCredits(Ctx, Peer);
  return Count;
}

/// One peer's turn in tc_progress: its reports, its queued frames, and its
/// ring. Returns the frames it finished.
static unsigned servePeer(tc_context *Ctx, tc_peer *Peer, JamRun &Run) {
  // A channel that an application thread is sending on keeps its turn
  // for the next pass: this side never waits for it.
  std::unique_lock<std::recursive_mutex> Channel(Peer->Channel, std::defer_lock);
  if (Peer->Channelled && !Channel.try_lock())
    return 0;
  if (!Ctx->ArrivedAnswers.empty())
    takeArrivedAnswers(Peer);
  // Miss and fault reports are rare: looked for every ControlEvery calls
  // (and whenever a send runs out of credits, or a flush waits).
  if (Ctx->ControlPolls == 0) {
    resendMissing(Peer);
    takeFaultReport(Peer);
  }
  if (Peer->Tx.BatchFrames)
    flushFrameBatch(Peer); // a failure marks the peer failed
  if (!Peer->Tx.Queued.empty())
    sendQueued(Peer);
  // A peer that went away may have left complete frames behind: they
  // still run (nothing sent is lost); only credits stop.
  if (!Peer->Rx.Ring || !Peer->Welcomed)
    return 0;
  return serveRing(Ctx, Peer, Run);
}

/// The control worker's turn and the context's housekeeping, when the
/// clock says one is due (tc_progress reads it every ClockEvery calls).
__attribute__((noinline)) static void controlTurn(tc_context *Ctx) {
  uint64_t Now = nowNs();
  uint64_t Period = Ctx->RanSinceClock ? ControlBusyPeriodNs : ControlPeriodNs;
  Ctx->RanSinceClock = 0;
  if (Now - Ctx->ControlTurnNs < Period)
    return;
  Ctx->ControlTurnNs = Now;
  ucp_worker_progress(Ctx->Worker);
  processHandshakes(Ctx);
  processPushedRieds(Ctx);
  processPushedCode(Ctx);
  reapPeers(Ctx);
  closeRetiredRoutes(Ctx);
  sweepReplies(Ctx);
  dropStrayAnswers(Ctx);
}

/// Whether the receiver has written a miss or fault report this side has
/// not taken: two loads, where taking them (servePeer) is a few hundred
/// instructions.
static inline bool reportsWaiting(const tc_peer *Peer) {
  const volatile uint64_t *W = Peer->Tx.CreditWord;
  return W && Peer->Tx.Send &&
         (Peer->Tx.Misses.mayTake(W[CreditWordMiss]) || W[CreditWordFault] != Peer->Tx.FaultSeen);
}

/// One peer's part of tc_progress. An idle ring with nothing else due
/// costs one load: the first line's last word of the slot it expects
/// (frameMayHaveArrived). Now and then it takes the full turn anyway, to
/// see whether a frame that never began to arrive was skipped by its
/// sender (truncated()). A frame in a ring with nothing else due goes
/// straight to the ring: what servePeer would do first is known to be
/// nothing then. ReportTurn: this call looks for miss and fault reports.
static inline unsigned pollPeer(tc_context *Ctx, tc_peer *Peer, bool ReportTurn, JamRun &Run) {
  PeerReceiveHalf &Rx = Peer->Rx;
  if (!Ctx->ArrivedAnswers.empty() || (ReportTurn && reportsWaiting(Peer)) || Peer->Channelled ||
      !Rx.Ring || !Peer->Welcomed || !Peer->Tx.Queued.empty() || Peer->Tx.BatchFrames ||
      Rx.CodeWait.awaiting(Rx.Receive->expected()))
    return servePeer(Ctx, Peer, Run);
  if (!frameMayHaveArrived(ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot()),
                           Rx.Receive->expected()) &&
      ((Rx.IncompletePolls + 1) & (TruncationCheckEvery - 1))) {
    ++Rx.IncompletePolls;
    if (Rx.Receive->creditPending() && ++Rx.IdlePolls >= IdleReportPolls)
      reportCredits(Ctx, Peer);
    return 0;
  }
  return serveRing(Ctx, Peer, Run);
}

extern "C" tc_status_t tc_progress(tc_context_t *Ctx, unsigned *Executed) {
  if (!Ctx)
    return TC_ERR_INVALID_PARAM;
  HotPathGuard Guard(Ctx);
  if (Ctx->RunningJam) {
    // The frame being run lives in the context's private copy, which the
    // next frame would overwrite under it.
    logError("tc_progress called from inside a running jam: refused");
    return TC_ERR_INVALID_PARAM;
  }
  if (!JamGuardReady) {
    std::string GuardError;
    if (!prepareJamGuard(GuardError)) {
      logError(GuardError);
      return TC_ERR_IO;
    }
  }
  JamRun &Run = currentJamRun();
  if (Ctx->Dog)
    Ctx->Dog->watch(&Run);
  // Frames into this side's rings need no progress here (the sender's put
  // or stores write them); only this side's own puts (credits, replies)
  // do, and those complete at their next report or a later turn. So the
  // data worker turns every call only while this side puts to a peer and
  // no thread sends on channels (a multi-threaded worker's progress takes
  // UCX's lock, which every sending thread's put takes too); else every
  // ClockEvery calls, for connections being wired up.
  if (Ctx->DataWorker && ((Ctx->PutPeers && !Ctx->Channels) || Ctx->ClockPolls == 0))
    ucp_worker_progress(Ctx->DataWorker);
  // The control worker (TCP: an epoll_wait system call per progress, a
  // microsecond or more in a VM) takes a turn at most every ControlPeriodNs,
  // the clock read every ClockEvery calls: connections and rieds wait a
  // little, frames by RMA never. While frames run (some ran since the
  // clock was last read), every ControlBusyPeriodNs: each turn stalls the
  // frame behind it by its system calls, which is the tail of a stream.
  // Frames by message arrive on it: with such peers it is progressed every
  // call. Answers to calls come as frames unless larger than a slot: while
  // calls are outstanding it turns every ControlEvery calls, not every call
  // (a system call each over TCP).
  if (Ctx->AmPeers || (Ctx->CallsOutstanding && Ctx->ControlPolls == 0))
    ucp_worker_progress(Ctx->Worker);
  if (++Ctx->ControlPolls >= ControlEvery)
    Ctx->ControlPolls = 0;
  if (++Ctx->ClockPolls >= ClockEvery) {
    Ctx->ClockPolls = 0;
    controlTurn(Ctx);
  }
  unsigned Count = 0;
  // Frames come from the senders that connected to us and, as replies,
  // from the receivers we connected to. By index, without a copy on the
  // hot path: a jam may connect onward (tc_jam_forward) and so append to
  // Connected while we iterate.
  bool ReportTurn = Ctx->ControlPolls == 0;
  for (size_t I = 0; I < Ctx->Connected.size(); ++I)
    Count += pollPeer(Ctx, Ctx->Connected[I], ReportTurn, Run);
  for (size_t I = 0; I < Ctx->Accepted.size(); ++I)
    Count += pollPeer(Ctx, Ctx->Accepted[I].get(), ReportTurn, Run);
  Ctx->RanSinceClock += Count;
  if (Executed)
    *Executed = Count;
  return TC_OK;
}
