//===- Mailbox.cpp - A peer's ring and credit line, and the offers --------===//
//
// On the RMA path the ring and the credit line are memory UCX allocates and
// maps in the RMA context (UCX-allocated memory takes the fast shared-
// memory path), and their keys travel in the offer; between ranks of one
// host they are a memory file of this process's instead
// (base/SharedSegment.h), which the other rank maps itself, with no key
// and no RMA endpoint between the two. The doorbell is always such a
// file. On the message path they are plain memory of this process that
// only its own handlers write (FramePath.cpp): no key and no address is
// handed out.
//
//===----------------------------------------------------------------------===//
#include "path/Mailbox.h"
#include "path/FramePath.h"

#include "base/Log.h"
#include "base/Mappings.h"
#include "base/SharedSegment.h"
#include "base/Timeouts.h"
#include "containment/PeerMappings.h"
#include "core/Peers.h"
#include "core/Polled.h"
#include "core/Stats.h"
#include "ucx/Request.h"
#include "ucx/UcxMappings.h"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

using namespace twochains::rt;

/// Zeroes [Begin, Begin + Length) leaving out of memory what can be: a
/// ring then costs the pages its frames use, not its length. UCX reserves
/// a shared segment's whole length (fallocate): the pages inside are given
/// back (MADV_REMOVE), and read as zeros when next touched. Where that is
/// not shared memory, pages not in memory read as zeros when first touched
/// (anonymous memory) and only those in memory are cleared.
static void zeroResident(uint8_t *Begin, size_t Length) {
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  uintptr_t InnerFirst = (uintptr_t(Begin) + Page - 1) & ~(Page - 1);
  uintptr_t InnerEnd = (uintptr_t(Begin) + Length) & ~(Page - 1);
  if (InnerEnd > InnerFirst &&
      madvise(reinterpret_cast<void *>(InnerFirst), InnerEnd - InnerFirst, MADV_REMOVE) == 0) {
    std::memset(Begin, 0, InnerFirst - uintptr_t(Begin));
    std::memset(reinterpret_cast<void *>(InnerEnd), 0, uintptr_t(Begin) + Length - InnerEnd);
    return;
  }
  uintptr_t First = uintptr_t(Begin) & ~(Page - 1);
  size_t Pages = (uintptr_t(Begin) + Length - First + Page - 1) / Page;
  std::vector<unsigned char> In(Pages);
  if (mincore(reinterpret_cast<void *>(First), Pages * Page, In.data()) != 0) {
    std::memset(Begin, 0, Length);
    return;
  }
  for (size_t I = 0; I < Pages; ++I) {
    if (!(In[I] & 1))
      continue;
    uintptr_t From = std::max(First + I * Page, uintptr_t(Begin));
    uintptr_t To = std::min(First + (I + 1) * Page, uintptr_t(Begin) + Length);
    std::memset(reinterpret_cast<void *>(From), 0, To - From);
  }
}

/// Allocates Length bytes that peers may put into; File: the file UCX
/// mapped them from (none where UCX mapped otherwise than ucs_mmap, as
/// System V segments are: ucx/UcxMappings.h).
static void *mapForRma(CoreContext *Ctx, size_t Length, ucp_mem_h &Mem, FileId &File) {
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                 UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.address = nullptr;
  M.length = Length;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_attr_t A = {};
  A.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  std::unique_lock<std::mutex> Mapping(sharedMappingLock());
  twochains_ucx_mapping Watched[4];
  size_t Count = 0;
  twochains_ucx_watch_begin();
  ucs_status_t St = ucp_mem_map(Ctx->RmaUcp, &M, &Mem);
  bool Seen = twochains_ucx_watch_end(Watched, std::size(Watched), &Count);
  if (St != UCS_OK)
    return nullptr;
  if (ucp_mem_query(Mem, &A) != UCS_OK) {
    ucp_mem_unmap(Ctx->RmaUcp, Mem);
    Mem = nullptr;
    return nullptr;
  }
  File = {};
  for (size_t I = 0; Seen && I < Count; ++I)
    if (Watched[I].Begin == uintptr_t(A.address) && Watched[I].Inode)
      File = {Watched[I].Device, Watched[I].Inode};
  zeroResident(static_cast<uint8_t *>(A.address), Length);
  return A.address;
}

/// Why a peer's key or record that maps one of this side's own segments
/// (CoreContext::OwnSegmentFiles) is refused.
static const char OwnSegmentNamed[] =
    "it maps a segment of this side's own (a ring or doorbell of this process), not the peer's";

