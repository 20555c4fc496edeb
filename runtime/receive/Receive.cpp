//===- Receive.cpp - Running the frames that arrived ----------------------===//
//
// tc_progress polls every sender's ring at the slot it expects next. A
// frame runs only when it is complete and passes every check, made on a
// private copy taken out of the ring (captureFrame): frame fields
// (Frame.cpp), a package this receiver loaded, an element of it, and for
// injected frames an image identical to the package's own. It then runs
// (Local: the library's copy; Injected: the receiver's own copy of the
// package's image, in W^X memory, GOTP and fixups applied, instruction
// stream synchronised) on the private copy of the payload, the slot is
// released, and credits are reported in batches (FramePath.cpp). A
// receiver under TC_CODE_TRUST_JOB copies only the header (and an injected
// frame's image): its jams read their payload in the ring, whose slot is
// released only after they return (docs/security.md, "Code trust").
//
//===----------------------------------------------------------------------===//
#include "receive/Receive.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "base/StatusString.h"
#include "code/InjectedCode.h"
#include "code/SandboxedCode.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Stats.h"
#include "receive/PayloadAhead.h"
#include "receive/Quarantine.h"
#include "path/FramePath.h"
#include "wire/Bundle.h"
#include "wire/Formats.h"

#include <cstdio>
#include <cstring>

using namespace twochains::rt;

void twochains::rt::reportCredits(CoreContext *Ctx, tc_peer *Peer) {
  if (reportCreditWord(Peer, CreditWordFinished, Peer->Rx->Receive->expected()) ==
      CreditReport::Sent) {
    Peer->Rx->Receive->takeCreditReport();
    countHeld(Ctx, &tc_stats_t::credit_reports);
  }
}

/// A frame that never completes (a write cut short, a corrupt byte) would
/// stall its ring for ever. It is given up when the sender has written the
/// frame after it (its trailer shows the next sequence, sound or not) and
/// it has stayed incomplete for TruncationDeadlineNs: the sender has moved
/// on, so its bytes are not still landing.
static constexpr uint64_t TruncationDeadlineNs = 100'000'000;

static bool truncated(CoreContext *Ctx, tc_peer *Peer, uint64_t Seq) {
  uint32_t NextSlot = uint32_t((Seq + 1) % Ctx->Slots);
  if (!frameTrailerShows(ringSlot(Peer->Rx->Ring, Ctx->SlotSize, NextSlot), Ctx->SlotSize,
                         Seq + 1)) {
    Peer->Receiving->StalledSinceNs = 0;
    return false;
  }
  uint64_t Now = nowNs();
  if (!Peer->Receiving->StalledSinceNs) {
    Peer->Receiving->StalledSinceNs = Now;
    return false;
  }
  return Now - Peer->Receiving->StalledSinceNs > TruncationDeadlineNs;
}

/// The receiver package a frame names: the last one the peer's frames
/// named, while no package was added since, else a search (packages are
/// only ever added, and the last added of a tag is the one that runs).
static tc_package *receiverPackage(CoreContext *Ctx, PeerReceive &Receiving, uint64_t Tag) {
  if (Receiving.RunPackage && Receiving.RunPackage->Tag == Tag &&
      Receiving.RunPackagesSeen == Ctx->Package->Packages.size())
    return Receiving.RunPackage;
  tc_package *Pkg = nullptr;
  for (tc_package *P : Ctx->Package->Packages)
    if ((P->Roles & TC_PACKAGE_RECEIVER) && P->Tag == Tag)
      Pkg = P;
  if (Pkg) {
    Receiving.RunPackage = Pkg;
    Receiving.RunPackagesSeen = Ctx->Package->Packages.size();
  }
  return Pkg;
}

