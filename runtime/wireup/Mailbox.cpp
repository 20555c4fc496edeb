//===- Mailbox.cpp - A peer's ring and credit line, and the offers --------===//
//
// On the RMA path the ring and the credit line are memory UCX allocates and
// maps in the RMA context (UCX-allocated memory takes the fast shared-
// memory path), and their keys travel in the offer. On the message path
// they are plain memory of this process that only its own handlers write
// (FramePath.cpp): no key and no address is handed out.
//
//===----------------------------------------------------------------------===//
#include "wireup/Mailbox.h"

#include "base/Log.h"
#include "core/Stats.h"
#include "ucx/Request.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

using namespace twochains::rt;

static void *mapForRma(WireupContext *Ctx, size_t Length, ucp_mem_h &Mem) {
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                 UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.address = nullptr;
  M.length = Length;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_attr_t A = {};
  A.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  if (ucp_mem_map(Ctx->RmaUcp, &M, &Mem) != UCS_OK)
    return nullptr;
  if (ucp_mem_query(Mem, &A) != UCS_OK) {
    ucp_mem_unmap(Ctx->RmaUcp, Mem);
    Mem = nullptr;
    return nullptr;
  }
  std::memset(A.address, 0, Length);
  return A.address;
}

namespace twochains::rt {

tc_status_t setupLocalSide(WireupContext *Ctx, tc_peer *Peer) {
  Peer->Rx.RingBytes = size_t(Ctx->Slots) * slotStride(Ctx->SlotSize);
  if (Peer->Path == PathRma) {
    Peer->Rx.Ring = static_cast<uint8_t *>(mapForRma(Ctx, Peer->Rx.RingBytes, Peer->Rx.RingMem));
    Peer->Tx.CreditWord = static_cast<volatile uint64_t *>(mapForRma(Ctx, 64, Peer->Tx.CreditMem));
  } else {
    void *Ring = mmap(nullptr, Peer->Rx.RingBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    Peer->Rx.Ring = Ring == MAP_FAILED ? nullptr : static_cast<uint8_t *>(Ring);
    Peer->Tx.CreditLine.reset(new (std::nothrow) uint64_t[8]());
    Peer->Tx.CreditWord = Peer->Tx.CreditLine.get();
  }
  if (!Peer->Rx.Ring || !Peer->Tx.CreditWord) {
    logError("cannot allocate a ring and credit line for " + Peer->Name);
    return TC_ERR_NO_MEMORY;
  }
  Peer->Rx.Receive = std::make_unique<ReceiverRing>(Ctx->Slots, Ctx->Batch);
  return TC_OK;
}

tc_status_t makeOffer(WireupContext *Ctx, tc_peer *Peer, Offer &O, std::vector<uint8_t> &Body) {
  O = {};
  O.Magic = HandshakeMagic;
  O.Version = HandshakeVersion;
  O.Slots = Ctx->Slots;
  O.SlotSize = Ctx->SlotSize;
  O.MailboxMode = uint32_t(Ctx->Mode);
  O.Path = Peer->Path;
  O.Isa = hostIsa();
  Body.clear();
  // The packages go last, after what the path needs; both paths carry them.
  std::vector<std::pair<std::string, std::string>> Packages;
  for (const tc_package *P : Ctx->Packages)
    if (Packages.size() < MaxOfferPackages && P->Name.size() <= MaxPackageNameSize &&
        P->Identity.size() == PackageIdentitySize)
      Packages.emplace_back(P->Name, P->Identity);
  auto AddPackages = [&] {
    size_t Before = Body.size();
    appendOfferPackages(Body, Packages);
    O.PackagesSize = uint32_t(Body.size() - Before);
    return TC_OK;
  };
  if (Peer->Path != PathRma)
    return AddPackages();
  void *CreditKey = nullptr, *RingKey = nullptr;
  size_t CreditKeySize = 0, RingKeySize = 0;
  if (ucp_rkey_pack(Ctx->RmaUcp, Peer->Tx.CreditMem, &CreditKey, &CreditKeySize) != UCS_OK)
    return TC_ERR_IO;
  if (ucp_rkey_pack(Ctx->RmaUcp, Peer->Rx.RingMem, &RingKey, &RingKeySize) != UCS_OK) {
    ucp_rkey_buffer_release(CreditKey);
    return TC_ERR_IO;
  }
  O.CreditAddress = reinterpret_cast<uint64_t>(Peer->Tx.CreditWord);
  O.RingAddress = reinterpret_cast<uint64_t>(Peer->Rx.Ring);
  O.CreditKeySize = uint32_t(CreditKeySize);
  O.RingKeySize = uint32_t(RingKeySize);
  O.WorkerAddressSize = uint32_t(Ctx->WorkerAddressSize);
  auto Append = [&](const void *P, size_t N) {
    Body.insert(Body.end(), static_cast<const uint8_t *>(P), static_cast<const uint8_t *>(P) + N);
  };
  Append(CreditKey, CreditKeySize);
  Append(RingKey, RingKeySize);
  Append(Ctx->WorkerAddress, Ctx->WorkerAddressSize);
  ucp_rkey_buffer_release(CreditKey);
  ucp_rkey_buffer_release(RingKey);
  return AddPackages();
}

static ucp_ep_h connectToWorker(WireupContext *Ctx, const uint8_t *Address) {
  // No peer-failure handling on this endpoint: UCX 1.13 gives such
  // endpoints only transports that detect failures (TCP), never shared
  // memory. Failures are seen on the sockaddr endpoint.
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  P.address = reinterpret_cast<const ucp_address_t *>(Address);
  ucp_ep_h Ep = nullptr;
  if (ucp_ep_create(Ctx->DataWorker, &P, &Ep) != UCS_OK)
    return nullptr;
  return Ep;
}

/// ucp_ep_rkey_unpack takes no length, and each transport reads the
/// fixed-size record it expects: the key, checked to be well-formed
/// (checkPackedRkey), is handed over from a zero-padded copy, so that no
/// read runs past what the peer sent into memory it did not.
static bool unpackKey(ucp_ep_h Ep, const uint8_t *Key, size_t Size, ucp_rkey_h *Out) {
  static constexpr size_t Padding = 256;
  std::vector<uint8_t> Copy(Size + Padding, 0);
  std::memcpy(Copy.data(), Key, Size);
  return ucp_ep_rkey_unpack(Ep, Copy.data(), Out) == UCS_OK;
}

bool insideSharedMapping(uintptr_t Begin, size_t Length) {
  std::FILE *Maps = std::fopen("/proc/self/maps", "re");
  if (!Maps)
    return false;
  bool Inside = false;
  char Line[512];
  while (!Inside && std::fgets(Line, sizeof Line, Maps)) {
    unsigned long long Start, End;
    char Perms[5];
    if (std::sscanf(Line, "%llx-%llx %4s", &Start, &End, Perms) == 3)
      Inside = Begin >= Start && Begin + Length <= End && Perms[1] == 'w' && Perms[3] == 's';
  }
  std::fclose(Maps);
  return Inside;
}

/// Where UCX maps Length bytes of a peer's memory at Address into this
/// process (ucp_rkey_ptr: shared memory, posix and sysv), else null; then
/// this side stores into it itself, with no put (docs/performance.md,
/// "Direct stores"). TC_DIRECT_STORES=0: always puts.
static uint8_t *directMapping(ucp_rkey_h Key, uint64_t Address, size_t Length) {
  const char *Env = std::getenv("TC_DIRECT_STORES");
  if ((Env && !std::strcmp(Env, "0")) || !Length || Address + Length < Address)
    return nullptr;
  void *First = nullptr, *Last = nullptr;
  if (ucp_rkey_ptr(Key, Address, &First) != UCS_OK ||
      ucp_rkey_ptr(Key, Address + Length - 1, &Last) != UCS_OK ||
      uintptr_t(Last) - uintptr_t(First) != Length - 1 ||
      !insideSharedMapping(uintptr_t(First), Length))
    return nullptr;
  return static_cast<uint8_t *>(First);
}

bool putsTo(const tc_peer *Peer) { return !Peer->Tx.RingDirect || !Peer->Rx.CreditDirect; }

void countRmaPeer(WireupContext *Ctx, tc_peer *Peer) {
  countHeld(Ctx, &tc_stats_t::peers_rma);
  if (Peer->Tx.RingDirect)
    countHeld(Ctx, &tc_stats_t::peers_direct);
  if (putsTo(Peer))
    ++Ctx->PutPeers;
  logInfo(Peer->Name + ": frames by " +
          (Peer->Tx.RingDirect ? "direct stores into its ring (UCX maps it here)" : "put") +
          ", credits by " + (Peer->Rx.CreditDirect ? "direct stores" : "put"));
}

bool rmaReaches(WireupContext *Ctx, tc_peer *Peer, const ParsedOffer &Hello) {
  // An address with no transport in common fails at once (unreachable):
  // a sender on another host without RDMA hardware gets the message path.
  if (!Ctx->DataWorker || Hello.Header.Path != PathRma)
    return false;
  Peer->DataEp = connectToWorker(Ctx, Hello.WorkerAddress);
  return Peer->DataEp != nullptr;
}

tc_status_t acceptOffer(WireupContext *Ctx, tc_peer *Peer, const ParsedOffer &Parsed,
                        std::string &Why) {
  const Offer &O = Parsed.Header;
  if (Peer->Path == PathRma) {
    if (!Peer->DataEp && !(Peer->DataEp = connectToWorker(Ctx, Parsed.WorkerAddress))) {
      Why = "its RMA worker cannot be reached";
      return TC_ERR_IO;
    }
    if (!unpackKey(Peer->DataEp, Parsed.CreditKey, O.CreditKeySize, &Peer->Rx.CreditKey) ||
        !unpackKey(Peer->DataEp, Parsed.RingKey, O.RingKeySize, &Peer->Tx.RingKey)) {
      Why = "its memory keys cannot be unpacked";
      return TC_ERR_BAD_OFFER;
    }
    Peer->Rx.CreditAddress = O.CreditAddress;
    Peer->Tx.RingAddress = O.RingAddress;
    // Slots and SlotSize were bounded by parseOffer.
    Peer->Tx.RingDirect =
        directMapping(Peer->Tx.RingKey, O.RingAddress, size_t(O.Slots) * slotStride(O.SlotSize));
    Peer->Rx.CreditDirect = reinterpret_cast<uint64_t *>(
        directMapping(Peer->Rx.CreditKey, O.CreditAddress, CreditWords * sizeof(uint64_t)));
    if (Peer->Rx.CreditDirect && O.CreditAddress % alignof(uint64_t))
      Peer->Rx.CreditDirect = nullptr;
  }
  Peer->Tx.Slots = O.Slots;
  Peer->Tx.SlotSize = O.SlotSize;
  Peer->Tx.Send = std::make_unique<SenderRing>(O.Slots);
  Peer->Tx.Staging.assign(O.SlotSize, 0);
  Peer->Tx.RemoteMode = tc_mailbox_mode_t(O.MailboxMode);
  Peer->Tx.RemoteIsa = O.Isa;
  // Frames stored straight into the ring stay there until credited: a
  // resend reads them from it.
  bool Puts = Peer->Path == PathRma && !Peer->Tx.RingDirect;
  if ((Peer->Tx.RemoteMode == TC_MAILBOX_CODE_CACHE && !Peer->Tx.RingDirect) || Puts)
    Peer->Tx.SlotFrames.assign(size_t(O.Slots) * Peer->Tx.slotFrameStride(), 0);
  if (Puts)
    Peer->Tx.Puts.assign(O.Slots, nullptr);
  return TC_OK;
}

} // namespace twochains::rt
