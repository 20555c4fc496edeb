//===- CodeTransfer.cpp - Images larger than a slot travel once, ahead ----===//
//
//   sender   -> receiver  CODE      { package, element, code key, size } image
//   receiver -> sender    CODE_ACK  { tc_status_t, package, element }
//
// An injected frame carries its image only when the two fit a slot. A
// larger image (a library-sized jam: tens of KiB against 4 KiB slots) is
// sent once per receiver on the control connection, by active message
// (rendezvous: UCX moves the bytes with RMA where it can), before the
// element's first frame. The receiver checks it against its own copy of
// the package, byte for byte, installs that copy resident (in its code
// cache, never evicted: one entry per element of the packages it loaded),
// and answers; from then on the element's frames are cached frames, in
// either mailbox mode (docs/code-cache.md, "Images larger than a slot").
//
// The sender never waits for the answer: two processes shipping to each
// other at once would each wait for an answer the other gives only on its
// control turn. The send layer queues the element's frames meanwhile and
// asks shipmentAnswer on its turns; one shipment per connection is in
// flight at a time.
//
// Only an authenticated peer may ship code; an offer whose package,
// element, key or size is not exactly the receiver's own is refused before
// any of its bytes are received, and at most MaxPendingCode wait to be
// installed.
//
//===----------------------------------------------------------------------===//
#include "code/CodeTransfer.h"
#include "code/PeerCode.h"

#include "base/Log.h"
#include "base/Timeouts.h"
#include "base/StatusString.h"
#include "code/InjectedCode.h"
#include "control/ControlMessage.h"
#include "core/Lock.h"
#include "core/Peers.h"
#include "core/Stats.h"
#include "ucx/Status.h"

#include <algorithm>
#include <cstring>

using namespace twochains::rt;

namespace {

/// A sender whose shipment found the receiver's places full asks again
/// after this, until the time limit.
constexpr uint64_t ShipmentRetryNs = 20'000'000;
/// A shipment with no answer within the time limit.
constexpr tc_status_t ShipmentTimedOut = TC_ERR_TIMED_OUT;

void answer(CoreContext *Ctx, tc_peer *Peer, uint64_t Package, uint32_t Element, tc_status_t St) {
  CodeAck A = {CodeAckMagic, St, Package, Element, 0};
  // Not waited for: a peer that takes no messages must not hold the
  // receiver up.
  sendMessage(Ctx, Peer, AmCodeAck, &A, sizeof A, nullptr, 0);
}

/// The package frames name by Package (the first of that tag), or null.
const tc_package *packageOf(CoreContext *Ctx, uint64_t Package) {
  for (const tc_package *P : Ctx->Package->Packages)
    if (P->Tag == Package)
      return P;
  return nullptr;
}

const PackageElement *elementOf(CoreContext *Ctx, uint64_t Package, uint32_t Element) {
  const tc_package *P = packageOf(Ctx, Package);
  return P && Element < P->Elements.size() && P->Elements[Element].Present &&
                 P->Elements[Element].IsJam
             ? &P->Elements[Element]
             : nullptr;
}

void onCodeBody(void *Arg, tc_status_t St) {
  auto *C = static_cast<CodeContext::PushedCode *>(Arg);
  C->Status = St;
  C->Received = true;
}

ucs_status_t onCode(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                    size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  CodeHeader H;
  tc_peer *Peer = acceptMessage(Ctx, Header, HeaderLength, Param, H);
  if (!Peer)
    return UCS_OK;
  auto Refuse = [&](tc_status_t St, const std::string &Why) {
    countHeld(Ctx,
              St == TC_ERR_NO_CREDIT ? &tc_stats_t::shares_full : &tc_stats_t::messages_refused);
    logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
               "refused code shipped by " + Peer->Name + ": " + Why);
    // Answered on the control turn; the bytes are never received.
    Ctx->Code->PushedCodes.push_back({Param->reply_ep, H.Package, H.Element, St, {}, true});
    return UCS_OK;
  };
  const PackageElement *E = elementOf(Ctx, H.Package, H.Element);
  if (H.Magic != CodeMagic || H.Reserved)
    return Refuse(TC_ERR_BAD_MAGIC, "a malformed offer");
  if (!E)
    return Refuse(TC_ERR_UNKNOWN_ELEMENT, "element " + std::to_string(H.Element) +
                                              " of package tag " + std::to_string(H.Package) +
                                              " is not a jam this receiver loaded");
  if (H.Code != E->CodeKey || H.ImageSize != E->Image.Bytes.size() || Length != H.ImageSize)
    return Refuse(TC_ERR_HASH_MISMATCH,
                  "jam '" + E->Name + "': an image of " + std::to_string(Length) +
                      " bytes with key " + std::to_string(H.Code) + ", not this receiver's (" +
                      std::to_string(E->Image.Bytes.size()) + " bytes)");
  // Places are shared by all peers: one peer takes at most its share, so
  // that offers whose bytes never come (until they are cancelled) hold up
  // no one else's.
  size_t Taken = 0, TakenByPeer = 0;
  for (const CodeContext::PushedCode &C : Ctx->Code->PushedCodes)
    if (C.Taken) {
      ++Taken;
      TakenByPeer += C.Reply == Param->reply_ep;
    }
  if (TakenByPeer >= MaxPendingCodePerPeer)
    return Refuse(TC_ERR_NO_CREDIT, "it has " + std::to_string(TakenByPeer) +
                                        " images waiting to be installed already, its share");
  if (Taken >= MaxPendingCode)
    return Refuse(TC_ERR_NO_CREDIT, "already " + std::to_string(MaxPendingCode) +
                                        " images waiting to be installed");
  Ctx->Code->PushedCodes.push_back({Param->reply_ep, H.Package, H.Element, TC_OK, {}, false, true});
  CodeContext::PushedCode &C = Ctx->Code->PushedCodes.back();
  C.Bytes.resize(Length);
  // List elements stay where they are until erased, which waits for Received.
  receiveBody(Ctx, Data, Length, Param, C.Bytes.data(), onCodeBody, &C);
  return UCS_OK;
}

} // namespace

