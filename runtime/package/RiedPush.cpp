//===- RiedPush.cpp - Driving a ried over to a receiver -------------------===//
//
//   sender   -> receiver  RIED      { name size, library size } name, bytes
//   receiver -> sender    RIED_ACK  { tc_status_t } reason
//
// The receiver, if it accepts rieds, writes the bytes to an anonymous
// memory file and loads it from /proc/self/fd: nothing touches its disk.
// Only an authenticated peer may push; a push to a receiver that does not
// accept rieds, or one larger than MaxRiedSize, is refused before any of
// its bytes are received. Either way the answer says why (TC_ERR_REFUSED,
// TC_ERR_BAD_IMAGE, ...) and, in at most MaxRiedReasonSize bytes of words,
// what the pusher logs.
//
//===----------------------------------------------------------------------===//
#include "base/Log.h"
#include "base/StatusString.h"
#include "control/ControlMessage.h"
#include "core/Peers.h"
#include "core/Stats.h"
#include "package/PackageContext.h"
#include "package/PeerPackage.h"
#include "ucx/Request.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

using namespace twochains::rt;

namespace {

/// Runs on a thread of its own: a ried's initialisers are code, and
/// dlopen takes milliseconds; the executor's frames do not wait for them.
/// Reason: why not, for the pusher.
tc_status_t loadPushed(const std::string &Name, const uint8_t *Bytes, size_t Size,
                       std::string &Reason) {
  int Fd = memfd_create(("tc-ried-" + Name).c_str(), MFD_CLOEXEC);
  if (Fd < 0 || write(Fd, Bytes, Size) != ssize_t(Size)) {
    if (Fd >= 0)
      close(Fd);
    logError("cannot hold pushed ried '" + Name + "'");
    Reason = "it cannot hold the library in memory";
    return TC_ERR_IO;
  }
  std::string Path = "/proc/self/fd/" + std::to_string(Fd);
  void *H = dlopen(Path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  close(Fd);
  if (!H) {
    const char *Error = dlerror();
    Reason = std::string("it cannot load it: ") + (Error ? Error : "?");
    logError("cannot load pushed ried '" + Name + "': " + (Error ? Error : "?"));
    return TC_ERR_BAD_IMAGE;
  }
  return TC_OK;
}

/// A peer's words, fit to log: printable ASCII only, at most
/// MaxRiedReasonSize of them.
std::string printable(const std::string &Text) {
  std::string Out = Text.substr(0, MaxRiedReasonSize);
  for (char &C : Out)
    if (C < 0x20 || C > 0x7e)
      C = '?';
  return Out;
}

/// A push whose bytes are on their way (receiveBody).
struct PendingRied {
  CoreContext *Ctx;
  ucp_ep_h Reply;
  std::vector<uint8_t> Bytes;
};

void answer(CoreContext *Ctx, tc_peer *Peer, tc_status_t St, const std::string &Reason) {
  RiedAck A = {RiedAckMagic, St};
  size_t Size = St == TC_OK ? 0 : std::min(Reason.size(), MaxRiedReasonSize);
  // Not waited for: a peer that takes no messages must not hold the
  // receiver up.
  sendMessage(Ctx, Peer, AmRiedAck, &A, sizeof A, Reason.data(), Size);
}

/// The bytes have come, or not: either way the push is answered (a push
/// whose bytes never came is answered TC_ERR_IO, not left to time out).
void onRiedBody(void *Arg, tc_status_t St) {
  auto *R = static_cast<PendingRied *>(Arg);
  auto &Arriving = R->Ctx->Package->RiedsArriving;
  Arriving.erase(std::find(Arriving.begin(), Arriving.end(), R->Reply));
  R->Ctx->Package->PushedRieds.push_back(
      {R->Reply, St, St == TC_OK ? std::move(R->Bytes) : std::vector<uint8_t>(),
       St == TC_OK ? "" : "its bytes did not arrive"});
  delete R;
}

ucs_status_t onRied(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                    size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  RiedHeader H;
  tc_peer *Peer = acceptMessage(Ctx, Header, HeaderLength, Param, H);
  if (!Peer)
    return UCS_OK;
  // Why is logged here; Tell (else Why) is what the pusher is told.
  auto Refuse = [&](const std::string &Why, tc_status_t St = TC_ERR_INVALID_PARAM,
                    const std::string &Tell = "") {
    countHeld(Ctx,
              St == TC_ERR_NO_CREDIT ? &tc_stats_t::shares_full : &tc_stats_t::messages_refused);
    logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
               "refused a ried pushed by " + Peer->Name + ": " + Why);
    // Answered later, off the callback; the bytes are never received.
    Ctx->Package->PushedRieds.push_back({Param->reply_ep, St, {}, Tell.empty() ? Why : Tell});
    return UCS_OK;
  };
  // Under the signed policy code comes only inside signed packages: a
  // pushed library would bypass the signature (docs/security.md). Under
  // the verified policy native code comes only so too: a pushed library
  // is code no verifier has seen (docs/verified.md).
  if (Ctx->Package->CodeTrust == TC_CODE_TRUST_SIGNED ||
      Ctx->Package->CodeTrust == TC_CODE_TRUST_VERIFIED) {
    std::string Why = std::string("its code-trust policy is ") +
                      (Ctx->Package->CodeTrust == TC_CODE_TRUST_SIGNED ? "signed" : "verified") +
                      ": rieds come only inside signed packages";
    return Refuse(Why, TC_ERR_REFUSED, Why);
  }
  if (!(Ctx->Flags & TC_CONTEXT_ACCEPT_RIEDS))
    return Refuse("this context does not accept rieds (TC_CONTEXT_ACCEPT_RIEDS)", TC_ERR_REFUSED,
                  "it does not accept rieds (TC_CONTEXT_ACCEPT_RIEDS)");
  if (H.Magic != RiedMagic || H.NameSize == 0 || H.NameSize > MaxRiedNameSize ||
      H.LibrarySize > MaxRiedSize || Length != H.NameSize + H.LibrarySize)
    return Refuse("a library of " + std::to_string(H.LibrarySize) + " bytes named in " +
                  std::to_string(H.NameSize) + " bytes, in a message of " +
                  std::to_string(Length) + " (at most " + std::to_string(MaxRiedSize) +
                  " and " + std::to_string(MaxRiedNameSize) + ")");
  // Its bytes are allocated now and held until they come (or the push is
  // cancelled): a few at once, one of them the peer's.
  size_t Mine = std::count(Ctx->Package->RiedsArriving.begin(), Ctx->Package->RiedsArriving.end(),
                           Param->reply_ep);
  if (Mine >= MaxRiedsArrivingPerPeer || Ctx->Package->RiedsArriving.size() >= MaxRiedsArriving)
    return Refuse("already " + std::to_string(Mine) + " of its pushes and " +
                      std::to_string(Ctx->Package->RiedsArriving.size()) +
                      " in all on their way (at most " + std::to_string(MaxRiedsArrivingPerPeer) +
                      " and " + std::to_string(MaxRiedsArriving) + ")",
                  TC_ERR_NO_CREDIT);
  Ctx->Package->RiedsArriving.push_back(Param->reply_ep);
  auto *R = new PendingRied{Ctx, Param->reply_ep, {}};
  R->Bytes.resize(Length);
  receiveBody(Ctx, Data, Length, Param, R->Bytes.data(), onRiedBody, R);
  return UCS_OK;
}

ucs_status_t onRiedAck(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                       size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  RiedAck A;
  // Only the answer to a push in flight to that peer, once: anything else
  // would sit in the queue for ever.
  if (!acceptAnswer(Ctx, Header, HeaderLength, Param, Ctx->Package->RiedAcks, A,
                    [](const tc_peer *Peer, const RiedAck &A) {
                      return A.Magic == RiedAckMagic && Peer->Package->PushingRied;
                    }))
    return UCS_OK;
  // The reason, bounded before it is taken; one out of bounds (or by
  // rendezvous, whose bytes are not here) is not taken, the status is.
  std::string Reason;
  if (Length && Length <= MaxRiedReasonSize && !(Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
    Reason.assign(static_cast<const char *>(Data), Length);
  Ctx->Package->RiedAcks.push_back({Param->reply_ep, tc_status_t(A.Status), std::move(Reason)});
  return UCS_OK;
}

/// Housekeeping: loads the rieds peers pushed since the last turn, and
/// answers those that finished loading.
void processPushedRieds(CoreContext *Ctx) {
  while (!Ctx->Package->PushedRieds.empty()) {
    auto P = std::move(Ctx->Package->PushedRieds.front());
    Ctx->Package->PushedRieds.erase(Ctx->Package->PushedRieds.begin());
    Ctx->Package->RiedLoads.emplace_back();
    PackageContext::RiedLoad &L = Ctx->Package->RiedLoads.back();
    L.Reply = P.Reply;
    L.Status = P.Status;
    L.Reason = std::move(P.Reason);
    if (P.Status != TC_OK) {
      L.Done = true; // refused from its header: answered below
      continue;
    }
    L.Thread = std::thread([&L, Bytes = std::move(P.Bytes)] {
      // Bytes: name, then the library.
      size_t NameEnd = 0;
      while (NameEnd < Bytes.size() && Bytes[NameEnd])
        ++NameEnd;
      std::string Name(Bytes.begin(), Bytes.begin() + NameEnd);
      size_t Skip = std::min(Bytes.size(), NameEnd + 1);
      L.Status = loadPushed(Name, Bytes.data() + Skip, Bytes.size() - Skip, L.Reason);
      L.Done.store(true, std::memory_order_release);
    });
  }
  for (auto It = Ctx->Package->RiedLoads.begin(); It != Ctx->Package->RiedLoads.end();) {
    if (!It->Done.load(std::memory_order_acquire)) {
      ++It;
      continue;
    }
    if (It->Thread.joinable())
      It->Thread.join();
    if (It->Status == TC_OK)
      countHeld(Ctx, &tc_stats_t::rieds_loaded);
    // The peer may have gone (and been released) while it loaded.
    if (tc_peer *Peer = peerOfEndpoint(Ctx, It->Reply); Peer && !Peer->Failed)
      answer(Ctx, Peer, It->Status, It->Reason);
    It = Ctx->Package->RiedLoads.erase(It);
  }
}

} // namespace

namespace twochains::rt {

ucs_status_t setupRiedPush(CoreContext *Ctx) {
  addHousekeeping(Ctx, processPushedRieds);
  return setControlHandlers(Ctx, {{AmRied, &onRied}, {AmRiedAck, &onRiedAck}});
}

void finishRiedLoads(CoreContext *Ctx) {
  for (PackageContext::RiedLoad &L : Ctx->Package->RiedLoads)
    if (L.Thread.joinable())
      L.Thread.join();
}

} // namespace twochains::rt

extern "C" tc_status_t tc_ried_push(tc_peer_t *Peer, const char *Path, int TimeoutMs) {
  if (!Peer || !Path)
    return TC_ERR_INVALID_PARAM;
  if (Peer->Proxy && !(Peer = connectionOf(Peer)))
    return TC_ERR_IO; // not connected (yet): tc_flush on the handle connects it
  FILE *F = std::fopen(Path, "rb");
  if (!F) {
    logError(std::string("cannot read ried ") + Path);
    return TC_ERR_IO;
  }
  std::string Name = Path;
  if (size_t Slash = Name.rfind('/'); Slash != std::string::npos)
    Name = Name.substr(Slash + 1);
  std::vector<uint8_t> Body(Name.begin(), Name.end());
  Body.push_back(0);
  uint8_t Buf[65536];
  size_t N;
  size_t LibStart = Body.size();
  while ((N = std::fread(Buf, 1, sizeof Buf, F)) > 0)
    Body.insert(Body.end(), Buf, Buf + N);
  std::fclose(F);
  auto *Ctx = Peer->Ctx;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  if (Peer->Failed || !Peer->Ep)
    return TC_ERR_IO;
  RiedHeader H = {RiedMagic, uint32_t(Name.size() + 1), Body.size() - LibStart};
  struct Pushing { // the one answer onRiedAck takes, while this waits
    CoreContext *Ctx;
    tc_peer *P;
    ucp_ep_h Ep;
    ~Pushing() {
      P->Package->PushingRied = false;
      auto &Acks = Ctx->Package->RiedAcks;
      Acks.erase(
          std::remove_if(Acks.begin(), Acks.end(), [&](const auto &A) { return A.From == Ep; }),
          Acks.end());
    }
  } Pending{Ctx, Peer, Peer->Ep};
  Peer->Package->PushingRied = true;
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY;
  ucs_status_t Sent = waitRequest(Ctx->Worker, ucp_am_send_nbx(Peer->Ep, AmRied, &H, sizeof H,
                                                              Body.data(), Body.size(), &P));
  controlTurnedByWait(Ctx);
  if (Sent != UCS_OK)
    return TC_ERR_IO;
  tc_status_t Answer = TC_ERR_IO;
  std::string Reason;
  bool Answered = awaitAnswer(Ctx, Peer, nowNs() + msToNs(TimeoutMs > 0 ? TimeoutMs : 0), [&] {
    for (size_t I = 0; I < Ctx->Package->RiedAcks.size(); ++I)
      if (Ctx->Package->RiedAcks[I].From == Peer->Ep) {
        // A status the API names, else a bare I/O error.
        tc_status_t Said = Ctx->Package->RiedAcks[I].Status;
        Answer = Said <= TC_OK && Said >= TC_ERR_UNTRUSTED ? Said : TC_ERR_IO;
        Reason = printable(Ctx->Package->RiedAcks[I].Reason);
        Ctx->Package->RiedAcks.erase(Ctx->Package->RiedAcks.begin() + I);
        return true;
      }
    return false;
  });
  if (!Answered)
    return Peer->Failed ? TC_ERR_IO : TC_ERR_TIMED_OUT;
  if (Answer != TC_OK && Answer != TC_ERR_NO_CREDIT)
    logError(Peer->Name + " refused the ried '" + printable(Name) +
             "': " + (Reason.empty() ? statusString(Answer) : Reason.c_str()) + " (" +
             statusString(Answer) + ")");
  return Answer;
}