/// What every frame that runs a jam is checked for first: its sender's
/// address not refused, a package this receiver loaded, a jam of it, not
/// quarantined for this peer. Pkg and E are set on TC_OK.
static tc_status_t checkJam(CoreContext *Ctx, tc_peer *Peer, const FrameHeader &H, tc_package *&Pkg,
                            const PackageElement *&E) {
  if (addressRefused(Peer))
    return TC_ERR_QUARANTINED;
  tc_package *P = receiverPackage(Ctx, *Peer->Receiving, H.Package);
  if (!P)
    return TC_ERR_UNKNOWN_PACKAGE;
  if (H.Element >= P->Elements.size() || !P->Elements[H.Element].Present ||
      !P->Elements[H.Element].IsJam)
    return TC_ERR_UNKNOWN_ELEMENT;
  if (Peer->Receiving->AbandonedCount &&
      Ctx->Containment->QuarantineFaults != TC_NEVER_QUARANTINE) {
    auto Abandoned = Peer->Receiving->Abandoned.find(H.Element);
    if (Abandoned != Peer->Receiving->Abandoned.end() &&
        Abandoned->second >= Ctx->Containment->QuarantineFaults)
      return TC_ERR_QUARANTINED;
  }
  Pkg = P;
  E = &P->Elements[H.Element];
  return TC_OK;
}

static tc_status_t runFrame(CoreContext *Ctx, tc_peer *Peer, const FrameView &V, JamRun &Run) {
  const FrameHeader &H = V.Header;
  tc_package *Pkg = nullptr;
  const PackageElement *Checked = nullptr;
  if (tc_status_t St = checkJam(Ctx, Peer, H, Pkg, Checked); St != TC_OK)
    return St;
  const PackageElement &E = *Checked;
  tc_jam_ctx JamCtx = {Peer, H.Sequence, Pkg, &Run, Peer->Receiving->FramesBefore};
  if (Pkg->Region) {
    // Admitted by the verified policy: whatever the frame carries, the
    // copy verified into the package's region runs there.
    tc_status_t St = checkSandboxedFrame(E, V);
    if (St == TC_OK)
      St = runSandboxed(*Pkg, E, &JamCtx, const_cast<uint8_t *>(V.Payload), H.PayloadSize);
    if (St == TC_OK)
      countHeld(Ctx, H.Kind == FrameLocal ? &tc_stats_t::frames_executed_local
                                          : &tc_stats_t::frames_executed_injected);
    return St;
  }
  if (H.Kind == FrameLocal) {
    if (!E.LocalEntry)
      return TC_ERR_UNKNOWN_ELEMENT;
    Run.CodeBegin = Pkg->LocalCodeBegin;
    Run.CodeEnd = Pkg->LocalCodeEnd;
    E.LocalEntry(&JamCtx, const_cast<uint8_t *>(V.Payload), H.PayloadSize);
    countHeld(Ctx, &tc_stats_t::frames_executed_local);
    return TC_OK;
  }
  // The hot path of cached frames, inline: one table probe and the call.
  if (H.Kind == FrameCached && Ctx->Image->Cache && runHeldCode(Ctx, E, V, &JamCtx)) {
    countHeld(Ctx, &tc_stats_t::frames_executed_injected);
    return TC_OK;
  }
  tc_status_t St = runInjected(Ctx, *Pkg, H.Element, V, &JamCtx);
  if (St == TC_OK)
    countHeld(Ctx, &tc_stats_t::frames_executed_injected);
  return St;
}

static tc_status_t abandonFrame(CoreContext *Ctx, tc_peer *Peer, const FrameView &V, JamRun &Run,
                                bool Timeout);

