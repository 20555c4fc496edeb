//===- Send.cpp - tc_send: frames built, put, queued and shipped ahead ---===//
//
// To a receiver with a code cache, an element's code travels in its first
// injected frame only; later ones name it by hash (cached frames). The
// sender believes the receiver holds what it has shipped; when the
// receiver has evicted it, it reports the frame's sequence in the credit
// line, and the frame is sent again, with code, into the same slot.
//
// An image that does not fit a slot beside its payload is shipped once,
// ahead of its first frame (CodeTransfer.cpp), and all its frames are
// cached frames, to a receiver in either mailbox mode. Nothing waits for
// the receiver's answer: the frame is queued for the peer, and so is every
// frame after it to that peer (frames to one peer run in the order sent),
// until the answer comes on a later turn (tc_progress, the executor,
// tc_flush). A refusal drops the element's frames that needed the code.
//
//===----------------------------------------------------------------------===//
#include "send/Send.h"
#include "send/Bundle.h"
#include "send/Queue.h"

#include "base/Clock.h"
#include "base/Log.h"
#include "base/StatusString.h"
#include "code/CodeTransfer.h"
#include "code/Deploy.h"
#include "containment/JamGuard.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Polled.h"
#include "core/Sleep.h"
#include "core/Stats.h"
#include "path/FramePath.h"
#include "send/PayloadAhead.h"
#include "wire/Formats.h"
#include "wire/Frame.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <deque>
#include <iterator>
#include <sched.h>
#include <vector>

using namespace twochains::rt;

/// The element's injected-frame template: header line and image already
/// there, so a send writes only the payload, the sequence and the trailer.
/// GOTP travels as zero: the receiver sets it in its own copy, and no peer
/// learns where the receiver's import tables are.
static uint8_t *injectedTemplate(tc_peer *Peer, const PackageElement &E, ElementSend &S) {
  if (S.Template.empty()) {
    const JamImageData &Image = E.Image;
    S.Template.assign(Peer->Tx->SlotSize, 0);
    std::memcpy(S.Template.data() + FrameImageOffset, Image.Bytes.data(), Image.Bytes.size());
  }
  return S.Template.data();
}

/// A frame delivered, in the statistics.
static inline void countSent(tc_peer *Peer, uint8_t Kind, uint32_t ImageSize) {
  CoreContext *Ctx = Peer->Ctx;
  count(Ctx, &tc_stats_t::frames_sent);
  count(Peer, &tc_peer_stats_t::frames_sent);
  if (Kind == FrameInjected) {
    count(Ctx, &tc_stats_t::frames_sent_with_code);
    count(Ctx, &tc_stats_t::code_bytes_sent, ImageSize);
  } else if (Kind == FrameCached) {
    count(Ctx, &tc_stats_t::frames_sent_cached);
  }
}

/// Encodes the frame and delivers it into the receiver's slot: stored
/// there directly where UCX maps the ring into this process (Frame is then
/// only the source of a template's image), else built in Frame and put.
static tc_status_t putFrame(tc_peer *Peer, uint8_t *Frame, FrameSpec &Spec, uint32_t Slot) {
  size_t Size = 0;
  tc_status_t St;
  if (uint8_t *Ring = Peer->Tx->RingDirect) {
    St = encodeFrame(ringSlot(Ring, Peer->Tx->SlotSize, Slot), Peer->Tx->SlotSize, Spec, &Size);
    if (St == TC_OK)
      wakeIfSleeping(Peer);
  } else if (!Peer->Tx->Puts.empty()) {
    // Built in the slot's own copy, which its put reads until it completes:
    // the slot's previous put is completed first (credited, so landed).
    Spec.Ordered = false;
    uint8_t *Copy = Peer->Sending->slotFrame(Slot);
    if ((St = completePut(Peer, Slot)) == TC_OK &&
        (St = encodeFrame(Copy, Peer->Tx->SlotSize, Spec, &Size)) == TC_OK)
      St = deliverFrame(Peer, Copy, Size, Spec.Sequence, Slot, /*Pipelined=*/true);
  } else {
    // A frame by message is written into its slot by the receiver's
    // handler as a direct sender stores it, the trailer last by a release
    // store (FramePath.cpp, placeFrame): the mark proves it whole, and
    // neither side computes a checksum. A resend still carries one.
    Spec.Ordered = Spec.Ordered && Peer->Path == PathAm;
    St = encodeFrame(Frame, Peer->Tx->SlotSize, Spec, &Size);
    if (St == TC_OK)
      St = deliverFrame(Peer, Frame, Size, Spec.Sequence, Slot);
  }
  if (St != TC_OK)
    return St;
  countSent(Peer, Spec.Kind, Spec.ImageSize);
  return TC_OK;
}