ucs_status_t twochains::rt::onCodeAck(void *Arg, const void *Header, size_t HeaderLength,
                                      void *, size_t, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  CodeAck A;
  // Only the answer to a shipment in flight to that very peer (not an
  // unauthenticated endpoint's, nor a stale or forged one). One answer per
  // peer: the rest of the queue is the other peers'.
  if (!acceptAnswer(Ctx, Header, HeaderLength, Param, Ctx->Code->CodeAcks, A,
                    [&](const tc_peer *Peer, const CodeAck &A) {
                      return A.Magic == CodeAckMagic &&
                             Peer->Code->Shipping.answeredBy(A.Package, A.Element) &&
                             Ctx->Code->CodeAcks.size() < MaxPendingCode;
                    }))
    return UCS_OK;
  Ctx->Code->CodeAcks.push_back({Param->reply_ep, A.Package, A.Element, tc_status_t(A.Status)});
  return UCS_OK;
}

namespace {

/// Housekeeping: checks, installs and answers the images that arrived.
void processPushedCode(CoreContext *Ctx) {
  for (auto It = Ctx->Code->PushedCodes.begin(); It != Ctx->Code->PushedCodes.end();) {
    if (!It->Received) {
      ++It;
      continue;
    }
    tc_status_t St = It->Status;
    const PackageElement *E = elementOf(Ctx, It->Package, It->Element);
    if (St == TC_OK && !E)
      St = TC_ERR_UNKNOWN_ELEMENT;
    // Only the receiver's own copy is installed, and only if what arrived
    // is that copy exactly.
    if (St == TC_OK && std::memcmp(It->Bytes.data(), E->Image.Bytes.data(), It->Bytes.size())) {
      St = TC_ERR_HASH_MISMATCH;
      tc_peer *Peer = peerOfEndpoint(Ctx, It->Reply);
      logError("refused code shipped by " + (Peer ? Peer->Name : std::string("a peer gone")) +
               ": jam '" + E->Name + "': the bytes are not this receiver's image");
    }
    // A sandboxed package's jams run only as verified into its region:
    // nothing of it enters the code cache, and its frames name the code.
    // A sandboxed image of a package run natively never runs at all.
    const tc_package *Owner = packageOf(Ctx, It->Package);
    if (St == TC_OK && E->Image.Sandbox && Owner && !Owner->Region)
      St = refuseSandboxedImage(Ctx, *Owner, *E);
    if (St == TC_OK && !(Owner && Owner->Region) &&
        !installResident(Ctx, It->Package, It->Element, *E))
      St = TC_ERR_NO_MEMORY;
    if (St == TC_OK)
      countHeld(Ctx, &tc_stats_t::code_transfers_received);
    else if (St == TC_ERR_HASH_MISMATCH)
      countHeld(Ctx, &tc_stats_t::cache_hash_mismatches);
    // The peer may have gone (and been released) meanwhile.
    if (tc_peer *Peer = peerOfEndpoint(Ctx, It->Reply); Peer && !Peer->Failed)
      answer(Ctx, Peer, It->Package, It->Element, St);
    It = Ctx->Code->PushedCodes.erase(It);
  }
}

} // namespace