/// Whether File, which Peer's key or record mapped here, is one of this
/// side's own segments that Peer may not name: any but its counterpart's
/// ring and the doorbell, for a connection of this context to itself.
static bool namesOwnSegment(const tc_peer *Peer, const FileId &File) {
  auto It = Peer->Ctx->OwnSegmentFiles.find(File);
  if (It == Peer->Ctx->OwnSegmentFiles.end())
    return false;
  return !Peer->Counterpart || (It->second && It->second != Peer->Counterpart);
}

/// Maps the segment a peer's record names, if it is of this host (Base
/// null, no Why, if it is not: nothing to map here).
static bool attachRecord(const tc_peer *Peer, SegmentKind Kind, const SharedSegmentRecord &R,
                         size_t TokenAt, uint8_t *&Base, std::string &Why) {
  Base = nullptr;
  if (std::memcmp(R.Host, hostIdentity(), sizeof R.Host))
    return false;
  FileId File;
  uint8_t *Mapped = nullptr;
  if (!attachSharedSegment(Kind, R.Pid, R.Fd, R.Length, TokenAt, R.Token, Mapped, Why, &File))
    return false;
  if (namesOwnSegment(Peer, File)) {
    munmap(Mapped, size_t(R.Length));
    Why = OwnSegmentNamed;
    return false;
  }
  Base = Mapped;
  return true;
}