/// The frame for sequence Seq in Slot: local, injected with code, or
/// naming code the receiver's cache holds.
/// Resend: the frame goes again into a slot where a complete one with the
/// same sequence lies, so only its checksum can tell when it has landed.
static tc_status_t sendFrame(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                             tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                             uint64_t Seq, uint32_t Slot, bool Resend = false,
                             uint8_t Flags = 0) {
  FrameSpec Spec;
  Spec.Ordered = !Resend;
  Spec.Flags = Flags;
  Spec.Package = Pkg->Tag;
  Spec.Element = Element;
  Spec.Payload = Payload;
  Spec.PayloadSize = uint32_t(PayloadSize);
  Spec.Sequence = Seq;
  if (Mode == TC_SEND_LOCAL)
    return putFrame(Peer, Peer->Sending->Staging.data(), Spec, Slot);
  // The image built for the receiver's instruction set (tc_send checked
  // that there is one).
  const PackageElement *For = elementFor(Pkg, Element, Peer->Code->RemoteIsa);
  if (!For)
    return TC_ERR_NO_ISA_IMAGE;
  const PackageElement &E = *For;
  Spec.Code = E.CodeKey;
  ElementSend &S = elementSend(Peer, Pkg, Element);
  // Shipped ahead already: every frame names it, and nothing more is sized.
  // A frame whose image must be shipped first never comes here before
  // (checkSend queues it): it was sent fitting, with its image.
  if (!S.Shipped && frameSize(FrameInjected, uint32_t(E.Image.Bytes.size()), Spec.PayloadSize) >
                        Peer->Tx->SlotSize)
    return TC_ERR_TOO_LARGE;
  if (S.Shipped) {
    // A receiver with no cache never asks for a resend: no copy is kept.
    Spec.Kind = FrameCached;
    return putFrame(Peer,
                    Peer->Sending->SlotFrames.empty() ? Peer->Sending->Staging.data()
                                                      : Peer->Sending->slotFrame(Slot),
                    Spec, Slot);
  }
  bool Cache = Peer->Code->RemoteMode == TC_MAILBOX_CODE_CACHE;
  if (Cache && Mode == TC_SEND_INJECTED && S.Held) {
    // Kept until credited, in case the receiver has evicted the code and
    // asks for it: in the ring itself, or built in the slot's own copy.
    Spec.Kind = FrameCached;
    return putFrame(Peer, Peer->Tx->RingDirect ? nullptr : Peer->Sending->slotFrame(Slot), Spec,
                    Slot);
  }
  Spec.Kind = FrameInjected;
  Spec.ImageSize = uint32_t(E.Image.Bytes.size());
  uint8_t *Frame = injectedTemplate(Peer, E, S);
  Spec.Image = Frame + FrameImageOffset;
  tc_status_t St = putFrame(Peer, Frame, Spec, Slot);
  if (St == TC_OK && Cache)
    S.Held = true; // frames run in order: the next one finds it installed
  return St;
}




/// The common send, whole: a Local frame, or a cached one whose code the
/// receiver holds, stored straight into a ring UCX maps here (one line up
/// to 24 payload bytes, built in registers). Anything else (or no credit,
/// or too large) returns false and goes the general way, which says why.
static inline bool sendDirect(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                              tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                              uint64_t *Sequence) {
  PeerSendHalf &Tx = *Peer->Tx;
  if (!Tx.RingDirect || PayloadSize > Tx.SlotSize || !Peer->Welcomed || Peer->Failed ||
      Element >= Pkg->Elements.size())
    return false;
  // A receiver that takes deployments, of a build it may not hold: the
  // general way decides.
  if (__builtin_expect(Peer->Code->DeployCheck, 0) && !peerHolds(Peer, Pkg))
    return false;
  FrameKind Kind;
  uint64_t Code = 0;
  if (Mode == TC_SEND_LOCAL) {
    const PackageElement &E = Pkg->Elements[Element];
    if (!E.Present || !E.IsJam)
      return false;
    Kind = FrameLocal;
  } else if (Mode == TC_SEND_INJECTED && Peer->Code->RemoteMode == TC_MAILBOX_CODE_CACHE) {
    const PackageElement *E = elementFor(Pkg, Element, Peer->Code->RemoteIsa);
    if (!E)
      return false;
    ElementSend &S = elementSend(Peer, Pkg, Element);
    if (!S.Held && !S.Shipped)
      return false; // its first frame carries the code
    Kind = FrameCached;
    Code = E->CodeKey;
  } else {
    return false;
  }
  bool Line = PayloadSize <= LocalInlinePayload;
  if (!Line && imagelessFrameSize(PayloadSize) > Tx.SlotSize)
    return false;
  uint64_t Seq;
  uint32_t Slot;
  if (Tx.Send->reserve(&Seq, &Slot) != TC_OK || !claimSlot(Peer, Seq))
    return false;
  uint8_t *Frame = ringSlot(Tx.RingDirect, Tx.SlotSize, Slot);
  if (Line)
    storeMarkedLine(Frame, Kind, Pkg->Tag, Kind == FrameCached ? Code : Seq, Element, Payload,
                    uint32_t(PayloadSize), Seq);
  else
    storeMarkedFrame(Frame, Kind, Pkg->Tag, Code, Element, Payload, uint32_t(PayloadSize), Seq);
  wakeIfSleeping(Peer);
  countSent(Peer, Kind, 0);
  if (Sequence)
    *Sequence = Seq;
  return true;
}