/// Runs a frame inside a recovery point: a jam that faults or overruns
/// its time limit is abandoned (JamGuard.h, abandonFrame).
static tc_status_t runContained(CoreContext *Ctx, tc_peer *Peer, const FrameView &V, JamRun &Run) {
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
/// logged once, told to the sender, counted against the element for
/// quarantine, and its time charged to the peer's address
/// (receive/Quarantine.h). Out of line: runContained stays small.
__attribute__((noinline)) static tc_status_t abandonFrame(CoreContext *Ctx, tc_peer *Peer,
                                                          const FrameView &V, JamRun &Run,
                                                          bool Timeout) {
  leaveSandboxAfterAbandon();
  const FrameHeader &H = V.Header;
  countHeld(Ctx, Timeout ? &tc_stats_t::jams_timed_out : &tc_stats_t::jams_faulted);
  count(Peer, &tc_peer_stats_t::jams_abandoned);
  postEvent(Ctx, TC_EVENT_JAM_ABANDONED, Peer->Number,
            Timeout ? TC_ERR_JAM_TIMEOUT : TC_ERR_JAM_FAULT, H.Element, H.Sequence,
            Timeout ? 0 : Run.Signal);
  chargeAbandoned(Ctx, Peer, Run);
  uint32_t Count = ++Peer->Receiving->Abandoned[H.Element];
  ++Peer->Receiving->AbandonedCount;
  std::string Element = std::to_string(H.Element), Package = "?";
  for (tc_package *P : Ctx->Package->Packages)
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
  logLimited(Peer->Receiving->AbandonedFrameLog, TC_LOG_ERROR,
             "abandoned frame " + std::to_string(H.Sequence) + " from " + Peer->Name + ": jam '" +
                 Element + "' of package '" + Package + "' " +
                 (Timeout
                      ? "ran past the time limit (" +
                            std::to_string(Ctx->Containment->Dog->limitMs()) + " ms): interrupted "
                      : "raised ") +
                 Fault +
                 (Ctx->Containment->QuarantineFaults != TC_NEVER_QUARANTINE &&
                          Count == Ctx->Containment->QuarantineFaults
                      ? "; its further frames from this peer are refused (quarantine)"
                      : ""));
  reportCreditWord(Peer, CreditWordFault,
                   faultWord(H.Sequence, H.Element, Timeout ? 0 : Run.Signal,
                             Timeout ? TC_JAM_TIMED_OUT : TC_JAM_FAULTED),
                   /*Wait=*/true);
  return Timeout ? TC_ERR_JAM_TIMEOUT : TC_ERR_JAM_FAULT;
}

/// A cached frame named code this receiver does not hold: tell the sender
/// (one put into its credit line) and wait; it sends the frame again, with
/// code, into the same slot. False if the sender cannot be told.
static bool askForCode(CoreContext *Ctx, tc_peer *Peer, uint64_t Seq) {
  Peer->Receiving->CodeWait.reported(Seq, nowNs());
  countHeld(Ctx, &tc_stats_t::cache_misses);
  return reportCreditWord(Peer, CreditWordMiss, Seq + 1, /*Wait=*/true) == CreditReport::Sent;
}

const volatile void *twochains::rt::watchedWord(CoreContext *Ctx) {
  static const volatile uint64_t Nothing = 0;
  for (tc_peer *P : Ctx->Polled)
    if (P->Rx->Ring && P->Rx->Receive)
      return ringSlot(P->Rx->Ring, Ctx->SlotSize, P->Rx->Receive->expectedSlot());
  // Only cold rings: their senders ring the doorbell.
  if (Ctx->Doorbell && Ctx->ColdPeers)
    return &Ctx->Doorbell[DoorbellSummary];
  return &Nothing;
}

/// A ring gives up its turn after RingBudget frames, so a sender flooding
/// at full speed cannot starve the others.
static constexpr unsigned RingBudget = 16;

/// The frame expected in Slot, captured into the private copy: the common
/// frame (Local or cached, stored in order by a direct sender) in a few
/// compares (one line) or a few more and a copy of its payload; anything
/// else through captureFrame, which tells incomplete from malformed.
/// InRing (TC_CODE_TRUST_JOB): the same checks, on a private copy of the
/// header only; the payload stays where it landed (wire/Frame.h).
template <bool InRing>
static inline tc_status_t captureSlot(CoreContext *Ctx, uint8_t *Slot, uint64_t Seq, bool Idle,
                                      bool Awaiting, FrameView &V) {
  if constexpr (InRing) {
    if (!Idle && !Awaiting &&
        (captureMarkedLineInRing(Slot, Seq, &V) ||
         captureMarkedFrameInRing(Slot, Ctx->SlotSize, Seq, &V)))
      return TC_OK;
  } else {
    if (!Idle && !Awaiting &&
        (captureMarkedLine(Slot, Seq, Ctx->Receive->Private.get(), &V) ||
         captureMarkedFrame(Slot, Ctx->SlotSize, Seq, Ctx->Receive->Private.get(), &V)))
      return TC_OK;
  }
  V = {};
  if (Idle)
    return TC_ERR_INCOMPLETE;
  // A frame sent again over a complete one lands in any order, whatever
  // the transport: only the checksum tells when it is whole.
  Completion How = Awaiting                                       ? Completion::Checksum
                   : (Ctx->Flags & TC_CONTEXT_ORDERED_PLACEMENT) ? Completion::Ordered
                                                                  : Completion::Marked;
  if constexpr (InRing)
    return captureFrameInRing(Slot, Ctx->SlotSize, Seq, Ctx->Receive->Private.get(), &V, How);
  else
    return captureFrame(Slot, Ctx->SlotSize, Seq, Ctx->Receive->Private.get(), &V, How);
}

static void refuseFrame(CoreContext *Ctx, tc_peer *Peer, tc_status_t St, const FrameView &V,
                        uint64_t Seq);

/// A frame's jam, run inside the recovery point.
static inline tc_status_t runJamOf(CoreContext *Ctx, tc_peer *Peer, const FrameView &V,
                                   JamRun &Run) {
  Ctx->Receive->RunningJam = true;
  ThreadRunningJamOf = Ctx;
  tc_status_t St = runContained(Ctx, Peer, V, Run);
  ThreadRunningJamOf = nullptr;
  Ctx->Receive->RunningJam = false;
  count(Peer, &tc_peer_stats_t::frames_executed, St == TC_OK);
  return St;
}

/// The Count frames of one run of a bundle (one element, one payload
/// size; One's header names them, the first's payload at First, the next
/// Stride bytes on), in order. Checked once for all, as runFrame checks
/// each, and run inside one recovery point, each under a time limit of
/// its own (a serial each): a frame whose jam faults or overruns is
/// abandoned alone, and the checks and the run start again after it.
static void runRecords(CoreContext *Ctx, tc_peer *Peer, FrameView &One, const uint8_t *First,
                       uint32_t Count, size_t Stride, uint64_t FirstFrame, JamRun &Run) {
  uint64_t Seq = One.Header.Sequence;
  uint32_t Next = 0;
  while (Next < Count) {
    tc_package *Pkg = nullptr;
    const PackageElement *E = nullptr;
    tc_status_t St = checkJam(Ctx, Peer, One.Header, Pkg, E);
    if (St == TC_OK && !E->LocalEntry && !Pkg->Region)
      St = TC_ERR_UNKNOWN_ELEMENT;
    if (St != TC_OK) {
      for (; Next < Count; ++Next) {
        One.Payload = First + Next * Stride;
        refuseFrame(Ctx, Peer, St, One, Seq);
      }
      return;
    }
    tc_jam_ctx JamCtx = {Peer, Seq, Pkg, &Run, 0};
    uint32_t Size = One.Header.PayloadSize;
    Run.Interrupt.store(false, std::memory_order_relaxed);
    Run.Force.store(false, std::memory_order_relaxed);
    Run.CodeBegin = Pkg->LocalCodeBegin;
    Run.CodeEnd = Pkg->LocalCodeEnd;
    // Read again after a jump back: kept in memory, not in a register.
    volatile uint32_t At = Next;
    // Records of a sandboxed package a service refused (each refused alone).
    volatile uint32_t Refused = 0;
    Ctx->Receive->RunningJam = true;
    ThreadRunningJamOf = Ctx;
    int End = TWOCHAINS_SET_RECOVERY_POINT(Run.Recover);
    if (End == int(JamEnd::Returned)) {
      Run.Active.store(true, std::memory_order_release);
      for (uint32_t I = At; I < Count; At = ++I) {
        Run.Serial.store(Run.Serial.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        JamCtx.Frame = FirstFrame + I;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        uint8_t *Payload = const_cast<uint8_t *>(First + I * Stride);
        if (!Pkg->Region) {
          E->LocalEntry(&JamCtx, Payload, Size);
        } else if (tc_status_t R = runSandboxed(*Pkg, *E, &JamCtx, Payload, Size); R != TC_OK) {
          One.Payload = Payload;
          refuseFrame(Ctx, Peer, R, One, Seq);
          Refused = Refused + 1;
        }
        std::atomic_signal_fence(std::memory_order_seq_cst);
      }
      Run.Active.store(false, std::memory_order_release);
      ThreadRunningJamOf = nullptr;
      Ctx->Receive->RunningJam = false;
      countHeld(Ctx, &tc_stats_t::frames_executed_local, Count - Next - Refused);
      count(Peer, &tc_peer_stats_t::frames_executed, Count - Next - Refused);
      return;
    }
    // Abandoned: the handler jumped back here, from frame At.
    ThreadRunningJamOf = nullptr;
    Ctx->Receive->RunningJam = false;
    uint32_t Failed = At;
    countHeld(Ctx, &tc_stats_t::frames_executed_local, Failed - Next - Refused);
    count(Peer, &tc_peer_stats_t::frames_executed, Failed - Next - Refused);
    One.Payload = First + Failed * Stride;
    refuseFrame(Ctx, Peer, abandonFrame(Ctx, Peer, One, Run, End == int(JamEnd::TimedOut)), One,
                Seq);
    Next = Failed + 1;
  }
}

/// A captured frame handed on: an answer to the calls layer, anything
/// else run inside the recovery point.
static inline tc_status_t dispatchFrame(CoreContext *Ctx, tc_peer *Peer, const FrameView &V,
                                        JamRun &Run) {
  if (V.Header.Kind == FrameAnswer) {
    Ctx->Path->AnswerFrame.notify(Peer, V.Header.Package, V.Payload, V.Header.PayloadSize);
    return TC_OK;
  }
  return runJamOf(Ctx, Peer, V, Run);
}

/// The bundle in the expected slot (wire/Bundle.h): its header taken once,
/// at first sight, then at each turn the frames published since run, in
/// order (from a private copy, or InRing where they lie); Ran counts them.
/// True once it is sealed and every frame has run, or its header was
/// refused: the slot is then finished. False while it is open: the ring
/// waits for more.
template <bool InRing>
static __attribute__((noinline)) bool serveBundle(CoreContext *Ctx, tc_peer *Peer,
                                                  const uint8_t *Slot, uint64_t Seq, JamRun &Run,
                                                  unsigned &Ran) {
  OpenBundleView &B = Peer->Receiving->Bundle;
  if (B.SequencePlusOne != Seq + 1) {
    BundleHeader H;
    tc_status_t St = readBundleHeader(Slot, Ctx->SlotSize, Seq, H);
    if (St == TC_ERR_INCOMPLETE)
      return false;
    if (St != TC_OK) {
      refuseFrame(Ctx, Peer, St, FrameView{}, Seq);
      ++Ran;
      return true;
    }
    B = {Seq + 1, H, 0, 0};
  }
  bool Sealed = bundleSealed(Slot, Ctx->SlotSize, Seq); // the count after it is final
  uint32_t Count = bundleCount(Slot, B.Header);
  // While the sender is still writing (the count moved since the last
  // look), only frames on whole lines before the one it writes are taken:
  // reading that line would pull it away from the sender's core, once a
  // frame. A count that stays is taken whole: nothing is left waiting.
  if (!Sealed && Count != B.Seen) {
    B.Seen = Count;
    size_t Lines = (FrameLine + size_t(Count) * B.Header.Stride) / FrameLine;
    Count = uint32_t((Lines - 1) * FrameLine / B.Header.Stride);
  }
  if (Count > B.Ran) {
    const uint8_t *First = Slot + FrameLine + size_t(B.Ran) * B.Header.Stride;
    size_t Bytes = size_t(Count - B.Ran) * B.Header.Stride;
    if constexpr (!InRing) {
      std::memcpy(Ctx->Receive->Private.get(), First, Bytes);
      First = Ctx->Receive->Private.get();
    }
    FrameView One = {};
    One.Header.Magic = FrameMagic;
    One.Header.Version = FrameVersion;
    One.Header.Kind = FrameLocal;
    One.Header.Package = B.Header.Package;
    One.Header.Sequence = Seq;
    One.Header.Element = B.Header.Element;
    One.Header.PayloadSize = B.Header.Size;
    uint32_t From = B.Ran;
    B.Ran = Count;
    runRecords(Ctx, Peer, One, First, Count - From, B.Header.Stride,
               Peer->Receiving->FramesBefore + From, Run);
    Ran += Count - From;
  }
  if (!Sealed)
    return false;
  // Its frames are counted before the next slot's (tc_jam_sequence); the
  // slot's own one is counted as every slot's.
  Peer->Receiving->FramesBefore += B.Ran ? B.Ran - 1 : 0;
  B = {};
  return true;
}

/// Tells the sender of the last frame of its refused, without waiting: the
/// credit line's fault word holds one report, so while the previous one is
/// still in flight only the latest waits, and leaves at the ring's next
/// turn. A sender of nothing but refused frames costs one report a frame
/// (each took a slot of its window), never a wait.
static void tellRefusal(tc_peer *Peer) {
  if (reportCreditWord(Peer, CreditWordFault, Peer->Receiving->RefusalPending) !=
      CreditReport::Busy)
    Peer->Receiving->RefusalPending = 0;
}

/// A frame that did not run: counted; a quarantined element or address
/// told to the sender once, a dropped frame logged (within the peer's
/// budget), posted and told to its sender, with why (faults and overruns
/// were logged and told where they were found, an address's quarantine
/// where it began). Out of line: serveRing stays small.
__attribute__((noinline)) static void refuseFrame(CoreContext *Ctx, tc_peer *Peer, tc_status_t St,
                                                  const FrameView &V, uint64_t Seq) {
  if (St == TC_ERR_QUARANTINED) {
    countHeld(Ctx, &tc_stats_t::frames_quarantined);
    count(Peer, &tc_peer_stats_t::frames_rejected);
    postEvent(Ctx, TC_EVENT_FRAME_REJECTED, Peer->Number, St, V.Header.Element, Seq);
    // Its address (checked first), else the element.
    bool Tell;
    if (Peer->Receiving->AddressRefusedUntilNs) {
      Tell = !Peer->Receiving->AddressRefusalTold;
      Peer->Receiving->AddressRefusalTold = true;
    } else {
      uint32_t &Told = Peer->Receiving->Abandoned[V.Header.Element];
      Tell = Told == Ctx->Containment->QuarantineFaults;
      Told += Tell;
    }
    if (Tell)
      reportCreditWord(Peer, CreditWordFault,
                       faultWord(Seq, V.Header.Element, 0, TC_JAM_QUARANTINED), true);
  } else if (St == TC_ERR_JAM_FAULT || St == TC_ERR_JAM_TIMEOUT) {
    countHeld(Ctx, &tc_stats_t::frames_rejected);
  } else {
    countHeld(Ctx, &tc_stats_t::frames_rejected);
    count(Peer, &tc_peer_stats_t::frames_rejected);
    logLimited(Peer->Receiving->RefusedFrameLog, TC_LOG_ERROR,
               "dropped frame " + std::to_string(Seq) + " from " + Peer->Name + ": " +
                   statusString(St));
    postEvent(Ctx, TC_EVENT_FRAME_REJECTED, Peer->Number, St, V.Header.Element, Seq);
    // The status, negated, in the signal's field. A frame that never
    // captured (malformed, cut short) has no element to name: V is empty.
    Peer->Receiving->RefusalPending = faultWord(Seq, V.Header.Element, -int(St), TC_JAM_REFUSED);
    tellRefusal(Peer);
  }
}

/// serveRing under one way of capturing (captureSlot), chosen per context.
/// The slot is finished, and so may be credited and rewritten, only after
/// its frame was dispatched: a jam reading its payload in the ring
/// (InRing) reads a slot no sender may write yet.
template <bool InRing> static unsigned serveRingWith(CoreContext *Ctx, tc_peer *Peer, JamRun &Run) {
  PeerReceiveHalf &Rx = *Peer->Rx;
  PeerReceive &Receiving = *Peer->Receiving;
  unsigned Count = 0;
  for (unsigned Budget = RingBudget; Budget; --Budget) {
    uint64_t Seq = Rx.Receive->expected();
    uint8_t *Slot = ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot());
    bool Awaiting = Receiving.CodeWait.awaiting(Seq);
    // Idle, one load: the first line's last word. Whether a frame that
    // stays incomplete was cut short is looked at now and then: the
    // deadline is 100 ms, and every empty poll comes here.
    bool Idle = !Awaiting && !frameMayHaveArrived(Slot, Seq);
    if (Idle && (++Receiving.IncompletePolls & (TruncationCheckEvery - 1)))
      break;
    if (!Idle && !Awaiting && bundleBegun(Slot, Ctx->SlotSize)) {
      // Many frames' work: the bundle takes the rest of the turn.
      unsigned Ran = 0;
      bool Finished = serveBundle<InRing>(Ctx, Peer, Slot, Seq, Run, Ran);
      Count += Ran;
      if (Ran)
        Receiving.IdlePolls = 0;
      if (!Finished)
        break;
      Budget = 1;
      ++Receiving.FramesBefore;
      if (Rx.Receive->finish())
        reportCredits(Ctx, Peer);
      continue;
    }
    FrameView V;
    tc_status_t St = captureSlot<InRing>(Ctx, Slot, Seq, Idle, Awaiting, V);
    MissWait::Step Step = MissWait::Step::Run;
    if (Awaiting)
      Step = Receiving.CodeWait.step(Seq, St == TC_OK && V.Header.Kind == FrameInjected, nowNs());
    if (Step != MissWait::Step::Run) {
      // The code was asked for: the slot is being rewritten with the
      // frame and its code, and reads as anything until that lands whole.
      if (Step == MissWait::Step::Wait)
        break;
      St = TC_ERR_NOT_CACHED; // the sender never sent it: give up
    } else {
      if (St == TC_ERR_INCOMPLETE &&
          ((!Idle && (++Receiving.IncompletePolls & (TruncationCheckEvery - 1))) ||
           !truncated(Ctx, Peer, Seq)))
        break;
      Receiving.StalledSinceNs = 0;
      // A payload sent ahead travels apart from its frame: the frame waits
      // for it in its slot (receive/PayloadAhead.h).
      if (St == TC_OK && __builtin_expect(V.Header.Inline[0] & FramePayloadAhead, 0) &&
          (St = takePayloadAhead(Ctx, Peer, V)) == TC_ERR_INCOMPLETE)
        break;
      if (St == TC_OK)
        St = dispatchFrame(Ctx, Peer, V, Run);
      if (St == TC_ERR_NOT_CACHED && V.Header.Kind == FrameCached &&
          Ctx->Code->Mode == TC_MAILBOX_CODE_CACHE && askForCode(Ctx, Peer, Seq))
        break; // its code is on the way
    }
    if (__builtin_expect(!Ctx->Receive->PayloadsArriving.empty(), 0))
      finishPayloadAhead(Ctx, Peer, Seq);
    if (St != TC_OK)
      refuseFrame(Ctx, Peer, St, V, Seq);
    ++Count;
    Receiving.IdlePolls = 0;
    ++Receiving.FramesBefore;
    if (Rx.Receive->finish())
      reportCredits(Ctx, Peer);
  }
  // Idle with frames unreported: tell the sender, but not at the first
  // empty poll — in a ping-pong that would be one more put and one more
  // cache line crossing cores per message; the batch reports keep a
  // streaming sender going, this one only unblocks a sender that waits.
  if (Rx.Receive->creditPending() && idleReportDue(Receiving))
    reportCredits(Ctx, Peer);
  if (Receiving.RefusalPending)
    tellRefusal(Peer);
  return Count;
}

unsigned twochains::rt::serveRing(CoreContext *Ctx, tc_peer *Peer, JamRun &Run) {
  // The policy never changes in a context's life: one predictable branch
  // a ring's turn, none a frame.
  if (Ctx->Package->CodeTrust == TC_CODE_TRUST_JOB)
    return serveRingWith<true>(Ctx, Peer, Run);
  return serveRingWith<false>(Ctx, Peer, Run);
}

void twochains::rt::finishBundleAtClose(CoreContext *Ctx, tc_peer *Peer) {
  PeerReceiveHalf &Rx = *Peer->Rx;
  OpenBundleView &B = Peer->Receiving->Bundle;
  if (!Rx.Receive || !Rx.Ring || B.SequencePlusOne != Rx.Receive->expected() + 1 ||
      bundleCount(ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot()), B.Header) != B.Ran)
    return;
  Peer->Receiving->FramesBefore += B.Ran;
  B = {};
  Rx.Receive->finish();
}