namespace twochains::rt {

SharedSegmentRecord recordOfSegment(const SharedSegment &S) {
  SharedSegmentRecord R = {};
  R.Base = reinterpret_cast<uint64_t>(S.Base);
  R.Length = S.Length;
  R.Pid = uint32_t(getpid());
  R.Fd = S.Fd;
  std::memcpy(R.Host, hostIdentity(), sizeof R.Host);
  std::memcpy(R.Token, S.Token, sizeof R.Token);
  return R;
}

tc_status_t setupLocalSide(CoreContext *Ctx, tc_peer *Peer) {
  Peer->Rx->RingBytes = size_t(Ctx->Slots) * slotStride(Ctx->SlotSize);
  if (Peer->Path == PathRma && Peer->Rx->Shared) {
    // The same layout, in a memory file of this side's: the credit line,
    // the token after it, the ring from the second page.
    size_t Page = size_t(sysconf(_SC_PAGESIZE));
    std::string Why;
    if (!createSharedSegment(SegmentKind::Mailbox, Page + Peer->Rx->RingBytes, MailboxTokenAt,
                             Peer->Rx->SharedMailbox, Why)) {
      logError("cannot allocate a ring and credit line for " + Peer->Name + ": " + Why);
      return TC_ERR_NO_MEMORY;
    }
    Peer->Tx->CreditWord = reinterpret_cast<volatile uint64_t *>(Peer->Rx->SharedMailbox.Base);
    Peer->Rx->Ring = Peer->Rx->SharedMailbox.Base + Page;
    Peer->Rx->MailboxFile = Peer->Rx->SharedMailbox.File;
  } else if (Peer->Path == PathRma) {
    // One segment for what the peer writes here, the credit line on its
    // first page and the ring from the second: a segment costs a file, a
    // mapping and a key to unpack on each side, a fifth of a 64-rank
    // job's first round when each had its own.
    size_t Page = size_t(sysconf(_SC_PAGESIZE));
    auto *Segment = static_cast<uint8_t *>(
        mapForRma(Ctx, Page + Peer->Rx->RingBytes, Peer->Rx->MailboxMem, Peer->Rx->MailboxFile));
    Peer->Tx->CreditWord = reinterpret_cast<volatile uint64_t *>(Segment);
    Peer->Rx->Ring = Segment ? Segment + Page : nullptr;
  } else {
    void *Ring = mmap(nullptr, Peer->Rx->RingBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    Peer->Rx->Ring = Ring == MAP_FAILED ? nullptr : static_cast<uint8_t *>(Ring);
    Peer->Tx->CreditLine.reset(new (std::nothrow) uint64_t[CreditLineBytes / sizeof(uint64_t)]());
    Peer->Tx->CreditWord = Peer->Tx->CreditLine.get();
  }
  if (!Peer->Rx->Ring || !Peer->Tx->CreditWord) {
    logError("cannot allocate a ring and credit line for " + Peer->Name);
    return TC_ERR_NO_MEMORY;
  }
  if (Peer->Rx->MailboxFile.Inode)
    Ctx->OwnSegmentFiles[Peer->Rx->MailboxFile] = Peer->Number;
  Peer->Rx->Receive = std::make_unique<ReceiverRing>(Ctx->Slots, Ctx->Batch);
  return TC_OK;
}

void releaseRingPages(CoreContext *Ctx, tc_peer *Peer) {
  PeerReceiveHalf &Rx = *Peer->Rx;
  size_t Page = size_t(sysconf(_SC_PAGESIZE));
  uintptr_t Ring = uintptr_t(Rx.Ring), End = Ring + Rx.RingBytes;
  uintptr_t Keep = uintptr_t(ringSlot(Rx.Ring, Ctx->SlotSize, Rx.Receive->expectedSlot()));
  uintptr_t KeepFirst = Keep & ~(Page - 1);
  uintptr_t KeepEnd = (Keep + slotStride(Ctx->SlotSize) + Page - 1) & ~(Page - 1);
  uintptr_t First = (Ring + Page - 1) & ~(Page - 1), Last = End & ~(Page - 1);
  auto Remove = [&](uintptr_t From, uintptr_t To) {
    if (To > From)
      madvise(reinterpret_cast<void *>(From), To - From, MADV_REMOVE);
  };
  // Slots [Begin, EndSlot) with the pages they share with their
  // neighbours, which are zeros or the kept slot's.
  auto RemoveSlots = [&](uint64_t Begin, uint64_t EndSlot) {
    uintptr_t From = std::max(uintptr_t(ringSlot(Rx.Ring, Ctx->SlotSize, Begin)) & ~(Page - 1),
                              First);
    uintptr_t To = std::min(
        (uintptr_t(ringSlot(Rx.Ring, Ctx->SlotSize, EndSlot)) + Page - 1) & ~(Page - 1), Last);
    Remove(From, std::min(KeepFirst, To));
    Remove(std::max(KeepEnd, From), To);
  };
  // Only slots of frames since the last release hold pages: the others'
  // were given back then (or at the ring's setup) and nothing stored there
  // since, as frames come in order.
  uint64_t Expected = Rx.Receive->expected(), Slots = Ctx->Slots;
  if (Expected - Rx.ReleasedFrom >= Slots) {
    RemoveSlots(0, Slots);
  } else if (Expected != Rx.ReleasedFrom) {
    uint64_t Begin = Rx.ReleasedFrom % Slots, EndSlot = Expected % Slots;
    if (Begin < EndSlot) {
      RemoveSlots(Begin, EndSlot);
    } else {
      RemoveSlots(Begin, Slots);
      RemoveSlots(0, EndSlot);
    }
  }
  Rx.ReleasedFrom = Expected;
}

bool directStores() {
  const char *Env = std::getenv("TC_DIRECT_STORES");
  return !Env || std::strcmp(Env, "0");
}

tc_status_t offerLocalSide(CoreContext *Ctx, tc_peer *Peer, Offer &O, std::vector<uint8_t> &Body) {
  O.Slots = Ctx->Slots;
  O.SlotSize = Ctx->SlotSize;
  O.Path = Peer->Path;
  if (Peer->Path != PathRma)
    return TC_OK;
  // Whether this side will store into the other's ring (where UCX maps
  // it here), which decides whether the other lets this side's ring go
  // cold: a side that puts neither rings nor obeys a limit. (A connection
  // of shared memory is made only by a side that stores directly.)
  if (directStores())
    O.Flags |= OfferStoresDirect;
  auto Append = [&](const void *P, size_t N) {
    Body.insert(Body.end(), static_cast<const uint8_t *>(P), static_cast<const uint8_t *>(P) + N);
  };
  if (Peer->Rx->Shared) {
    O.Flags |= OfferSharedMemory;
    SharedSegmentRecord Mailbox = recordOfSegment(Peer->Rx->SharedMailbox);
    O.RingKeySize = uint32_t(sizeof Mailbox);
    Append(&Mailbox, sizeof Mailbox);
  } else {
    // The credit line and the ring are one segment (setupLocalSide): its
    // key goes as both.
    void *Key = nullptr;
    size_t KeySize = 0;
    if (ucp_rkey_pack(Ctx->RmaUcp, Peer->Rx->MailboxMem, &Key, &KeySize) != UCS_OK)
      return TC_ERR_IO;
    O.CreditKeySize = O.RingKeySize = uint32_t(KeySize);
    Append(Key, KeySize);
    Append(Key, KeySize);
    ucp_rkey_buffer_release(Key);
  }
  O.CreditAddress = reinterpret_cast<uint64_t>(Peer->Tx->CreditWord);
  O.RingAddress = reinterpret_cast<uint64_t>(Peer->Rx->Ring);
  O.WorkerAddressSize = uint32_t(Ctx->WorkerAddressSize);
  Append(Ctx->WorkerAddress, Ctx->WorkerAddressSize);
  // A place in the doorbell, for a peer that may store into the ring: its
  // ring may then go cold (core/Polled.h).
  uint32_t Place = takeDoorbellPlace(Ctx, Peer);
  if (Place != NoDoorbell) {
    SharedSegmentRecord Doorbell = recordOfSegment(Ctx->DoorbellSegment);
    O.DoorbellAddress = Doorbell.Base;
    O.DoorbellKeySize = uint32_t(sizeof Doorbell);
    O.DoorbellIndex = Place;
    Append(&Doorbell, sizeof Doorbell);
  }
  return TC_OK;
}

static ucp_ep_h connectToWorker(CoreContext *Ctx, const uint8_t *Address) {
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

/// A key of the peer's offer to unpack, the address it is for, and the
/// shared mapping unpacking it made here, if any (the segment UCX maps for
/// a shared-memory key), as the kernel lists them.
struct PeerKey {
  const uint8_t *Packed;
  size_t Size;
  ucp_rkey_h *Out;
  uint64_t Address;
  std::vector<SharedMapping> Attached;
};

/// ucp_ep_rkey_unpack takes no length, and each transport reads the
/// fixed-size record it expects: each key, checked to be well-formed
/// (checkPackedRkey), is handed over from a zero-padded copy, so that no
/// read runs past what the peer sent into memory it did not.
static bool unpackEach(ucp_ep_h Ep, std::vector<PeerKey> &Keys, std::string &Why) {
  static constexpr size_t Padding = 256;
  for (PeerKey &K : Keys) {
    std::vector<uint8_t> Copy(K.Size + Padding, 0);
    std::memcpy(Copy.data(), K.Packed, K.Size);
    if (ucp_ep_rkey_unpack(Ep, Copy.data(), K.Out) != UCS_OK) {
      Why = "its memory keys cannot be unpacked";
      return false;
    }
  }
  return true;
}

/// Unpacks the keys, watching what UCX maps meanwhile (ucx/UcxMappings.h):
/// New gets the mappings they made, if the kernel's count of this
/// process's memory grew by exactly those (base/Mappings.h, madeAreAllNew).
/// Else, the keys released (their mappings with them), they are unpacked
/// again between two listings of the process's mappings, and New gets
/// what appeared between. Listing costs as many lines as the process has
/// mappings, thousands with thousands of peers, and was most of a
/// handshake's time: it is the way of last resort (a domain that maps
/// otherwise than UcxMappings.cpp sees, another thread mapping meanwhile).
static bool unpackAndListNew(ucp_ep_h Ep, std::vector<PeerKey> &Keys,
                             std::vector<SharedMapping> &New, std::string &Why) {
  static constexpr size_t MaxWatched = 16;
  // Another thread's handshake (another context, its executor) maps its
  // peer's segments too: between the two counts or listings, only this
  // one's may.
  std::lock_guard<std::mutex> Alone(sharedMappingLock());
  twochains_ucx_mapping Watched[MaxWatched];
  size_t Count = 0;
  uint64_t SizeBefore = virtualSize();
  twochains_ucx_watch_begin();
  bool Unpacked = unpackEach(Ep, Keys, Why);
  bool Seen = twochains_ucx_watch_end(Watched, MaxWatched, &Count);
  uint64_t SizeAfter = virtualSize();
  if (!Unpacked)
    return false;
  std::vector<MadeMapping> Made;
  for (size_t I = 0; Seen && I < Count; ++I)
    Made.push_back({Watched[I].Begin, Watched[I].Length, Watched[I].Prot, Watched[I].Flags,
                    Watched[I].Inode, Watched[I].Device});
  if (Seen && madeAreAllNew(Made, SizeBefore, SizeAfter, New))
    return true;
  for (PeerKey &K : Keys) {
    ucp_rkey_destroy(*K.Out);
    *K.Out = nullptr;
  }
  std::vector<SharedMapping> Before = sharedMappings();
  if (!unpackEach(Ep, Keys, Why))
    return false;
  New = newMappings(Before, sharedMappings());
  return true;
}

/// Unpacks the keys, and gives each key the new mapping its address lies
/// in; a new mapping that is no key's means some key mapped more than one
/// segment (Why).
static bool unpackKeys(const tc_peer *Peer, ucp_ep_h Ep, std::vector<PeerKey> &Keys,
                       std::string &Why) {
  std::vector<SharedMapping> New;
  if (!unpackAndListNew(Ep, Keys, New, Why))
    return false;
  std::vector<uintptr_t> Locals;
  for (PeerKey &K : Keys) {
    void *Local = nullptr;
    Locals.push_back(ucp_rkey_ptr(*K.Out, K.Address, &Local) == UCS_OK ? uintptr_t(Local) : 0);
  }
  std::vector<std::vector<SharedMapping>> Attached;
  if (attachNewMappings(New, Locals, Attached)) {
    Why = "its memory keys map " + std::to_string(New.size()) + " segments here, not one each";
    return false;
  }
  // A key names its segment by a process and a descriptor there (UCX's
  // POSIX segments), or a file name: it may name this process's own.
  for (const SharedMapping &M : New)
    if (M.Inode && namesOwnSegment(Peer, M.file())) {
      Why = std::string("its memory key: ") + OwnSegmentNamed;
      return false;
    }
  for (size_t I = 0; I < Keys.size(); ++I)
    Keys[I].Attached = std::move(Attached[I]);
  return true;
}

static std::string hex(uint64_t V) {
  char B[24];
  std::snprintf(B, sizeof B, "0x%llx", static_cast<unsigned long long>(V));
  return B;
}

/// Checks the Length bytes at Address a peer names, under its key, before
/// anything is stored there; Local is where UCX maps them into this process
/// (shared memory), or null where they stay in the peer's process (puts by
/// CMA, TCP or RDMA: its kernel or NIC bounds them to its registered
/// memory). Mapped here, they must lie inside the one segment the key
/// attached, and the segment must hold them: UCX maps the length the key
/// claims and computes a put's target from the address alone, so an
/// address outside would aim this process's stores at its own memory, and
/// one past the segment's end would fault (SIGBUS).
static bool checkKeyRange(ucp_rkey_h Key, const std::vector<SharedMapping> &Attached,
                          uint64_t Address, size_t Length, const char *What, std::string &Why,
                          uint8_t *&Local) {
  Local = nullptr;
  std::string Named = std::string("its ") + What + " (" + std::to_string(Length) + " bytes at " +
                      hex(Address) + ")";
  void *First = nullptr, *Last = nullptr;
  if (!Length || Address + Length < Address) {
    Why = Named + " wraps around";
    return false;
  }
  if (ucp_rkey_ptr(Key, Address, &First) != UCS_OK)
    return true;
  if (Attached.size() != 1) {
    Why = "its key for the " + std::string(What) + " maps " + std::to_string(Attached.size()) +
          " segments here, not one";
    return false;
  }
  if (ucp_rkey_ptr(Key, Address + Length - 1, &Last) != UCS_OK ||
      uintptr_t(Last) - uintptr_t(First) != Length - 1 ||
      !insideOneOf(Attached, uintptr_t(First), Length)) {
    Why = Named + " lies outside the " + std::to_string(Attached[0].End - Attached[0].Begin) +
          "-byte segment its key maps";
    return false;
  }
  // The range lies in one mapping of one segment, a file mapped from one
  // offset: backed to its last byte, it is backed throughout. Only that
  // byte is read, not one per page: reading a page of shared memory puts
  // it in memory, and the ring's pages stay out until frames use them.
  if (!backedByMemory(uintptr_t(First) + Length - 1, 1)) {
    Why = Named + " runs past the end of its segment (its key claims more than the segment holds)";
    return false;
  }
  Local = static_cast<uint8_t *>(First);
  return true;
}

bool putsTo(const tc_peer *Peer) { return !Peer->Tx->RingDirect || !Peer->Rx->CreditDirect; }

void countRmaPeer(CoreContext *Ctx, tc_peer *Peer) {
  countHeld(Ctx, &tc_stats_t::peers_rma);
  if (Peer->Tx->RingDirect)
    countHeld(Ctx, &tc_stats_t::peers_direct);
  if (putsTo(Peer))
    ++Ctx->PutPeers;
  logInfo(Peer->Name + ": frames by " +
          (Peer->Rx->Shared       ? "direct stores into its ring (its memory file, mapped here)"
           : Peer->Tx->RingDirect ? "direct stores into its ring (UCX maps it here)"
                                  : "put") +
          ", credits by " + (Peer->Rx->CreditDirect ? "direct stores" : "put"));
}

/// The peer's segment of its credit line and ring (OfferSharedMemory),
/// mapped here once.
static bool attachPeerMailbox(tc_peer *Peer, const ParsedOffer &Parsed, std::string &Why) {
  if (Peer->Tx->MailboxMapped)
    return true;
  uint8_t *Base = nullptr;
  if (!attachRecord(Peer, SegmentKind::Mailbox, Parsed.Mailbox, MailboxTokenAt, Base, Why)) {
    if (Why.empty())
      Why = "its shared segment is another host's";
    return false;
  }
  Peer->Tx->MailboxMapped = Base;
  Peer->Tx->MailboxMappedBytes = size_t(Parsed.Mailbox.Length);
  return true;
}

bool rmaReaches(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &Hello) {
  // An address with no transport in common fails at once (unreachable):
  // a sender on another host without RDMA hardware gets the message path.
  if (!Ctx->DataWorker || Hello.Header.Path != PathRma)
    return false;
  // A rank of this host offers its memory: frames and credits are stored
  // into it, no UCX endpoint between the RMA workers. One that cannot be
  // mapped here (another PID namespace, another user) gets the message
  // path, as one this side cannot store into (TC_DIRECT_STORES=0).
  if (Hello.Header.Flags & OfferSharedMemory) {
    std::string Why = directStores() ? "" : "this side does not store into peers' memory";
    if (Why.empty() && attachPeerMailbox(Peer, Hello, Why)) {
      Peer->Rx->Shared = true;
      return true;
    }
    logWarning(Peer->Name + ": frames by message: its memory cannot be used here (" + Why + ")");
    return false;
  }
  setDataEndpoint(Peer, connectToWorker(Ctx, Hello.WorkerAddress));
  return Peer->DataEp != nullptr;
}

void closeMailboxFile(tc_peer *Peer) {
  SharedSegment &S = Peer->Rx->SharedMailbox;
  if (S.Fd >= 0)
    close(S.Fd);
  S.Fd = -1;
}

void shareMemoryWith(tc_peer *Peer) {
  if (directStores())
    Peer->Rx->Shared = true;
}

/// Whether Token is the one in Peer's mailbox segment (a connection of
/// shared memory only), compared in constant time.
static bool holdsMailboxToken(const tc_peer *Peer, const uint8_t *Token) {
  if (!Peer->Rx->Shared || !Peer->Rx->SharedMailbox.Base)
    return false;
  uint8_t Differ = 0;
  for (size_t I = 0; I < SegmentTokenBytes; ++I)
    Differ |= uint8_t(Peer->Rx->SharedMailbox.Token[I] ^ Token[I]);
  return Differ == 0;
}

tc_peer *peerOfMailboxToken(CoreContext *Ctx, const uint8_t *Token, ucp_ep_h From,
                            tc_peer *Sender) {
  // A sender known by its endpoint is the only connection the token may
  // name: no search of every connection for each of its payloads.
  tc_peer *Peer = Sender ? (holdsMailboxToken(Sender, Token) ? Sender : nullptr)
                         : findConnection(Ctx,
                                          [&](tc_peer *P) { return holdsMailboxToken(P, Token); });
  // The endpoint the connection took is the only one its payloads may
  // come on from then on.
  if (!Peer || (Peer->DataEp && Peer->DataEp != From))
    return nullptr;
  if (!Peer->DataEp && From)
    setDataEndpoint(Peer, From);
  return Peer;
}

ucp_ep_h dataEndpoint(CoreContext *Ctx, tc_peer *Peer) {
  if (!Peer->DataEp && !Peer->Tx->WorkerAddress.empty() && Ctx->DataWorker)
    setDataEndpoint(Peer, connectToWorker(Ctx, Peer->Tx->WorkerAddress.data()));
  return Peer->DataEp;
}

/// The peer's doorbell, where this side stores straight into its ring:
/// its segment mapped here, of this host, sealed, with this side's place
/// inside (parseOffer). Without it (another host's, a segment that is not
/// what the record says), this side never rings, and the peer finds its
/// frames by its sweep.
static void mapDoorbell(tc_peer *Peer, const ParsedOffer &Parsed) {
  const Offer &O = Parsed.Header;
  std::string Why;
  uint8_t *Base = nullptr;
  if (!attachRecord(Peer, SegmentKind::Doorbell, Parsed.Doorbell,
                    doorbellTokenAt(Parsed.Doorbell.Length), Base, Why)) {
    if (!Why.empty())
      logWarning(Peer->Name + ": its doorbell is not used: " + Why);
    return;
  }
  Peer->Tx->DoorbellMapped = Base;
  Peer->Tx->DoorbellMappedBytes = size_t(Parsed.Doorbell.Length);
  Peer->Tx->Doorbell = reinterpret_cast<uint64_t *>(Base);
  Peer->Tx->DoorbellWord = Peer->Tx->Doorbell + DoorbellBits + O.DoorbellIndex / 64;
  Peer->Tx->DoorbellBit = 1ull << (O.DoorbellIndex % 64);
}

/// The peer's credit line and ring in its shared segment, already checked
/// to lie inside it (parseOffer): stored into directly.
static tc_status_t attachSharedSide(tc_peer *Peer, const ParsedOffer &Parsed, std::string &Why) {
  const Offer &O = Parsed.Header;
  if (!Peer->Rx->Shared) {
    Why = "it offers shared memory, which this side did not";
    return TC_ERR_BAD_OFFER;
  }
  if (!attachPeerMailbox(Peer, Parsed, Why)) {
    Why = "its shared segment cannot be mapped: " + Why;
    return TC_ERR_BAD_OFFER;
  }
  uint8_t *Base = Peer->Tx->MailboxMapped;
  Peer->Rx->CreditAddress = O.CreditAddress;
  Peer->Tx->RingAddress = O.RingAddress;
  Peer->Tx->RingDirect = Base + (O.RingAddress - Parsed.Mailbox.Base);
  Peer->Rx->CreditDirect = reinterpret_cast<uint64_t *>(Base);
  Peer->Tx->WorkerAddress.assign(Parsed.WorkerAddress, Parsed.WorkerAddress + O.WorkerAddressSize);
  std::memcpy(Peer->Tx->MailboxToken, Parsed.Mailbox.Token, SegmentTokenBytes);
  return TC_OK;
}

tc_status_t attachRemoteSide(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &Parsed,
                             std::string &Why) {
  const Offer &O = Parsed.Header;
  if (Peer->Path == PathRma && (O.Flags & OfferSharedMemory)) {
    if (tc_status_t St = attachSharedSide(Peer, Parsed, Why); St != TC_OK)
      return St;
    if (O.DoorbellKeySize)
      mapDoorbell(Peer, Parsed);
  } else if (Peer->Path == PathRma && Peer->Rx->Shared) {
    Why = "it answers shared memory with memory keys";
    return TC_ERR_BAD_OFFER;
  } else if (Peer->Path == PathRma) {
    if (!Peer->DataEp)
      setDataEndpoint(Peer, connectToWorker(Ctx, Parsed.WorkerAddress));
    if (!Peer->DataEp) {
      Why = "its RMA worker cannot be reached";
      return TC_ERR_IO;
    }
    std::vector<PeerKey> Keys = {
        {Parsed.CreditKey, O.CreditKeySize, &Peer->Rx->CreditKey, O.CreditAddress, {}},
        {Parsed.RingKey, O.RingKeySize, &Peer->Tx->RingKey, O.RingAddress, {}}};
    if (!unpackKeys(Peer, Peer->DataEp, Keys, Why))
      return TC_ERR_BAD_OFFER;
    const std::vector<SharedMapping> &CreditMapped = Keys[0].Attached,
                                     &RingMapped = Keys[1].Attached;
    // Slots and SlotSize were bounded by parseOffer.
    uint8_t *Ring = nullptr, *Credits = nullptr;
    if (!checkKeyRange(Peer->Tx->RingKey, RingMapped, O.RingAddress,
                       size_t(O.Slots) * slotStride(O.SlotSize), "ring", Why, Ring) ||
        !checkKeyRange(Peer->Rx->CreditKey, CreditMapped, O.CreditAddress, CreditLineBytes,
                       "credit line", Why, Credits))
      return TC_ERR_BAD_OFFER;
    // Mapped here: guarded against the peer shrinking them under us.
    if ((Ring &&
         (Peer->Tx->RingGuard = guardPeerMapping(RingMapped[0].Begin, RingMapped[0].End)) < 0) ||
        (Credits && (Peer->Rx->CreditGuard = guardPeerMapping(CreditMapped[0].Begin,
                                                              CreditMapped[0].End)) < 0)) {
      Why = "this process maps as many peers' segments as it can guard";
      return TC_ERR_TOO_MANY_PEERS;
    }
    Peer->Rx->CreditAddress = O.CreditAddress;
    Peer->Tx->RingAddress = O.RingAddress;
    if (directStores()) {
      Peer->Tx->RingDirect = Ring;
      if (O.CreditAddress % alignof(uint64_t) == 0)
        Peer->Rx->CreditDirect = reinterpret_cast<uint64_t *>(Credits);
    }
    // The doorbell is rung only by a side that stores into the ring.
    if (Peer->Tx->RingDirect && O.DoorbellKeySize)
      mapDoorbell(Peer, Parsed);
  }
  Peer->Rx->SenderStores = O.Path == PathRma && (O.Flags & OfferStoresDirect);
  Peer->Tx->Slots = O.Slots;
  Peer->Tx->SlotSize = O.SlotSize;
  Peer->Tx->Send = std::make_unique<SenderRing>(O.Slots);
  if (Peer->Path == PathRma && !Peer->Tx->RingDirect)
    Peer->Tx->Puts.assign(O.Slots, nullptr);
  return TC_OK;
}

bool endRequestsInFlight(tc_peer *Peer) {
  bool GaveUp = false;
  for (uint32_t Slot = 0; Slot < Peer->Tx->Puts.size(); ++Slot) {
    if (!Peer->Tx->Puts[Slot])
      continue;
    if (!Peer->Failed) {
      completePut(Peer, Slot);
    } else {
      ucp_request_free(Peer->Tx->Puts[Slot]); // released by UCX when its endpoint closes it
      GaveUp = true;
    }
    Peer->Tx->Puts[Slot] = nullptr;
  }
  for (ucs_status_ptr_t &R : Peer->Rx->CreditRequest) {
    if (R && !Peer->Failed) {
      waitRequestUntil(frameWorker(Peer), R, nowNs() + PutCompleteTimeoutNs);
    } else if (R) {
      ucp_request_free(R); // released by UCX when its endpoint closes it
      GaveUp = true;
    }
    R = nullptr;
  }
  return GaveUp;
}

void detachRemoteSide(CoreContext *Ctx, tc_peer *Peer) {
  if (Peer->Welcomed && Peer->Path == PathRma && putsTo(Peer) && Ctx->PutPeers)
    --Ctx->PutPeers;
  Peer->Tx->RingDirect = nullptr;
  Peer->Rx->CreditDirect = nullptr;
  Peer->Tx->Doorbell = Peer->Tx->DoorbellWord = nullptr;
  releasePeerMapping(Peer->Tx->RingGuard);
  releasePeerMapping(Peer->Rx->CreditGuard);
  Peer->Tx->RingGuard = Peer->Rx->CreditGuard = -1;
  if (Peer->Tx->DoorbellMapped)
    munmap(Peer->Tx->DoorbellMapped, Peer->Tx->DoorbellMappedBytes);
  if (Peer->Tx->MailboxMapped)
    munmap(Peer->Tx->MailboxMapped, Peer->Tx->MailboxMappedBytes);
  Peer->Tx->DoorbellMapped = Peer->Tx->MailboxMapped = nullptr;
  if (Peer->Rx->CreditKey)
    ucp_rkey_destroy(Peer->Rx->CreditKey);
  if (Peer->Tx->RingKey)
    ucp_rkey_destroy(Peer->Tx->RingKey);
  Peer->Rx->CreditKey = Peer->Tx->RingKey = nullptr;
}

void closeDataEndpoint(CoreContext *Ctx, tc_peer *Peer, bool GaveUp) {
  if (Peer->DataEp) {
    ucp_request_param_t P = {};
    uint64_t Deadline = nowNs() +
                        (Peer->Failed ? ReleaseFailedFlushTimeoutNs : ReleaseFlushTimeoutNs);
    bool Flushed = !GaveUp && waitRequestUntil(Ctx->DataWorker, ucp_ep_flush_nbx(Peer->DataEp, &P),
                                               Deadline) == UCS_OK;
    if (Flushed)
      waitRequestUntil(Ctx->DataWorker, ucp_ep_close_nbx(Peer->DataEp, &P),
                       nowNs() + EndpointCloseTimeoutNs);
    else
      closeEndpointByForce(Ctx->DataWorker, Peer->DataEp);
  }
  setDataEndpoint(Peer, nullptr);
}

void releaseLocalSide(CoreContext *Ctx, tc_peer *Peer) {
  stopPolling(Ctx, Peer);
  giveBackDoorbellPlace(Ctx, Peer);
  Ctx->OwnSegmentFiles.erase(Peer->Rx->MailboxFile);
  Peer->Rx->MailboxFile = {};
  if (Peer->Rx->MailboxMem)
    ucp_mem_unmap(Ctx->RmaUcp, Peer->Rx->MailboxMem);
  else if (Peer->Rx->SharedMailbox.Base)
    releaseSharedSegment(Peer->Rx->SharedMailbox);
  else if (Peer->Rx->Ring)
    munmap(Peer->Rx->Ring, Peer->Rx->RingBytes);
  Peer->Rx->Ring = nullptr;
  Peer->Rx->MailboxMem = nullptr;
  // It pointed into that segment (RMA), or the line this peer keeps.
  Peer->Tx->CreditWord = nullptr;
}

void reportLastCredits(tc_peer *Peer) {
  if (Peer->Rx->Receive && Peer->Rx->Receive->creditPending() &&
      reportCreditWord(Peer, CreditWordFinished, Peer->Rx->Receive->expected(), /*Wait=*/true) ==
          CreditReport::Sent)
    Peer->Rx->Receive->takeCreditReport();
}

void shedPathBuffers(tc_peer *Peer) {
  std::vector<uint8_t>().swap(Peer->Tx->Batch);
  Peer->Rx->Receive.reset();
}

bool useOwnCreditLine(tc_peer *Peer) {
  Peer->Tx->CreditLine.reset(new (std::nothrow) uint64_t[CreditLineBytes / sizeof(uint64_t)]());
  Peer->Tx->CreditWord = Peer->Tx->CreditLine.get();
  return Peer->Tx->CreditLine != nullptr;
}

} // namespace twochains::rt