namespace {
/// What a send attempt ended with: a status for the caller, or that the
/// frame must first wait in the queue for its code (an image shipped
/// ahead, a package deployed: checkSend). Made from a status implicitly,
/// so that the send paths return statuses as they are.
struct SendAttempt {
  tc_status_t Status;
  bool WaitsForCode = false;
  SendAttempt(tc_status_t St) : Status(St) {}
  static SendAttempt waitForCode() {
    SendAttempt A(TC_OK);
    A.WaitsForCode = true;
    return A;
  }
};
} // namespace

/// sendLocked's way once sendDirect declined.
static SendAttempt sendGeneral(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                               tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                               uint64_t *Sequence, PayloadHold Hold);

/// The whole send: sendDirect's way, or the general one.
static inline SendAttempt sendAny(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                                  tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                                  uint64_t *Sequence, PayloadHold Hold = PayloadHold::Copy) {
  // Its answers and credit reports come into rings polled every pass.
  if (__builtin_expect(Peer->Cold, 0))
    startPolling(Peer->Ctx, Peer);
  // A small frame to a receiver that is behind goes into a bundle; any
  // other frame follows the open bundle, sealed (send/Bundle.h).
  if (mayBundle(Peer, Mode, PayloadSize, Sequence)) {
    tc_status_t St;
    if (bundleFrame(Peer, Pkg, Element, Payload, PayloadSize, St))
      return St;
  } else if (__builtin_expect(bundleOpen(Peer), 0)) {
    sealOpenBundle(Peer);
  }
  if (__builtin_expect(Peer->Path != PathRma, 0) && gathersFrames(Peer, Sequence)) {
    Peer->Tx->Gather = true;
    SendAttempt St = sendDirect(Peer, Pkg, Element, Mode, Payload, PayloadSize, Sequence)
                         ? SendAttempt(TC_OK)
                         : sendGeneral(Peer, Pkg, Element, Mode, Payload, PayloadSize, Sequence,
                                       Hold);
    Peer->Tx->Gather = false;
    return St;
  }
  if (sendDirect(Peer, Pkg, Element, Mode, Payload, PayloadSize, Sequence))
    return TC_OK;
  return sendGeneral(Peer, Pkg, Element, Mode, Payload, PayloadSize, Sequence, Hold);
}