/// When a shipment next has work on the clock: an offer to make again
/// after the receiver had no place, or its time limit.
static uint64_t shipmentsDue(CoreContext *Ctx) {
  uint64_t Due = NoDueTime;
  forEachSendingPeer(Ctx, [&](const tc_peer *Peer) {
    if (Peer->Code->Shipping.active())
      Due = std::min(Due, Peer->Code->Shipping.dueNs());
  });
  return Due;
}

ucs_status_t twochains::rt::setupCodeTransfer(CoreContext *Ctx) {
  addHousekeeping(Ctx, processPushedCode);
  addDueTime(Ctx, shipmentsDue);
  return setControlHandlers(Ctx, {{AmCode, &onCode}, {AmCodeAck, &onCodeAck}});
}

namespace {

/// The control worker and its answers are the context's: a channelled
/// peer's caller takes the context too (channel, then context: the one
/// order of waiting), unless a jam of this context runs on this thread,
/// which holds it already (and must leave no lock behind if abandoned).
struct ContextForShipment {
  std::unique_lock<std::recursive_mutex> Held;
  explicit ContextForShipment(tc_peer *Peer) {
    if (Peer->Channelled && ThreadRunningJamOf != Peer->Ctx) {
      lockContext(Peer->Ctx);
      Held = std::unique_lock<std::recursive_mutex>(Peer->Ctx->Lock, std::adopt_lock);
    }
  }
};

/// Sends the offer and its image without waiting, from copies the peer
/// keeps until UCX has sent them (once per element and peer). A send that
/// fails later shows as no answer.
tc_status_t sendOffer(tc_peer *Peer) {
  const tc_package *Pkg = Peer->Code->Shipping.package();
  uint32_t Element = Peer->Code->Shipping.element();
  const PackageElement *E = elementFor(Pkg, Element, Peer->Code->RemoteIsa);
  if (!E)
    return TC_ERR_NO_ISA_IMAGE;
  const std::vector<uint8_t> &Image = E->Image.Bytes;
  CodeHeader H = {CodeMagic, Element, Pkg->Tag, E->CodeKey, uint32_t(Image.size()), 0};
  auto *B = reinterpret_cast<const uint8_t *>(&H);
  ucs_status_t St = sendKeptMessage(Peer, AmCode, std::vector<uint8_t>(B, B + sizeof H), Image,
                                    UCP_AM_SEND_FLAG_REPLY);
  if (St != UCS_OK) {
    logError(Peer->Name + ": cannot ship the " + std::to_string(Image.size()) +
             "-byte image of jam '" + E->Name + "': " + ucs_status_string(St));
    return statusOfUcs(St);
  }
  return TC_OK;
}

/// The shipment's end, whatever it was: the peer may ship another.
void endShipment(CoreContext *Ctx, tc_peer *Peer) {
  Peer->Code->Shipping.end();
  // An answer not taken would keep the peer's one place in the queue.
  auto &Acks = Ctx->Code->CodeAcks;
  Acks.erase(std::remove_if(Acks.begin(), Acks.end(),
                            [&](const CodeContext::CodeAnswer &A) { return A.From == Peer->Ep; }),
             Acks.end());
}

} // namespace

