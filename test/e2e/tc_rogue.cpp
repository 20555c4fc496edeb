//===- tc_rogue.cpp - A sender that breaks the rules ----------------------===//
//
//   tc-rogue malformed PREFIX PORT   puts 11 bad frames (bad magic, version,
//                                    package, element, image, lengths, a
//                                    write cut short, a wrong checksum, code
//                                    not hashing to its claim, a cached
//                                    frame naming a forged hash, one naming
//                                    code never sent and never resent),
//                                    then 3 good ones (local, injected,
//                                    cached); then tries an oversized send
//   tc-rogue die PREFIX PORT         sends 5 good frames, cuts a write
//                                    short, and exits without closing
//   tc-rogue code PREFIX PORT        ships code ahead of frames falsely
//                                    (a changed byte, a wrong size, a wrong
//                                    key, an unknown element), then truly,
//                                    and sends one cached frame naming it
//
// It connects like any sender, then writes frames itself, with the
// runtime's internals, straight into its ring on the receiver.
//
//===----------------------------------------------------------------------===//
#include "wire/Frame.h"
#include "Identity.h"
#include "calls/Calls.h"
#include "code/CodeTransfer.h"
#include "code/InjectedCode.h"
#include "context/Context.h"
#include "control/ControlMessage.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Stats.h"
#include "receive/Receive.h"
#include "path/FramePath.h"
#include "send/Send.h"
#include "ucx/Request.h"
#include "wireup/Mailbox.h"
#include "wireup/Wireup.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <twochains/packages/stdlib.h>
#include <unistd.h>
#include <vector>

using namespace twochains::rt;

static void fail(const char *What) {
  std::fprintf(stderr, "tc-rogue: %s\n", What);
  std::exit(1);
}

/// Puts the first Bytes bytes of a frame built for the next sequence.
static void putFrame(tc_peer *Peer, const std::function<void(FrameSpec &)> &Shape,
                     const std::function<void(uint8_t *, size_t, uint64_t)> &Damage,
                     size_t Keep = SIZE_MAX) {
  uint64_t Seq;
  uint32_t Slot;
  while (Peer->Tx.Send->credit(*Peer->Tx.CreditWord), Peer->Tx.Send->reserve(&Seq, &Slot) != TC_OK)
    ucp_worker_progress(frameWorker(Peer));
  FrameSpec Spec;
  Spec.Sequence = Seq;
  Shape(Spec);
  size_t Size = 0;
  if (encodeFrame(Peer->Tx.Staging.data(), Peer->Tx.SlotSize, Spec, &Size) != TC_OK)
    fail("cannot encode");
  Damage(Peer->Tx.Staging.data(), Size, Seq);
  if (deliverFrame(Peer, Peer->Tx.Staging.data(), std::min(Size, Keep), Seq, Slot) != TC_OK)
    fail("delivering failed");
}

/// Rewrites the header, then seals the frame again with a valid trailer.
static std::function<void(uint8_t *, size_t, uint64_t)>
reseal(std::function<void(FrameHeader &)> Change) {
  return [Change](uint8_t *F, size_t Size, uint64_t Seq) {
    FrameHeader H;
    std::memcpy(&H, F, sizeof H);
    Change(H);
    std::memcpy(F, &H, sizeof H);
    FrameTrailer T = {uint32_t(Seq), frameChecksum(F, Size - FrameTrailerSize, Seq)};
    std::memcpy(F + Size - FrameTrailerSize, &T, sizeof T);
  };
}