/// Whether the frame can be sent to the peer: TC_OK; waitForCode when its
/// image must be shipped ahead or its package deployed first (the frame
/// is then queued); else why not, at once.
static SendAttempt checkSend(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                             tc_send_mode_t Mode, size_t PayloadSize) {
  if (!Peer->Welcomed)
    return TC_ERR_IO;
  // The arguments first, then the peer's state: a send that can never fit
  // says so whether or not the peer is still there.
  if (Element >= Pkg->Elements.size() || !Pkg->Elements[Element].Present ||
      !Pkg->Elements[Element].IsJam)
    return TC_ERR_UNKNOWN_ELEMENT;
  // Injected frames carry the image built for the receiver's instruction
  // set: a package built without it cannot send them there.
  const PackageElement *For = &Pkg->Elements[Element];
  if (Mode != TC_SEND_LOCAL && !(For = elementFor(Pkg, Element, Peer->Code->RemoteIsa))) {
    ElementSend &S = elementSend(Peer, Pkg, Element);
    const char *Isa = isaName(Peer->Code->RemoteIsa);
    logOnce(S.TooLargeLogged, TC_LOG_ERROR,
            Peer->Name + ": package '" + Pkg->Name + "' has no " + (Isa ? Isa : "?") +
                " image of jam '" + Pkg->Elements[Element].Name + "' for this " +
                (Isa ? Isa : "?") +
                " receiver: build the package for it too (ISA in "
                "twochains_add_package), or send TC_SEND_LOCAL");
    return TC_ERR_NO_ISA_IMAGE;
  }
  // The frame must fit a slot: the payload always; the image too only for
  // TC_SEND_INJECTED_FULL, since a larger one is shipped ahead and named.
  const PackageElement &E = *For;
  FrameKind Kind = Mode == TC_SEND_LOCAL     ? FrameLocal
                   : Mode == TC_SEND_INJECTED ? FrameCached
                                              : FrameInjected;
  uint32_t ImageSize = Kind == FrameInjected ? uint32_t(E.Image.Bytes.size()) : 0;
  // A payload that does not fit a slot goes ahead of its frame, if the
  // receiver takes one that large (send/PayloadAhead.h).
  if (payloadGoesAhead(Peer, PayloadSize) && !payloadAheadAllowed(Peer, PayloadSize)) {
    ElementSend &S = elementSend(Peer, Pkg, Element);
    logOnce(S.TooLargeLogged, TC_LOG_ERROR,
            Peer->Name + ": a frame of jam '" + E.Name + "' with a " + std::to_string(PayloadSize) +
                "-byte payload needs " + std::to_string(smallestFrameSize(PayloadSize)) +
                " bytes; the receiver's slots hold " + std::to_string(Peer->Tx->SlotSize) +
                (Peer->Sending->PayloadAheadBytes
                     ? ", and it takes payloads of at most " +
                           std::to_string(Peer->Sending->PayloadAheadBytes) +
                           " bytes ahead of their frames (its payload_ahead_bytes)"
                     : " (it takes no payloads ahead of their frames)"));
    return TC_ERR_TOO_LARGE;
  }
  if (size_t Size = frameSize(Kind, ImageSize, slotPayloadSize(Peer, PayloadSize));
      Size > Peer->Tx->SlotSize) {
    ElementSend &S = elementSend(Peer, Pkg, Element);
    logOnce(S.TooLargeLogged, TC_LOG_ERROR,
            Peer->Name + ": a frame of jam '" + E.Name + "' with a " + std::to_string(PayloadSize) +
                "-byte payload" +
                (ImageSize ? " and its " + std::to_string(ImageSize) + "-byte image" : "") +
                " needs " + std::to_string(Size) + " bytes; the receiver's slots hold " +
                std::to_string(Peer->Tx->SlotSize) +
                (ImageSize ? " (TC_SEND_INJECTED ships a larger image ahead of its frames)" : ""));
    return TC_ERR_TOO_LARGE;
  }
  if (Peer->Failed)
    return TC_ERR_IO;
  // A build the receiver does not hold is deployed first (code/Deploy.h),
  // the frame queued behind it, as behind a shipment.
  if (needsDeployment(Peer, Pkg)) {
    tc_status_t Refused = deployRefusal(Peer, Pkg);
    return Refused != TC_OK ? SendAttempt(Refused) : SendAttempt::waitForCode();
  }
  // An image larger than a slot is shipped ahead, and the frame waits in
  // the queue, without a sequence: a shipment the receiver refuses must
  // not leave behind a sequence no frame fills, on which its ring would
  // wait for ever.
  if (needsShipment(Peer, Pkg, Element, Mode, PayloadSize)) {
    tc_status_t Refused = elementSend(Peer, Pkg, Element).Refused;
    return Refused != TC_OK ? SendAttempt(Refused) : SendAttempt::waitForCode();
  }
  return TC_OK;
}

/// The send behind frames queued for the peer, or of a frame that must
/// wait for its code: queued (bounded), after what is queued already
/// sent as far as credits allow. A jam's frame (FromJam) is queued on a
/// full ring too; the application's then gets TC_ERR_NO_CREDIT, as when
/// nothing is queued. *Sequence, for a call's frame queued: the key its
/// call is kept by until it is sent (QueuedCallKey).
static __attribute__((noinline)) tc_status_t sendBehind(tc_peer *Peer, const tc_package *Pkg,
                                                        uint32_t Element, tc_send_mode_t Mode,
                                                        const void *Payload, size_t PayloadSize,
                                                        uint64_t *Sequence, bool FromJam,
                                                        tc_peer *Origin, PayloadHold Hold) {
  if (!Peer->Sending->Queued.empty() || Peer->Code->Shipping.active() ||
      Peer->Code->Deploying.active())
    sendQueued(Peer);
  SendAttempt A = Peer->Sending->Queued.empty()
                      ? sendAny(Peer, Pkg, Element, Mode, Payload, PayloadSize, Sequence, Hold)
                      : checkSend(Peer, Pkg, Element, Mode, PayloadSize);
  tc_status_t St = A.Status;
  if (!A.WaitsForCode && !(St == TC_ERR_NO_CREDIT && FromJam) &&
      !(St == TC_OK && !Peer->Sending->Queued.empty()))
    return St; // sent, or never will be
  uint64_t Key = Sequence ? QueuedCallKey | ++Peer->Sending->NextQueuedCall : 0;
  auto *P = static_cast<const uint8_t *>(Payload);
  QueuedFrame F{Pkg, Element, std::vector<uint8_t>(P, P + PayloadSize)};
  F.Mode = Mode;
  F.CallKey = Key;
  if ((St = queueFrame(Peer, std::move(F), Origin)) != TC_OK)
    return St;
  // Started now if none is in flight (its answer comes sooner than at the
  // queue's turn). One that cannot start is this send's status: the frame
  // leaves the queue, untold to anyone else.
  if (needsDeployment(Peer, Pkg)) {
    if (!Peer->Code->Deploying.active())
      if (tc_status_t Deploy = startDeployment(Peer, Pkg); Deploy != TC_OK) {
        Peer->Sending->Queued.erase(std::prev(Peer->Sending->Queued.end()));
        return Deploy;
      }
  } else if (needsShipment(Peer, Pkg, Element, Mode, PayloadSize) && !Peer->Code->Shipping.active())
    if (tc_status_t Ship = startShipment(Peer, Pkg, Element); Ship != TC_OK) {
      Peer->Sending->Queued.erase(std::prev(Peer->Sending->Queued.end()));
      return Ship;
    }
  if (Sequence)
    *Sequence = Key;
  return TC_OK;
}

