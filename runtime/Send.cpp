//===- Send.cpp - tc_send and tc_flush ------------------------------------===//
#include "Frame.h"
#include "Identity.h"
#include "Runtime.h"

#include <chrono>
#include <cstring>
#include <vector>

using namespace twochains::rt;

extern "C" tc_status_t tc_send(tc_peer_t *Peer, const tc_package_t *Pkg, uint32_t Element,
                               tc_send_mode_t Mode, const void *Payload, size_t PayloadSize) {
  if (!Peer || !Pkg || (Mode != TC_SEND_LOCAL && Mode != TC_SEND_INJECTED) ||
      (PayloadSize && !Payload) || PayloadSize > UINT32_MAX)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Peer->Ctx->Lock);
  if (Peer->Failed || !Peer->Welcomed)
    return TC_ERR_IO;
  if (Element >= Pkg->Elements.size() || !Pkg->Elements[Element].Present ||
      !Pkg->Elements[Element].IsJam)
    return TC_ERR_UNKNOWN_ELEMENT;
  const JamImageData &Image = Pkg->Elements[Element].Image;
  uint32_t ImageSize = Mode == TC_SEND_INJECTED ? uint32_t(Image.Bytes.size()) : 0;
  if (frameSize(ImageSize, uint32_t(PayloadSize)) > Peer->SlotSize)
    return TC_ERR_TOO_LARGE;

  Peer->Send->credit(*Peer->CreditWord);
  uint64_t Seq;
  uint32_t Slot;
  if (Peer->Send->reserve(&Seq, &Slot) != TC_OK) {
    ucp_worker_progress(Peer->Ctx->Worker);
    return TC_ERR_NO_CREDIT;
  }
  // Injected frames are built in the element's template: header line and
  // image already there, GOTP already pointing at the receiver's import
  // table; only the payload, the sequence and the trailer are written.
  uint8_t *Frame = Peer->Staging.data();
  if (ImageSize) {
    std::vector<uint8_t> &T = Peer->Templates[{Pkg, Element}];
    if (T.empty()) {
      T.assign(Peer->SlotSize, 0);
      std::memcpy(T.data() + FrameLine, Image.Bytes.data(), ImageSize);
      auto It = Peer->RemoteTables.find({Pkg->Tag, Element});
      uint64_t Table = It == Peer->RemoteTables.end() ? 0 : It->second;
      std::memcpy(T.data() + FrameLine + Image.GOTP, &Table, sizeof Table);
    }
    Frame = T.data();
  }
  FrameSpec Spec;
  Spec.Kind = Mode == TC_SEND_INJECTED ? FrameInjected : FrameLocal;
  Spec.Package = Pkg->Tag;
  Spec.Element = Element;
  Spec.Image = ImageSize ? Frame + FrameLine : nullptr;
  Spec.ImageSize = ImageSize;
  Spec.Payload = Payload;
  Spec.PayloadSize = uint32_t(PayloadSize);
  Spec.Sequence = Seq;
  size_t Size = 0;
  tc_status_t St = encodeFrame(Frame, Peer->SlotSize, Spec, &Size);
  if (St != TC_OK)
    return St;
  ucp_request_param_t P = {};
  ucs_status_t Put = waitRequest(
      Peer->Ctx->Worker,
      ucp_put_nbx(Peer->DataEp, Frame, Size,
                  Peer->RingAddress + uint64_t(Slot) * Peer->SlotSize, Peer->RingKey, &P));
  if (Put != UCS_OK) {
    Peer->Failed = true;
    return TC_ERR_IO;
  }
  ++Peer->Ctx->Stats.frames_sent;
  return TC_OK;
}

extern "C" tc_status_t tc_send_args(tc_peer_t *Peer, const tc_package_t *Pkg,
                                    uint32_t Element, tc_send_mode_t Mode, const void *Args) {
  if (!Peer || !Pkg || !Args || Element >= Pkg->Elements.size() ||
      !Pkg->Elements[Element].Present)
    return TC_ERR_INVALID_PARAM;
  const PackageElement &E = Pkg->Elements[Element];
  if (!E.PayloadSize || !E.PayloadInit)
    return TC_ERR_INVALID_PARAM; // the jam has no helpers: use tc_send
  using SizeFn = size_t (*)(const void *);
  using InitFn = size_t (*)(const void *, void *);
  size_t Capacity = reinterpret_cast<SizeFn>(E.PayloadSize)(Args);
  if (Capacity > Peer->SlotSize)
    return TC_ERR_TOO_LARGE;
  // The payload is built beside the frame staging buffer, then sent.
  std::vector<uint8_t> Payload(Capacity ? Capacity : 1);
  size_t Size = reinterpret_cast<InitFn>(E.PayloadInit)(Args, Payload.data());
  if (Size > Capacity)
    return TC_ERR_INVALID_PARAM; // the helper wrote more than it promised
  return tc_send(Peer, Pkg, Element, Mode, Payload.data(), Size);
}

extern "C" tc_status_t tc_flush(tc_peer_t *Peer, int TimeoutMs) {
  if (!Peer || !Peer->Welcomed)
    return TC_ERR_INVALID_PARAM;
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs);
  for (;;) {
    std::lock_guard<std::recursive_mutex> Guard(Peer->Ctx->Lock);
    Peer->Send->credit(*Peer->CreditWord);
    if (Peer->Send->available() == Peer->Slots)
      return TC_OK;
    if (Peer->Failed)
      return TC_ERR_IO;
    if (std::chrono::steady_clock::now() > Deadline)
      return TC_ERR_INCOMPLETE;
    ucp_worker_progress(Peer->Ctx->Worker);
  }
}