/// Ships Bytes as the code of Element, as CodeTransfer.cpp does, with the
/// header changed by Change; returns the receiver's answer.
static tc_status_t offerCode(tc_peer *Peer, const tc_package *Pkg, uint32_t Element,
                             std::vector<uint8_t> Bytes,
                             const std::function<void(CodeHeader &)> &Change) {
  auto *Ctx = static_cast<tc_context *>(Peer->Ctx);
  const PackageElement &E = Pkg->Elements[Element];
  CodeHeader H = {CodeMagic, Element, Pkg->Tag, E.CodeKey, uint32_t(Bytes.size()), 0};
  Change(H);
  // As shipCode does: the answer to this shipment is the one taken.
  Peer->Tx.Shipping.start(Pkg, H.Package, H.Element, ~0ull);
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY;
  if (waitRequest(Ctx->Worker, ucp_am_send_nbx(Peer->Ep, AmCode, &H, sizeof H, Bytes.data(),
                                               Bytes.size(), &P)) != UCS_OK)
    fail("cannot ship code");
  for (uint64_t Deadline = nowNs() + 10'000'000'000ull; nowNs() < Deadline;) {
    ucp_worker_progress(Ctx->Worker);
    if (!Ctx->CodeAcks.empty()) {
      tc_status_t St = Ctx->CodeAcks.front().Status;
      Ctx->CodeAcks.clear();
      Peer->Tx.Shipping.end();
      return St;
    }
  }
  fail("no answer to shipped code");
  return TC_ERR_IO;
}