tc_status_t twochains::rt::sendLocked(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                                      tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                                      uint64_t *Sequence, PayloadHold Hold) {
  if (__builtin_expect(Peer->Sending->Queued.empty(), 1)) {
    SendAttempt A = sendAny(Peer, Pkg, Element, Mode, Payload, PayloadSize, Sequence, Hold);
    if (__builtin_expect(!A.WaitsForCode, 1))
      return A.Status;
  }
  return sendBehind(Peer, Pkg, Element, Mode, Payload, PayloadSize, Sequence,
                    /*FromJam=*/false, nullptr, Hold);
}

tc_status_t twochains::rt::sendFromJamLocked(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                                             tc_send_mode_t Mode, const void *Payload,
                                             size_t PayloadSize, tc_peer *Origin) {
  return sendBehind(Peer, Pkg, Element, Mode, Payload, PayloadSize, nullptr, /*FromJam=*/true,
                    Origin, PayloadHold::Copy);
}

static SendAttempt sendGeneral(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                               tc_send_mode_t Mode, const void *Payload, size_t PayloadSize,
                               uint64_t *Sequence, PayloadHold Hold) {
  if (SendAttempt A = checkSend(Peer, Pkg, Element, Mode, PayloadSize);
      A.Status != TC_OK || A.WaitsForCode)
    return A;
  // The credit line is written by the receiver: reading it costs a cache
  // line crossing cores, so it is read only when the credits seen so far
  // are used up (a miss report waits until then, or the next tc_progress).
  if (Peer->Tx->Send->available() == 0) {
    resendMissing(Peer);
    takeFaultReport(Peer);
    Peer->Tx->Send->credit(Peer->Tx->CreditWord[CreditWordFinished]);
  }
  bool Ahead = payloadGoesAhead(Peer, PayloadSize);
  uint64_t Seq;
  uint32_t Slot;
  if ((Ahead && !payloadAheadFits(Peer, PayloadSize)) ||
      Peer->Tx->Send->reserve(&Seq, &Slot) != TC_OK || !claimSlot(Peer, Seq)) {
    // What a corked peer holds is what the receiver must see to credit.
    if (flushFrameBatch(Peer) != TC_OK)
      return TC_ERR_IO;
    if (ucp_worker_h W = frameWorker(Peer); W == Peer->Ctx->Worker)
      progressControl(Peer->Ctx);
    else
      ucp_worker_progress(W);
    return TC_ERR_NO_CREDIT;
  }
  PayloadAhead Named;
  if (Ahead) {
    if (tc_status_t St = sendPayloadAhead(Peer, Seq, Payload, PayloadSize, Hold, &Named);
        St != TC_OK) {
      Peer->Tx->Send->unreserve(Seq);
      return St;
    }
    Payload = &Named;
    PayloadSize = sizeof Named;
  }
  tc_status_t St = sendFrame(Peer, Pkg, Element, Mode, Payload, PayloadSize, Seq, Slot,
                             /*Resend=*/false, Ahead ? FramePayloadAhead : 0);
  if (St == TC_OK && Sequence)
    *Sequence = Seq;
  return St;
}

tc_status_t twochains::rt::sendAnswer(tc_peer *Peer, uint64_t CallSequence, const void *Bytes,
                                      size_t Size) {
  if (!Peer->Welcomed || Peer->Failed || !Peer->Tx->Send)
    return TC_ERR_IO;
  if (frameSize(FrameAnswer, 0, uint32_t(Size)) > Peer->Tx->SlotSize)
    return TC_ERR_TOO_LARGE;
  sealOpenBundle(Peer); // frames to one peer run in the order sent
  if (Peer->Tx->Send->available() == 0) {
    takeFaultReport(Peer);
    Peer->Tx->Send->credit(Peer->Tx->CreditWord[CreditWordFinished]);
  }
  uint64_t Seq;
  uint32_t Slot;
  if (Peer->Tx->Send->reserve(&Seq, &Slot) != TC_OK || !claimSlot(Peer, Seq))
    return TC_ERR_NO_CREDIT;
  FrameSpec Spec;
  Spec.Kind = FrameAnswer;
  Spec.Package = CallSequence;
  Spec.Payload = Bytes;
  Spec.PayloadSize = uint32_t(Size);
  Spec.Sequence = Seq;
  Spec.Ordered = true;
  return putFrame(Peer, Peer->Sending->Staging.data(), Spec, Slot);
}