tc_status_t twochains::rt::startShipment(tc_peer *Peer, const tc_package *Pkg, uint32_t Element) {
  auto *Ctx = Peer->Ctx;
  ContextForShipment Context(Peer);
  if (Peer->Code->Shipping.active())
    return TC_ERR_INVALID_PARAM; // one at a time per connection
  if (Peer->Failed || !Peer->Ep)
    return TC_ERR_IO;
  if (!elementFor(Pkg, Element, Peer->Code->RemoteIsa))
    return TC_ERR_NO_ISA_IMAGE;
  Peer->Code->Shipping.start(Pkg, Pkg->Tag, Element, nowNs() + CodeTransferTimeoutNs);
  tc_status_t St = sendOffer(Peer);
  if (St != TC_OK)
    endShipment(Ctx, Peer);
  return St;
}

tc_status_t twochains::rt::shipmentAnswer(tc_peer *Peer) {
  auto *Ctx = Peer->Ctx;
  ContextForShipment Context(Peer);
  if (!Peer->Code->Shipping.active())
    return TC_ERR_INVALID_PARAM;
  const tc_package *Pkg = Peer->Code->Shipping.package();
  uint32_t Element = Peer->Code->Shipping.element();
  const PackageElement *E = elementFor(Pkg, Element, Peer->Code->RemoteIsa);
  size_t Bytes = E ? E->Image.Bytes.size() : 0;
  std::string What = std::to_string(Bytes) + "-byte image of jam '" +
                     (E ? E->Name : std::to_string(Element)) + "'";
  uint64_t Now = nowNs();
  tc_status_t Answer = TC_ERR_INCOMPLETE;
  for (size_t I = 0; I < Ctx->Code->CodeAcks.size(); ++I) {
    const CodeContext::CodeAnswer &A = Ctx->Code->CodeAcks[I];
    if (A.From != Peer->Ep || A.Package != Pkg->Tag || A.Element != Element)
      continue;
    Answer = A.Status;
    Ctx->Code->CodeAcks.erase(Ctx->Code->CodeAcks.begin() + I);
    break;
  }
  if (Answer == TC_OK) {
    endShipment(Ctx, Peer);
    count(Ctx, &tc_stats_t::code_transfers);
    count(Peer, &tc_peer_stats_t::code_transfers);
    count(Ctx, &tc_stats_t::code_bytes_sent, Bytes);
    return TC_OK;
  }
  // Places full on the receiver (its share, or all 16, held by images
  // still arriving): asked again, until the time limit, as a sender told
  // TC_ERR_NO_CREDIT tries again; the frames stay queued meanwhile.
  if (Answer == TC_ERR_NO_CREDIT && !Peer->Code->Shipping.overdue(Now)) {
    Peer->Code->Shipping.refusedForNow(TC_ERR_NO_CREDIT, Now + ShipmentRetryNs);
    return TC_ERR_INCOMPLETE;
  }
  if (Answer != TC_ERR_INCOMPLETE) {
    endShipment(Ctx, Peer);
    logError(Peer->Name + " did not install the " + What + ": " + statusString(Answer));
    return Answer;
  }
  if (Peer->Failed || !Peer->Ep) {
    endShipment(Ctx, Peer);
    return TC_ERR_IO;
  }
  if (Peer->Code->Shipping.overdue(Now)) {
    tc_status_t Refusal = Peer->Code->Shipping.refusal();
    endShipment(Ctx, Peer);
    if (Refusal != TC_OK) {
      logError(Peer->Name + " had no place for the " + What + " in " +
               std::to_string(CodeTransferTimeoutNs / NsPerS) + " s: " + statusString(Refusal));
      return Refusal;
    }
    logError(Peer->Name + " did not answer for the " + What + " in " +
             std::to_string(CodeTransferTimeoutNs / NsPerS) + " s");
    return ShipmentTimedOut;
  }
  if (Peer->Code->Shipping.takeRetry(Now)) {
    if (tc_status_t St = sendOffer(Peer); St != TC_OK) {
      endShipment(Ctx, Peer);
      return St;
    }
  }
  return TC_ERR_INCOMPLETE;
}
