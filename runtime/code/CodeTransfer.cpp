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
// Only an authenticated peer may ship code; an offer whose package,
// element, key or size is not exactly the receiver's own is refused before
// any of its bytes are received, and at most MaxPendingCode wait to be
// installed.
//
//===----------------------------------------------------------------------===//
#include "code/CodeTransfer.h"

#include "base/Log.h"
#include "base/Timeouts.h"
#include "base/StatusString.h"
#include "code/InjectedCode.h"
#include "control/ControlMessage.h"
#include "core/Lock.h"
#include "core/Peers.h"
#include "core/Stats.h"
#include "ucx/Request.h"
#include "ucx/Status.h"

#include <algorithm>
#include <cstring>

using namespace twochains::rt;

namespace {

void answer(CodeContext *Ctx, tc_peer *Peer, uint64_t Package, uint32_t Element, tc_status_t St) {
  CodeAck A = {CodeAckMagic, St, Package, Element, 0};
  // Not waited for: a peer that takes no messages must not hold the
  // receiver up.
  sendMessage(Ctx, Peer, AmCodeAck, &A, sizeof A, nullptr, 0, 0);
}

const PackageElement *elementOf(CodeContext *Ctx, uint64_t Package, uint32_t Element) {
  for (const tc_package *P : Ctx->Packages)
    if (P->Tag == Package)
      return Element < P->Elements.size() && P->Elements[Element].Present &&
                     P->Elements[Element].IsJam
                 ? &P->Elements[Element]
                 : nullptr;
  return nullptr;
}

void onCodeBody(void *Arg, tc_status_t St) {
  auto *C = static_cast<CodeContext::PushedCode *>(Arg);
  C->Status = St;
  C->Received = true;
}

ucs_status_t onCode(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                    size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CodeContext *>(Arg);
  tc_peer *Peer = senderOf(Ctx, Param);
  CodeHeader H;
  if (!Peer || !Peer->Welcomed || HeaderLength != sizeof H) {
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return UCS_OK; // not from an authenticated peer: no answer either
  }
  std::memcpy(&H, Header, sizeof H);
  auto Refuse = [&](tc_status_t St, const std::string &Why) {
    countHeld(Ctx,
              St == TC_ERR_NO_CREDIT ? &tc_stats_t::shares_full : &tc_stats_t::messages_refused);
    logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
               "refused code shipped by " + Peer->Name + ": " + Why);
    // Answered on the control turn; the bytes are never received.
    Ctx->PushedCodes.push_back({Param->reply_ep, H.Package, H.Element, St, {}, true});
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
  for (const CodeContext::PushedCode &C : Ctx->PushedCodes)
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
  Ctx->PushedCodes.push_back({Param->reply_ep, H.Package, H.Element, TC_OK, {}, false, true});
  CodeContext::PushedCode &C = Ctx->PushedCodes.back();
  C.Bytes.resize(Length);
  // List elements stay where they are until erased, which waits for Received.
  receiveBody(Ctx, Data, Length, Param, C.Bytes.data(), onCodeBody, &C);
  return UCS_OK;
}

} // namespace