/// tc_send to a handle (core/Peer.h, Proxy): through its connection, behind
/// any frames that waited for it; queued on the handle while it is being
/// made. Out of line: the hot path to a connection pays one test.
__attribute__((noinline)) static tc_status_t sendToHandle(tc_peer *Handle, const tc_package *Pkg,
                                                          uint32_t Element, tc_send_mode_t Mode,
                                                          const void *Payload, size_t PayloadSize,
                                                          PayloadHold Hold) {
  for (;;) {
    if (tc_peer *Bound = connectionOf(Handle)) {
      PeerGuard Guard(Bound);
      // A failed connection says so after the arguments' checks; it never
      // asks for code to be shipped.
      if (!Bound->Welcomed || Bound->Failed)
        return sendAny(Bound, Pkg, Element, Mode, Payload, PayloadSize, nullptr).Status;
      // As to a connection: behind what waits, its code shipped first.
      return sendLocked(Bound, Pkg, Element, Mode, Payload, PayloadSize, nullptr, Hold);
    }
    PeerGuard Guard(Handle); // a handle is never channelled: the context
    if (!connectionOf(Handle))
      return queueOnHandle(Handle, Pkg, Element, Mode, Payload, PayloadSize, nullptr);
  }
}

/// TC_ERR_NO_CREDIT returned this many times in a row to a thread: each
/// further one yields the core first. A retry loop then lets the receiver
/// it waits for run where processes outnumber cores (one run spun 851 M
/// times; yielding made it 8x faster), at no cost to a send that succeeds.
static constexpr unsigned NoCreditSpins = 64;
__attribute__((tls_model("initial-exec"))) static thread_local unsigned NoCreditStreak = 0;

static inline tc_status_t backOffIfRefused(tc_status_t St) {
  if (__builtin_expect(St != TC_ERR_NO_CREDIT, 1)) {
    if (__builtin_expect(NoCreditStreak != 0, 0))
      NoCreditStreak = 0; // a load, not a store, on the hot path
    return St;
  }
  if (++NoCreditStreak > NoCreditSpins)
    sched_yield();
  return St;
}

/// A stream's send to a receiver that is behind, whole: one more frame of
/// the connection's open bundle (send/Bundle.h), where no lock is needed,
/// nothing waits in the queue and the frame is of the bundle's element
/// and size. False for anything else, which the usual way takes.
static inline bool joinOpenBundle(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                                  tc_send_mode_t Mode, const void *Payload, size_t PayloadSize) {
  if (Mode != TC_SEND_LOCAL || !Pkg || (PayloadSize && !Payload) || !(Peer = connectionOf(Peer)))
    return false;
  if (!joinsBundle(Peer, Pkg->Tag, Element, PayloadSize) || Peer->Failed || Peer->Channelled ||
      hotPathLocks(Peer->Ctx) || !Peer->Sending->Queued.empty())
    return false;
  appendFrame(Peer, Payload, PayloadSize);
  return true;
}

/// A send that does not join an open bundle. Out of line: the stream's
/// inline path stays a few loads and stores.
__attribute__((noinline)) static tc_status_t sendNotJoined(tc_peer *Peer, const tc_package *Pkg,
                                                           uint32_t Element, tc_send_mode_t Mode,
                                                           const void *Payload,
                                                           size_t PayloadSize) {
  PayloadHold Hold = PayloadHold::Copy;
  if (__builtin_expect(Mode & TC_SEND_NO_COPY, 0)) {
    Hold = PayloadHold::Borrow;
    Mode = tc_send_mode_t(Mode & ~TC_SEND_NO_COPY);
  }
  if (!Peer || !Pkg || (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED &&
                        Mode != TC_SEND_INJECTED_FULL) ||
      (PayloadSize && !Payload) || PayloadSize > UINT32_MAX)
    return TC_ERR_INVALID_PARAM;
  if (__builtin_expect(Peer->Proxy, 0))
    return sendToHandle(Peer, Pkg, Element, Mode, Payload, PayloadSize, Hold);
  PeerGuard Guard(Peer);
  return sendLocked(Peer, Pkg, Element, Mode, Payload, PayloadSize, nullptr, Hold);
}

static inline tc_status_t sendOnce(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                                   tc_send_mode_t Mode, const void *Payload, size_t PayloadSize) {
  if (__builtin_expect(Peer && joinOpenBundle(Peer, Pkg, Element, Mode, Payload, PayloadSize), 1))
    return TC_OK;
  return sendNotJoined(Peer, Pkg, Element, Mode, Payload, PayloadSize);
}

extern "C" tc_status_t tc_send(tc_peer_t *Peer, const tc_package_t *Pkg, uint32_t Element,
                               tc_send_mode_t Mode, const void *Payload, size_t PayloadSize) {
  return backOffIfRefused(sendOnce(Peer, Pkg, Element, Mode, Payload, PayloadSize));
}