int main(int Argc, char **Argv) {
  if (Argc != 4)
    return std::fprintf(stderr, "usage: tc-rogue malformed|die|code PREFIX PORT\n"), 2;
  bool Die = !std::strcmp(Argv[1], "die");
  bool Code = !std::strcmp(Argv[1], "code");
  tc_package_t *Pkg;
  if (stdlib_package_load(Argv[2], TC_PACKAGE_SENDER, &Pkg) != TC_OK)
    fail("cannot load stdlib");
  tc_context_params_t CP = {TC_CONTEXT_PARAMS_VERSION, 16, 1024, 4};
  tc_context_t *Ctx;
  tc_peer_t *Peer = nullptr;
  if (tc_context_create(&CP, &Ctx) != TC_OK || tc_context_add_package(Ctx, Pkg) != TC_OK ||
      tc_connect(Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[3])), 10000, &Peer) != TC_OK)
    fail("cannot connect");

  int32_t Sum[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto Good = [&](FrameSpec &S) {
    S.Package = Pkg->Tag;
    S.Element = STDLIB_SERVER_SIDE_SUM;
    S.Payload = Sum;
    S.PayloadSize = sizeof Sum;
  };
  auto Injected = [&](FrameSpec &S) {
    Good(S);
    S.Kind = FrameInjected;
    S.Image = Pkg->Elements[STDLIB_SERVER_SIDE_SUM].Image.Bytes.data();
    S.ImageSize = uint32_t(Pkg->Elements[STDLIB_SERVER_SIDE_SUM].Image.Bytes.size());
    S.Code = Pkg->Elements[STDLIB_SERVER_SIDE_SUM].CodeKey;
  };
  auto Cached = [&](FrameSpec &S) {
    Good(S);
    S.Kind = FrameCached;
    S.Code = Pkg->Elements[STDLIB_SERVER_SIDE_SUM].CodeKey;
  };
  auto None = [](uint8_t *, size_t, uint64_t) {};
  // GOTP travels as zero, as the runtime's templates send it.
  auto WithGotp = reseal([](FrameHeader &) {});

  if (Code) {
    const uint32_t Sum = STDLIB_SERVER_SIDE_SUM;
    std::vector<uint8_t> Image = Pkg->Elements[Sum].Image.Bytes;
    std::vector<uint8_t> Changed = Image;
    Changed[20] ^= 0x01;
    auto Same = [](CodeHeader &) {};
    std::printf("rogue: code, a changed byte: %s\n",
                tc_status_string(offerCode(Peer, Pkg, Sum, Changed, Same)));
    std::printf("rogue: code, a wrong size: %s\n",
                tc_status_string(offerCode(
                    Peer, Pkg, Sum, std::vector<uint8_t>(Image.begin(), Image.end() - 64), Same)));
    std::printf("rogue: code, a wrong key: %s\n",
                tc_status_string(offerCode(Peer, Pkg, Sum, Image,
                                           [](CodeHeader &H) { H.Code ^= 4; })));
    std::printf("rogue: code, an unknown element: %s\n",
                tc_status_string(offerCode(Peer, Pkg, Sum, Image,
                                           [](CodeHeader &H) { H.Element = 9999; })));
    // Answers to nothing this side shipped (a hostile receiver's): dropped,
    // so they cannot crowd out the real answer below.
    CodeAck Forged = {CodeAckMagic, TC_OK, Pkg->Tag, Sum, 0};
    ucp_am_recv_param_t From = {};
    From.recv_attr = UCP_AM_RECV_ATTR_FIELD_REPLY_EP;
    From.reply_ep = Peer->Ep;
    for (int K = 0; K < 32; ++K)
      onCodeAck(Ctx, &Forged, sizeof Forged, nullptr, 0, &From);
    std::printf("rogue: code, forged answers kept: %zu\n", Ctx->CodeAcks.size());
    std::printf("rogue: code, true: %s\n",
                tc_status_string(offerCode(Peer, Pkg, Sum, Image, Same)));
    putFrame(Peer, Cached, None);
    if (tc_flush(Peer, 20000) != TC_OK)
      fail("the receiver did not run the cached frame");
    std::printf("rogue: cached frame ran\n");
    tc_peer_close(Peer);
    tc_context_destroy(Ctx);
    tc_package_unload(Pkg);
    return 0;
  }

  if (Die) {
    for (int I = 0; I < 5; ++I)
      putFrame(Peer, Good, None);
    putFrame(Peer, Good, None, 64); // cut short: the trailer never lands
    std::printf("rogue: sent 5 frames and a cut one; dying\n");
    std::fflush(stdout);
    _exit(0); // no close, no flush
  }

  putFrame(Peer, Good, reseal([](FrameHeader &H) { H.Magic ^= 0xff; }));
  putFrame(Peer, Good, reseal([](FrameHeader &H) { H.Version = 77; }));
  putFrame(Peer, Good, reseal([](FrameHeader &H) { H.Package ^= 1; }));
  putFrame(Peer, Good, reseal([](FrameHeader &H) { H.Element = 9999; }));
  putFrame(Peer, Injected, [&](uint8_t *F, size_t Size, uint64_t Seq) {
    F[FrameLine + 20] ^= 0x01; // a changed instruction byte of the image
    WithGotp(F, Size, Seq);
  });
  putFrame(Peer, Good, reseal([](FrameHeader &H) { H.PayloadSize = 100000; }));
  putFrame(Peer, Good, None, 64); // cut short; the next frame completes
  putFrame(Peer, Good, [](uint8_t *F, size_t Size, uint64_t) {
    F[Size - 1] ^= 0x5a; // whole, but the checksum is wrong
  });
  // Right bytes, wrong claim.
  putFrame(Peer, [&](FrameSpec &S) { Injected(S); S.Code ^= 1; }, WithGotp);
  // A cached frame naming a hash that is no code of the element.
  putFrame(Peer, [&](FrameSpec &S) { Cached(S); S.Code ^= 2; }, None);
  // A cached frame naming the element's own code, which was never sent:
  // the receiver asks for it; this sender never sends it.
  putFrame(Peer, Cached, None);
  putFrame(Peer, Good, None);
  putFrame(Peer, Injected, WithGotp);
  putFrame(Peer, Cached, None); // now installed: runs
  // The receiver tells the sender why it refused its frames: the flush
  // says the last one's reason, once (docs/runtime.md, "Refusals").
  tc_status_t Flushed = tc_flush(Peer, 20000);
  tc_jam_fault_t Last = {};
  tc_peer_last_fault(Peer, &Last);
  std::printf("rogue: flush: %s; last refusal: kind %u, %s\n", tc_status_string(Flushed), Last.kind,
              tc_status_string(tc_status_t(Last.status)));
  if (Flushed != TC_OK && Last.kind == TC_JAM_REFUSED && Flushed == Last.status)
    Flushed = tc_flush(Peer, 20000);
  if (Flushed != TC_OK)
    fail("the receiver did not finish the frames");
  // Larger than a slot and than the receiver's share of payloads sent
  // ahead of their frames (4 MiB by default): it can never go.
  std::vector<uint8_t> Big(5u << 20, 1);
  tc_status_t Oversized = tc_send(Peer, Pkg, STDLIB_SERVER_SIDE_SUM, TC_SEND_LOCAL,
                                  Big.data(), Big.size());
  std::printf("rogue: oversized send: %s\n", tc_status_string(Oversized));
  std::printf("rogue: sent 11 bad frames and 3 good ones\n");
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  tc_package_unload(Pkg);
  return 0;
}