ucs_status_t twochains::rt::onCodeAck(void *Arg, const void *Header, size_t HeaderLength,
                                      void *, size_t, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CodeContext *>(Arg);
  CodeAck A;
  if (HeaderLength != sizeof A || !(Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
    return UCS_OK;
  std::memcpy(&A, Header, sizeof A);
  // Only the answer to a shipment in flight to that very peer: anything
  // else (an unauthenticated endpoint, a stale or forged answer) would sit
  // in the queue and crowd out real ones. One answer per peer: the rest
  // of the queue is the other peers'.
  tc_peer *Peer = peerOfEndpoint(Ctx, Param->reply_ep);
  bool Answered = std::any_of(
      Ctx->CodeAcks.begin(), Ctx->CodeAcks.end(),
      [&](const CodeContext::CodeAnswer &C) { return C.From == Param->reply_ep; });
  if (A.Magic != CodeAckMagic || !Peer || !Peer->Tx.ShippingElement ||
      Peer->Tx.ShippingPackage != A.Package || Peer->Tx.ShippingElement != A.Element + 1 ||
      Answered || Ctx->CodeAcks.size() >= MaxPendingCode) {
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return UCS_OK;
  }
  Ctx->CodeAcks.push_back({Param->reply_ep, A.Package, A.Element, tc_status_t(A.Status)});
  return UCS_OK;
}

namespace {

/// Housekeeping: checks, installs and answers the images that arrived.
void processPushedCode(CoreContext *Core) {
  auto *Ctx = static_cast<CodeContext *>(Core);
  for (auto It = Ctx->PushedCodes.begin(); It != Ctx->PushedCodes.end();) {
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
    if (St == TC_OK && !installResident(Ctx, It->Package, It->Element, *E))
      St = TC_ERR_NO_MEMORY;
    if (St == TC_OK)
      countHeld(Ctx, &tc_stats_t::code_transfers_received);
    else if (St == TC_ERR_HASH_MISMATCH)
      countHeld(Ctx, &tc_stats_t::cache_hash_mismatches);
    // The peer may have gone (and been released) meanwhile.
    if (tc_peer *Peer = peerOfEndpoint(Ctx, It->Reply); Peer && !Peer->Failed)
      answer(Ctx, Peer, It->Package, It->Element, St);
    It = Ctx->PushedCodes.erase(It);
  }
}

} // namespace

ucs_status_t twochains::rt::setupCodeTransfer(CodeContext *Ctx) {
  addHousekeeping(Ctx, processPushedCode);
  return setControlHandlers(Ctx, {{AmCode, &onCode}, {AmCodeAck, &onCodeAck}});
}

tc_status_t twochains::rt::shipCode(tc_peer *Peer, const tc_package *Pkg, uint32_t Element) {
  auto *Ctx = contextOf<CodeContext>(Peer);
  // The control worker and its answers are the context's: a channel takes
  // the context too (channel, then context: the one order of waiting).
  std::unique_lock<std::recursive_mutex> Context(Ctx->Lock, std::defer_lock);
  if (Peer->Channelled) {
    lockContext(Ctx);
    Context = std::unique_lock<std::recursive_mutex>(Ctx->Lock, std::adopt_lock);
  }
  if (Peer->Failed || !Peer->Ep)
    return TC_ERR_IO;
  const PackageElement *For = elementFor(Pkg, Element, Peer->Tx.RemoteIsa);
  if (!For)
    return TC_ERR_NO_ISA_IMAGE;
  const PackageElement &E = *For;
  const std::vector<uint8_t> &Image = E.Image.Bytes;
  CodeHeader H = {CodeMagic, Element, Pkg->Tag, E.CodeKey, uint32_t(Image.size()), 0};
  uint64_t Deadline = nowNs() + CodeTransferTimeoutNs;
  struct Shipping { // the one answer onCodeAck takes, while this waits
    CodeContext *Ctx;
    tc_peer *P;
    ucp_ep_h Ep;
    ~Shipping() {
      P->Tx.ShippingElement = 0;
      // An answer not taken (the peer failed first) would keep the peer's
      // one place in the queue.
      auto &Acks = Ctx->CodeAcks;
      Acks.erase(std::remove_if(Acks.begin(), Acks.end(),
                                [&](const CodeContext::CodeAnswer &A) { return A.From == Ep; }),
                 Acks.end());
    }
  } Pending{Ctx, Peer, Peer->Ep};
  Peer->Tx.ShippingPackage = Pkg->Tag;
  Peer->Tx.ShippingElement = Element + 1;
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY;
  // The header is copied by UCX at the call; the image is the package's
  // and outlives any request.
  ucs_status_t Sent = waitRequestUntil(
      Ctx->Worker,
      ucp_am_send_nbx(Peer->Ep, AmCode, &H, sizeof H, Image.data(), Image.size(), &P),
      Deadline);
  if (Sent != UCS_OK) {
    logError(Peer->Name + ": cannot ship the " + std::to_string(Image.size()) +
             "-byte image of jam '" + E.Name + "': " + ucs_status_string(Sent));
    return statusOfUcs(Sent);
  }
  tc_status_t Answer = TC_ERR_INCOMPLETE;
  bool Answered = awaitAnswer(Ctx, Peer, Deadline, [&] {
    for (size_t I = 0; I < Ctx->CodeAcks.size(); ++I) {
      const CodeContext::CodeAnswer &A = Ctx->CodeAcks[I];
      if (A.From != Peer->Ep || A.Package != Pkg->Tag || A.Element != Element)
        continue;
      Answer = A.Status;
      Ctx->CodeAcks.erase(Ctx->CodeAcks.begin() + I);
      return true;
    }
    return false;
  });
  if (Answered && Answer != TC_OK) {
    logError(Peer->Name + " did not install the " + std::to_string(Image.size()) +
             "-byte image of jam '" + E.Name + "': " + statusString(Answer));
    return Answer;
  }
  if (Answered) {
    count(Ctx, &tc_stats_t::code_transfers);
    count(Peer, &tc_peer_stats_t::code_transfers);
    count(Ctx, &tc_stats_t::code_bytes_sent, Image.size());
    return TC_OK;
  }
  if (Peer->Failed)
    return TC_ERR_IO;
  logError(Peer->Name + " did not answer for the " + std::to_string(Image.size()) +
           "-byte image of jam '" + E.Name + "' in " +
           std::to_string(CodeTransferTimeoutNs / NsPerS) + " s");
  return TC_ERR_TIMED_OUT;
}