/// tc_send_wait's sends between two turns of the context (a power of 2).
static constexpr unsigned SendsPerTurn = 1024;
/// Such a turn (serviceSends) leaves open bundles open: the stream goes
/// on, and a bundle sealed at each turn would leave most of its slot
/// empty (a ring of them fills, and the stream waits for credits).
__attribute__((tls_model("initial-exec"))) static thread_local bool InStreamTurn = false;
__attribute__((tls_model("initial-exec"))) static thread_local unsigned SendsSinceTurn = 0;

/// tc_send_wait's wait, once the peer had no credit: progressing and
/// sleeping as tc_call does. Out of line: the send that goes at once pays
/// nothing for it.
__attribute__((noinline)) static tc_status_t sendWhenCredited(tc_peer *Peer, const tc_package *Pkg,
                                                              uint32_t Element, tc_send_mode_t Mode,
                                                              const void *Payload,
                                                              size_t PayloadSize, int TimeoutMs) {
  CoreContext *Ctx = Peer->Ctx;
  uint64_t Deadline = nowNs() + msToNs(uint64_t(TimeoutMs));
  IdleWait Idle;
  for (;;) {
    uint64_t Now = nowNs();
    if (Now >= Deadline)
      return TC_ERR_TIMED_OUT;
    // The executor, where it runs, takes the credits; else this thread.
    if (!Ctx->ExecutorRunning.load(std::memory_order_acquire) && Ctx->Progress(Ctx))
      Idle.busy();
    Idle.idle(Ctx, Now, Deadline);
    tc_status_t St = sendOnce(Peer, Pkg, Element, Mode, Payload, PayloadSize);
    if (St != TC_ERR_NO_CREDIT)
      return St;
  }
}

/// A stream's turn of the context (tc_send_wait).
__attribute__((noinline)) static void takeStreamTurn(CoreContext *Ctx) {
  InStreamTurn = true;
  Ctx->Progress(Ctx);
  InStreamTurn = false;
}

extern "C" tc_status_t tc_send_wait(tc_peer_t *Peer, const tc_package_t *Pkg,
                                    uint32_t Element, tc_send_mode_t Mode,
                                    const void *Payload, size_t PayloadSize, int TimeoutMs) {
  if (!Peer || TimeoutMs < 0 || ThreadRunningJamOf == Peer->Ctx)
    return TC_ERR_INVALID_PARAM;
  CoreContext *Ctx = Peer->Ctx;
  // A send that goes at once reads no clock: where the clock is a system
  // call (this VM's), reading it was a quarter of a BFS's sends.
  tc_status_t St = sendOnce(Peer, Pkg, Element, Mode, Payload, PayloadSize);
  if (St != TC_ERR_NO_CREDIT) {
    // A stream of waiting sends takes a turn of the context every so
    // often, as MPI's sends progress: the frames that came meanwhile run,
    // and their credits go back, while the stream lasts, not after it
    // (a BFS's every rank sends a level's visits before it receives).
    if (__builtin_expect((++SendsSinceTurn & (SendsPerTurn - 1)) == 0, 0) &&
        !Ctx->ExecutorRunning.load(std::memory_order_acquire))
      takeStreamTurn(Ctx);
    return St;
  }
  return sendWhenCredited(Peer, Pkg, Element, Mode, Payload, PayloadSize, TimeoutMs);
}

tc_status_t twochains::rt::payloadFromArgs(const tc_peer *Peer, const tc_package *Pkg,
                                           uint32_t Element, const void *Args,
                                           const uint8_t **Payload, size_t *PayloadSize) {
  if (!Peer || !Pkg || !Args || Element >= Pkg->Elements.size() ||
      !Pkg->Elements[Element].Present)
    return TC_ERR_INVALID_PARAM;
  const PackageElement &E = Pkg->Elements[Element];
  if (!E.PayloadSize || !E.PayloadInit)
    return TC_ERR_INVALID_PARAM; // the jam has no helpers: use tc_send
  using SizeFn = size_t (*)(const void *);
  using InitFn = size_t (*)(const void *, void *);
  size_t Capacity = reinterpret_cast<SizeFn>(E.PayloadSize)(Args);
  if (Capacity > Peer->Tx->SlotSize)
    return TC_ERR_TOO_LARGE;
  // The payload is built in this thread's scratch buffer, which only ever
  // grows (at most to a slot): no allocation per call once warm, and no
  // sharing between the threads of a TC_CONTEXT_THREADS context.
  thread_local std::vector<uint8_t> ScratchPayload;
  if (ScratchPayload.size() < std::max<size_t>(Capacity, 1))
    ScratchPayload.resize(std::max<size_t>(Capacity, 1));
  size_t Size = reinterpret_cast<InitFn>(E.PayloadInit)(Args, ScratchPayload.data());
  if (Size > Capacity)
    return TC_ERR_INVALID_PARAM; // the helper wrote more than it promised
  *Payload = ScratchPayload.data();
  *PayloadSize = Size;
  return TC_OK;
}

