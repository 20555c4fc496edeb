//===- Executor.cpp - Running the frames that arrived ---------------------===//
//
// tc_progress polls every sender's ring at the slot it expects next. A
// frame runs only when it is complete and passes every check: frame fields
// (Frame.cpp), a package this receiver loaded, an element of it, and for
// injected frames an image identical to the package's own. It then runs
// (Local: the library's copy; Injected: the arrived bytes, copied to
// executable memory, GOTP and fixups applied, instruction stream
// synchronised), the slot is released, and credits are reported in
// batches with a one-sided put.
//
//===----------------------------------------------------------------------===//
#include "Frame.h"
#include "Identity.h"
#include "Log.h"
#include "Runtime.h"

#include <chrono>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

using namespace twochains::rt;

static void reportCredits(tc_context *Ctx, tc_peer *Peer) {
  if (Peer->Failed)
    return;
  if (Peer->CreditRequest) {
    if (ucp_request_check_status(Peer->CreditRequest) == UCS_INPROGRESS)
      return; // the previous report is still being put; report later
    ucp_request_free(Peer->CreditRequest);
    Peer->CreditRequest = nullptr;
  }
  Peer->CreditSource = Peer->Receive->takeCreditReport();
  ucp_request_param_t P = {};
  ucs_status_ptr_t R = ucp_put_nbx(Peer->DataEp, &Peer->CreditSource, sizeof Peer->CreditSource,
                                   Peer->CreditAddress, Peer->CreditKey, &P);
  if (UCS_PTR_IS_ERR(R)) {
    Peer->Failed = true;
    return;
  }
  Peer->CreditRequest = R;
  ++Ctx->Stats.credit_reports;
}

static uint64_t nowNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

/// A frame that never completes (a write cut short, a corrupt byte) would
/// stall its ring for ever. It is given up when the sender has written the
/// frame after it (its trailer shows the next sequence, sound or not) and
/// it has stayed incomplete for TruncationDeadlineNs: the sender has moved
/// on, so its bytes are not still landing.
static constexpr uint64_t TruncationDeadlineNs = 100'000'000;

static bool truncated(tc_context *Ctx, tc_peer *Peer, uint64_t Seq) {
  uint32_t NextSlot = uint32_t((Seq + 1) % Ctx->Slots);
  if (!frameTrailerShows(Peer->Ring + size_t(NextSlot) * Ctx->SlotSize, Ctx->SlotSize,
                         Seq + 1)) {
    Peer->StalledSinceNs = 0;
    return false;
  }
  uint64_t Now = nowNs();
  if (!Peer->StalledSinceNs) {
    Peer->StalledSinceNs = Now;
    return false;
  }
  return Now - Peer->StalledSinceNs > TruncationDeadlineNs;
}