extern "C" tc_status_t tc_send_args(tc_peer_t *Peer, const tc_package_t *Pkg,
                                    uint32_t Element, tc_send_mode_t Mode, const void *Args) {
  const uint8_t *Payload;
  size_t Size;
  if (tc_status_t St = payloadFromArgs(Peer, Pkg, Element, Args, &Payload, &Size); St != TC_OK)
    return St;
  if (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED && Mode != TC_SEND_INJECTED_FULL)
    return TC_ERR_INVALID_PARAM;
  return backOffIfRefused(sendOnce(Peer, Pkg, Element, Mode, Payload, Size));
}

namespace twochains::rt {

void sendQueued(tc_peer *Peer) {
  takeCodeAnswers(Peer);
  auto *Ctx = Peer->Ctx;
  while (QueuedFrame *Front = frontReadyToLeave(Peer)) {
    QueuedFrame &F = *Front;
    uint64_t Seq = 0;
    tc_status_t St = F.Package
                         ? sendAny(Peer, F.Package, F.Element, F.Mode, F.Payload.data(),
                                   F.Payload.size(), &Seq)
                               .Status // its code is there: checked above
                         : sendAnswer(Peer, F.CallSequence, F.Payload.data(), F.Payload.size());
    if (St == TC_ERR_NO_CREDIT)
      return;
    // A call's frame is named by its sequence from now on; one that failed
    // for good (the peer is gone) ends its call.
    if (F.CallKey && St == TC_OK)
      Ctx->Path->CallSent.notify(Peer, F.CallKey, Seq);
    else if (F.CallKey && St != TC_OK)
      Ctx->Path->FrameAbandoned.notify(Peer, F.CallKey, St);
    if (St != TC_OK && !F.Package)
      logLimited(Peer->AnswerLog, TC_LOG_ERROR,
                 "a queued answer to call " + std::to_string(F.CallSequence) + " of " +
                     Peer->Name + " was dropped: " + statusString(St));
    Peer->Sending->Queued.erase(Peer->Sending->Queued.begin()); // sent, or failed for good
  }
}

void serviceSends(tc_peer *Peer, bool ReportTurn) {
  // Miss and fault reports are rare: looked for on report turns (and
  // whenever a send runs out of credits, or a flush waits).
  if (ReportTurn) {
    resendMissing(Peer);
    takeFaultReport(Peer);
  }
  if (Peer->Tx->BatchFrames)
    flushFrameBatch(Peer); // a failure marks the peer failed
  if (bundleOpen(Peer) && !InStreamTurn)
    sealOpenBundle(Peer); // its slot is finished, and credited, only then
  if (!Peer->Sending->Queued.empty() || Peer->Code->Deploying.active())
    sendQueued(Peer);
}

void resendMissing(tc_peer *Peer) {
  if ((Peer->Sending->SlotFrames.empty() && !Peer->Tx->RingDirect) || !Peer->Tx->CreditWord)
    return;
  uint64_t Seq;
  if (!Peer->Sending->Misses.take(Peer->Tx->CreditWord[CreditWordMiss], Peer->Tx->Send->next(),
                                  Peer->Tx->Slots, Seq))
    return;
  // Only a frame sent as cached is sent again. One stored directly lies in
  // the ring until credited (the receiver, which asks for it, has not).
  uint32_t Slot = uint32_t(Seq % Peer->Tx->Slots);
  FrameView V;
  if (Peer->Tx->RingDirect) {
    // The frame alone, copied out and checked in the copy: the ring is the
    // receiver's memory.
    if (captureFrame(ringSlot(Peer->Tx->RingDirect, Peer->Tx->SlotSize, Slot), Peer->Tx->SlotSize,
                     Seq, Peer->Sending->Staging.data(), &V, Completion::Ordered) != TC_OK ||
        V.Header.Kind != FrameCached)
      return;
  } else if (checkFrame(Peer->Sending->slotFrame(Slot), Peer->Tx->SlotSize, Seq, &V) != TC_OK ||
             V.Header.Kind != FrameCached) {
    return;
  }
  const FrameHeader &H = V.Header;
  const tc_package *Pkg = nullptr;
  for (const tc_package *P : Peer->Ctx->Package->Packages)
    if (P->Tag == H.Package)
      Pkg = P;
  if (!Pkg || H.Element >= Pkg->Elements.size())
    return;
  ElementSend &S = elementSend(Peer, Pkg, H.Element);
  // Code shipped ahead is resident on the receiver, never evicted: a miss
  // report for it is false (the frame did not carry it, nor could it).
  if (S.Shipped)
    return;
  S.Held = false;
  std::vector<uint8_t> Payload(V.Payload, V.Payload + H.PayloadSize);
  // A payload sent ahead stays with the receiver until the frame has run:
  // the frame names it again.
  if (sendFrame(Peer, Pkg, H.Element, TC_SEND_INJECTED, Payload.data(), Payload.size(), Seq,
                Slot, /*Resend=*/true, H.Inline[0] & FramePayloadAhead) == TC_OK)
    count(Peer->Ctx, &tc_stats_t::frames_resent);
}


} // namespace twochains::rt