/// The element's image, installed once: copied into pages of its own, GOTP
/// and fixups applied, the instruction stream synchronised, then made
/// read+execute only. Writing fresh code into executable pages for every
/// frame would cost about 100 ns of self-modifying-code clears here
/// (bench/isync); the arrived bytes are compared with this copy instead.
static uint8_t *installedCode(tc_context *Ctx, const tc_package *Pkg, uint32_t Element) {
  auto Key = std::make_pair(Pkg, Element);
  auto It = Ctx->InstalledCode.find(Key);
  if (It != Ctx->InstalledCode.end())
    return It->second.Code;
  const PackageElement &E = Pkg->Elements[Element];
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  size_t Size = (E.Image.Bytes.size() + Page - 1) / Page * Page;
  void *M = mmap(nullptr, Size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (M == MAP_FAILED)
    return nullptr;
  auto *Code = static_cast<uint8_t *>(M);
  std::memcpy(Code, E.Image.Bytes.data(), E.Image.Bytes.size());
  prepareInjected(Code, E);
  __builtin___clear_cache(reinterpret_cast<char *>(Code),
                          reinterpret_cast<char *>(Code + E.Image.Bytes.size()));
  if (mprotect(Code, Size, PROT_READ | PROT_EXEC) != 0) {
    munmap(Code, Size);
    return nullptr;
  }
  Ctx->InstalledCode[Key] = {Code, Size};
  return Code;
}

static tc_status_t runFrame(tc_context *Ctx, tc_peer *Peer, const FrameView &V) {
  const FrameHeader &H = *V.Header;
  tc_package *Pkg = nullptr;
  for (tc_package *P : Ctx->Packages)
    if ((P->Roles & TC_PACKAGE_RECEIVER) && P->Tag == H.Package)
      Pkg = P;
  if (!Pkg)
    return TC_ERR_UNKNOWN_PACKAGE;
  if (H.Element >= Pkg->Elements.size() || !Pkg->Elements[H.Element].Present ||
      !Pkg->Elements[H.Element].IsJam)
    return TC_ERR_UNKNOWN_ELEMENT;
  const PackageElement &E = Pkg->Elements[H.Element];
  tc_jam_ctx JamCtx = {Peer, H.Sequence, Pkg};
  void *Payload = const_cast<uint8_t *>(V.Payload);
  if (H.Kind == FrameLocal) {
    if (!E.LocalEntry)
      return TC_ERR_UNKNOWN_ELEMENT;
    E.LocalEntry(&JamCtx, Payload, H.PayloadSize);
    ++Ctx->Stats.frames_executed_local;
    return TC_OK;
  }
  // Only code this receiver already trusts runs: the image must be the
  // package's, byte for byte, except GOTP, which the sender's template
  // points at this receiver's import table for the element (handed over
  // at connect).
  const std::vector<uint8_t> &Known = E.Image.Bytes;
  size_t G = E.Image.GOTP;
  uint64_t Gotp;
  if (H.ImageSize != Known.size())
    return TC_ERR_UNKNOWN_ELEMENT;
  std::memcpy(&Gotp, V.Image + G, sizeof Gotp);
  if (Gotp != reinterpret_cast<uint64_t>(E.ImportTable.data()) ||
      std::memcmp(V.Image, Known.data(), G) != 0 ||
      std::memcmp(V.Image + G + 8, Known.data() + G + 8, Known.size() - G - 8) != 0)
    return TC_ERR_UNKNOWN_ELEMENT;
  uint8_t *Code = installedCode(Ctx, Pkg, H.Element);
  if (!Code)
    return TC_ERR_NO_MEMORY;
  reinterpret_cast<JamEntry>(Code + E.Image.Entry)(&JamCtx, Payload, H.PayloadSize);
  ++Ctx->Stats.frames_executed_injected;
  return TC_OK;
}

/// The word a frame's arrival will write first: the header line of the
/// slot the first ring expects next.
static const volatile void *watchedWord(tc_context *Ctx) {
  static const volatile uint64_t Nothing = 0;
  for (auto &P : Ctx->Accepted)
    if (P->Ring && P->Receive)
      return P->Ring + size_t(P->Receive->expectedSlot()) * Ctx->SlotSize;
  for (tc_peer *P : Ctx->Connected)
    if (P->Ring && P->Receive)
      return P->Ring + size_t(P->Receive->expectedSlot()) * Ctx->SlotSize;
  return &Nothing;
}

extern "C" tc_status_t tc_executor_start(tc_context_t *Ctx) {
  if (!Ctx || Ctx->Executor.joinable())
    return TC_ERR_INVALID_PARAM;
  Ctx->StopExecutor = false;
  Ctx->Executor = std::thread([Ctx] {
    while (!Ctx->StopExecutor.load(std::memory_order_relaxed)) {
      unsigned Ran = 0;
      const volatile void *Watched;
      {
        std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
        tc_progress(Ctx, &Ran);
        Watched = watchedWord(Ctx);
      }
      if (!Ran)
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
  return TC_OK;
}

extern "C" const char *tc_wait_mode_name(const tc_context_t *Ctx) {
  return Ctx && Ctx->Wait ? Ctx->Wait->name() : "";
}

extern "C" tc_status_t tc_progress(tc_context_t *Ctx, unsigned *Executed) {
  if (!Ctx)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  ucp_worker_progress(Ctx->Worker);
  processHandshakes(Ctx);
  processPushedRieds(Ctx);
  unsigned Count = 0;
  // Frames come from the senders that connected to us and, as replies,
  // from the receivers we connected to.
  std::vector<tc_peer *> Peers(Ctx->Connected);
  for (auto &P : Ctx->Accepted)
    Peers.push_back(P.get());
  for (tc_peer *Peer : Peers) {
    // A peer that went away may have left complete frames behind: they
    // still run (nothing sent is lost); only credits stop.
    if (!Peer->Ring || !Peer->Welcomed)
      continue;
    for (;;) {
      uint64_t Seq = Peer->Receive->expected();
      uint8_t *Slot = Peer->Ring + size_t(Peer->Receive->expectedSlot()) * Ctx->SlotSize;
      FrameView V;
      tc_status_t St = checkFrame(Slot, Ctx->SlotSize, Seq, &V,
                                  Ctx->Flags & TC_CONTEXT_ORDERED_PLACEMENT);
      if (St == TC_ERR_INCOMPLETE && !truncated(Ctx, Peer, Seq))
        break;
      Peer->StalledSinceNs = 0;
      if (St == TC_OK)
        St = runFrame(Ctx, Peer, V);
      if (St != TC_OK) {
        ++Ctx->Stats.frames_rejected;
        logError("dropped frame " + std::to_string(Seq) + ": " + tc_status_string(St));
      }
      ++Count;
      if (Peer->Receive->finish())
        reportCredits(Ctx, Peer);
    }
    if (Peer->Receive->creditPending())
      reportCredits(Ctx, Peer); // idle: tell the sender now
  }
  if (Executed)
    *Executed = Count;
  return TC_OK;
}
