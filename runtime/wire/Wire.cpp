//===- Wire.cpp - Checking what peers offer -------------------------------===//
#include "wire/Wire.h"
#include "base/SharedSegment.h"
#include "wire/Frame.h"
#include "JamAbi.h"
#include "twochains/twochains.h"

#include <ucs/memory/memory_type.h>

#include <cstring>

namespace twochains::rt {

tc_status_t parsePayloadHeader(const void *Header, size_t HeaderLength, size_t Length,
                               uint64_t Expected, uint32_t Slots, uint32_t Share,
                               PayloadHeader &Out, std::string &Why) {
  PayloadHeader H;
  if (!Header || HeaderLength != sizeof H) {
    Why = "a payload header of " + std::to_string(HeaderLength) + " bytes";
    return TC_ERR_BAD_LENGTH;
  }
  std::memcpy(&H, Header, sizeof H);
  if (H.Magic != PayloadMagic) {
    Why = "a payload for frame " + std::to_string(H.Sequence) + " with a bad magic";
    return TC_ERR_BAD_MAGIC;
  }
  // Only a frame the sender may have in flight; never one the ring has
  // passed (whose frame was refused for want of it).
  if (H.Sequence < Expected || H.Sequence - Expected >= Slots) {
    Why = "a payload for frame " + std::to_string(H.Sequence) +
          ", which is not a frame it may send now (the ring expects " + std::to_string(Expected) +
          ")";
    return TC_ERR_SEQUENCE;
  }
  if (H.Size == 0 || H.Size != Length || H.Size > Share) {
    Why = "it says " + std::to_string(H.Size) + " bytes, carries " + std::to_string(Length) +
          "; this side takes at most " + std::to_string(Share);
    return TC_ERR_TOO_LARGE;
  }
  Out = H;
  return TC_OK;
}

tc_status_t parseOffer(const void *Header, size_t HeaderLength, const uint8_t *Body,
                       size_t BodyLength, ParsedOffer &Out, std::string &Why) {
  auto Bad = [&](const std::string &What) {
    Why = What;
    return TC_ERR_BAD_OFFER;
  };
  if (!Header || HeaderLength != sizeof(Offer))
    return Bad("an offer of " + std::to_string(HeaderLength) + " bytes (expected " +
               std::to_string(sizeof(Offer)) + ")");
  if (BodyLength > MaxOfferBody || (BodyLength && !Body))
    return Bad("an offer body of " + std::to_string(BodyLength) + " bytes (at most " +
               std::to_string(MaxOfferBody) + ")");
  Offer O;
  std::memcpy(&O, Header, sizeof O);
  if (O.Magic != HandshakeMagic)
    return Bad("not a Two-Chains offer");
  if (O.Version != HandshakeVersion)
    return Bad("handshake version " + std::to_string(O.Version) + " (this side speaks " +
               std::to_string(HandshakeVersion) + ")");
  if (O.Slots == 0 || O.Slots > MaxSlots)
    return Bad(std::to_string(O.Slots) + " slots (1 to " + std::to_string(MaxSlots) + ")");
  if (O.SlotSize < 64 || O.SlotSize % 64 || O.SlotSize > MaxSlotSize)
    return Bad("slot size " + std::to_string(O.SlotSize) + " (a multiple of 64 up to " +
               std::to_string(MaxSlotSize) + ")");
  if (uint64_t(O.Slots) * O.SlotSize > MaxRingBytes)
    return Bad("a ring of " + std::to_string(uint64_t(O.Slots) * O.SlotSize) +
               " bytes (at most " + std::to_string(MaxRingBytes) + ")");
  if (O.MailboxMode != TC_MAILBOX_CODE_CACHE && O.MailboxMode != TC_MAILBOX_NO_CACHE)
    return Bad("mailbox mode " + std::to_string(O.MailboxMode));
  if (O.CodeTrust < TC_CODE_TRUST_PACKAGE || O.CodeTrust > TC_CODE_TRUST_VERIFIED)
    return Bad("code-trust policy " + std::to_string(O.CodeTrust));
  if (O.Flags & ~(OfferStoresDirect | OfferPayloadsByRma | OfferSharedMemory) ||
      ((O.Flags & (OfferPayloadsByRma | OfferSharedMemory)) && O.Path != PathRma))
    return Bad("offer flags " + std::to_string(O.Flags));
  if (O.PayloadAheadBytes > MaxPayloadAheadBytes)
    return Bad("payloads ahead of " + std::to_string(O.PayloadAheadBytes) +
               " bytes (at most " + std::to_string(MaxPayloadAheadBytes) + ")");
  if (!isaName(O.Isa))
    return Bad("instruction set " + std::to_string(O.Isa));
  // Outside a job (Job 0) the rank means nothing and is not read.
  if (O.Job && O.JobRank >= MaxJobRanks)
    return Bad("job rank " + std::to_string(O.JobRank) + " (below " + std::to_string(MaxJobRanks) +
               ")");
  if (O.Job && O.ProofFor != NoJobRank && O.ProofFor >= MaxJobRanks)
    return Bad("a rank proof for rank " + std::to_string(O.ProofFor) + " (below " +
               std::to_string(MaxJobRanks) + ", or none)");
  if (O.PackagesSize > MaxPackagesSize || O.PackagesSize > BodyLength)
    return Bad("a packages section of " + std::to_string(O.PackagesSize) + " bytes (at most " +
               std::to_string(MaxPackagesSize) + ", in a body of " +
               std::to_string(BodyLength) + ")");
  std::vector<std::pair<std::string, std::string>> Packages;
  std::vector<std::string> Interfaces;
  std::vector<bool> Receives;
  const uint8_t *Section = Body ? Body + (BodyLength - O.PackagesSize) : nullptr;
  for (size_t At = 0; At < O.PackagesSize;) {
    size_t NameSize = Section[At] & ~OfferPackageReceives;
    bool Runs = Section[At] & OfferPackageReceives;
    if (NameSize == 0 || NameSize > MaxPackageNameSize ||
        O.PackagesSize - At - 1 < NameSize + 2 * PackageIdentitySize)
      return Bad("a package entry of " + std::to_string(NameSize) + " name bytes at offset " +
                 std::to_string(At) + " of the packages section");
    std::string Name(reinterpret_cast<const char *>(Section + At + 1), NameSize);
    std::string Identity(reinterpret_cast<const char *>(Section + At + 1 + NameSize),
                         PackageIdentitySize);
    std::string Interface(
        reinterpret_cast<const char *>(Section + At + 1 + NameSize + PackageIdentitySize),
        PackageIdentitySize);
    bool Hex = true;
    for (char C : Identity + Interface)
      Hex &= (C >= '0' && C <= '9') || (C >= 'a' && C <= 'f');
    if (!format::isValidName(Name) || !Hex)
      return Bad("a package entry that is not a name and two 64-digit hashes");
    for (const auto &P : Packages)
      if (P.first == Name)
        return Bad("package '" + Name + "' named twice");
    if (Packages.size() == MaxOfferPackages)
      return Bad("more than " + std::to_string(MaxOfferPackages) + " packages");
    Packages.emplace_back(std::move(Name), std::move(Identity));
    Interfaces.push_back(std::move(Interface));
    Receives.push_back(Runs);
    At += 1 + NameSize + 2 * PackageIdentitySize;
  }
  BodyLength -= O.PackagesSize; // what is left: the RMA path's keys and address
  uint64_t Sum = uint64_t(O.CreditKeySize) + O.RingKeySize + O.WorkerAddressSize +
                 O.DoorbellKeySize;
  bool Shared = O.Flags & OfferSharedMemory;
  // A doorbell is offered whole (segment, address and place) or not at all
  // (all three zero).
  bool Doorbell = O.DoorbellKeySize;
  if (!Doorbell && (O.DoorbellAddress || O.DoorbellIndex))
    return Bad("a doorbell place without its segment");
  SharedSegmentRecord Mailbox = {}, Bell = {};
  if (O.Path == PathAm) {
    if (Sum || BodyLength || O.CreditAddress || O.RingAddress || Doorbell)
      return Bad("an active-message offer that carries memory keys or addresses");
  } else if (O.Path == PathRma) {
    if (Shared && (O.CreditKeySize || O.RingKeySize != sizeof(SharedSegmentRecord)))
      return Bad("a shared-memory offer with memory keys of " + std::to_string(O.CreditKeySize) +
                 " and " + std::to_string(O.RingKeySize) + " bytes (0 and " +
                 std::to_string(sizeof(SharedSegmentRecord)) + ")");
    if (!Shared && (!O.CreditKeySize || O.CreditKeySize > MaxRkeySize || !O.RingKeySize ||
                    O.RingKeySize > MaxRkeySize))
      return Bad("memory keys of " + std::to_string(O.CreditKeySize) + " and " +
                 std::to_string(O.RingKeySize) + " bytes (1 to " +
                 std::to_string(MaxRkeySize) + ")");
    if (!O.WorkerAddressSize || O.WorkerAddressSize > MaxWorkerAddressSize)
      return Bad("a worker address of " + std::to_string(O.WorkerAddressSize) +
                 " bytes (1 to " + std::to_string(MaxWorkerAddressSize) + ")");
    if (Sum != BodyLength)
      return Bad("an offer body of " + std::to_string(BodyLength) + " bytes for fields of " +
                 std::to_string(Sum));
    if (!O.CreditAddress || !O.RingAddress)
      return Bad("an RMA offer without addresses");
    if (Doorbell && (O.DoorbellKeySize != sizeof(SharedSegmentRecord) || !O.DoorbellAddress ||
                     O.DoorbellIndex >= MaxDoorbellPlaces))
      return Bad("a doorbell of " + std::to_string(O.DoorbellKeySize) + " record bytes, place " +
                 std::to_string(O.DoorbellIndex) + " (record " +
                 std::to_string(sizeof(SharedSegmentRecord)) + " bytes, place below " +
                 std::to_string(MaxDoorbellPlaces) + ")");
    if (!Shared && (!checkPackedRkey(Body, O.CreditKeySize) ||
                    !checkPackedRkey(Body + O.CreditKeySize, O.RingKeySize)))
      return Bad("a malformed memory key");
    // A segment is named by process and descriptor, and holds what the
    // offer's addresses name: credit line first, then the token, then the
    // ring; a doorbell's places, then its token.
    auto BadSegment = [](const SharedSegmentRecord &R, uint64_t MaxLength) {
      return !R.Pid || R.Fd < 0 || !R.Length || R.Length > MaxLength || R.Base + R.Length < R.Base;
    };
    if (Shared) {
      std::memcpy(&Mailbox, Body + O.CreditKeySize, sizeof Mailbox);
      uint64_t RingBytes = uint64_t(O.Slots) * slotStride(O.SlotSize);
      if (BadSegment(Mailbox, MaxRingBytes + MaxSlots * uint64_t(FrameLine) + (64 << 10)) ||
          O.CreditAddress != Mailbox.Base ||
          O.RingAddress < Mailbox.Base + MailboxTokenAt + SegmentTokenBytes ||
          O.RingAddress - Mailbox.Base > Mailbox.Length ||
          RingBytes > Mailbox.Length - (O.RingAddress - Mailbox.Base))
        return Bad("a shared segment of " + std::to_string(Mailbox.Length) + " bytes (process " +
                   std::to_string(Mailbox.Pid) + ", descriptor " + std::to_string(Mailbox.Fd) +
                   ") that does not hold its credit line, token and ring");
    }
    if (Doorbell) {
      std::memcpy(&Bell, Body + O.CreditKeySize + O.RingKeySize + O.WorkerAddressSize, sizeof Bell);
      if (BadSegment(Bell, doorbellSegmentBytes(MaxDoorbellPlaces)) ||
          O.DoorbellAddress != Bell.Base || Bell.Length < doorbellSegmentBytes(O.DoorbellIndex + 1))
        return Bad("a doorbell segment of " + std::to_string(Bell.Length) + " bytes (process " +
                   std::to_string(Bell.Pid) + ", descriptor " + std::to_string(Bell.Fd) +
                   ") without place " + std::to_string(O.DoorbellIndex));
    }
  } else {
    return Bad("frame path " + std::to_string(O.Path));
  }
  Out.Header = O;
  Out.Packages = std::move(Packages);
  Out.Interfaces = std::move(Interfaces);
  Out.Receives = std::move(Receives);
  Out.CreditKey = O.Path == PathRma && !Shared ? Body : nullptr;
  Out.RingKey = O.Path == PathRma && !Shared ? Body + O.CreditKeySize : nullptr;
  Out.WorkerAddress = O.Path == PathRma ? Body + O.CreditKeySize + O.RingKeySize : nullptr;
  Out.Mailbox = Mailbox;
  Out.Doorbell = Bell;
  return TC_OK;
}

void appendOfferPackages(std::vector<uint8_t> &Body,
                         const std::vector<std::pair<std::string, std::string>> &Packages,
                         const std::vector<std::string> &Interfaces,
                         const std::vector<bool> &Receives) {
  for (size_t I = 0; I < Packages.size(); ++I) {
    const auto &[Name, Identity] = Packages[I];
    std::string Interface = I < Interfaces.size() && Interfaces[I].size() == PackageIdentitySize
                                ? Interfaces[I]
                                : std::string(PackageIdentitySize, '0');
    bool Runs = I < Receives.size() && Receives[I];
    Body.push_back(uint8_t(Name.size() | (Runs ? OfferPackageReceives : 0)));
    Body.insert(Body.end(), Name.begin(), Name.end());
    Body.insert(Body.end(), Identity.begin(), Identity.end());
    Body.insert(Body.end(), Interface.begin(), Interface.end());
  }
}

namespace {
constexpr uint8_t BlobMagic[4] = {'T', 'C', 'A', 'B'};
/// 3: the control worker's UCX address after the rank key; 2 had none,
/// 1 no key either.
constexpr uint16_t BlobVersion = 3;
constexpr size_t BlobHeader = 14;
void put16(uint8_t *P, uint16_t V) {
  P[0] = uint8_t(V);
  P[1] = uint8_t(V >> 8);
}
uint16_t get16(const uint8_t *P) { return uint16_t(P[0] | P[1] << 8); }
} // namespace

std::vector<uint8_t> packAddressBlob(uint16_t Port, const std::vector<uint32_t> &Addresses,
                                     const uint8_t *Key, const std::vector<uint8_t> &Worker) {
  size_t KeySize = Key ? RankKeySize : 0;
  size_t WorkerSize = Worker.size() <= MaxBlobWorkerAddress ? Worker.size() : 0;
  std::vector<uint8_t> B(BlobHeader + 4 * Addresses.size() + KeySize + WorkerSize);
  std::memcpy(B.data(), BlobMagic, 4);
  put16(&B[4], BlobVersion);
  put16(&B[6], Port);
  put16(&B[8], uint16_t(Addresses.size()));
  put16(&B[10], uint16_t(KeySize));
  put16(&B[12], uint16_t(WorkerSize));
  size_t At = BlobHeader;
  for (size_t I = 0; I < Addresses.size(); ++I, At += 4)
    std::memcpy(&B[At], &Addresses[I], 4);
  if (Key)
    std::memcpy(&B[At], Key, KeySize);
  At += KeySize;
  if (WorkerSize)
    std::memcpy(&B[At], Worker.data(), WorkerSize);
  return B;
}

tc_status_t parseAddressBlob(const uint8_t *B, size_t Size, uint16_t &Port,
                             std::vector<uint32_t> &Addresses, std::vector<uint8_t> &Key,
                             std::vector<uint8_t> &Worker, std::string &Why) {
  if (!B || Size < 6 || std::memcmp(B, BlobMagic, 4)) {
    Why = "not a Two-Chains address (" + std::to_string(Size) + " bytes)";
    return TC_ERR_BAD_MAGIC;
  }
  if (uint16_t Version = get16(B + 4); Version != BlobVersion) {
    Why = "address version " + std::to_string(Version) + " is not supported (expected " +
          std::to_string(BlobVersion) + ")" +
          (Version < BlobVersion ? ": made by an older build of Two-Chains" : "");
    return TC_ERR_BAD_VERSION;
  }
  if (Size < BlobHeader) {
    Why = "an address of " + std::to_string(Size) + " bytes, shorter than its header";
    return TC_ERR_BAD_LENGTH;
  }
  uint16_t P = get16(B + 6), Count = get16(B + 8), KeySize = get16(B + 10),
           WorkerSize = get16(B + 12);
  if (P == 0 || Count == 0 || Count > MaxBlobAddresses || (KeySize && KeySize != RankKeySize) ||
      WorkerSize > MaxBlobWorkerAddress ||
      Size != BlobHeader + 4 * size_t(Count) + KeySize + WorkerSize) {
    Why = "an address of " + std::to_string(Size) + " bytes naming " + std::to_string(Count) +
          " addresses, port " + std::to_string(P) + ", a key of " + std::to_string(KeySize) +
          " bytes and a worker address of " + std::to_string(WorkerSize);
    return TC_ERR_BAD_LENGTH;
  }
  std::vector<uint32_t> Out(Count);
  for (uint16_t I = 0; I < Count; ++I)
    std::memcpy(&Out[I], B + BlobHeader + 4 * I, 4);
  const uint8_t *K = B + BlobHeader + 4 * size_t(Count);
  Port = P;
  Addresses = std::move(Out);
  Key.assign(K, K + KeySize);
  Worker.assign(K + KeySize, K + KeySize + WorkerSize);
  return TC_OK;
}

bool checkPackedRkey(const uint8_t *Key, size_t Size) {
  // UCX 1.13 (src/ucp/core/ucp_rkey.c, ucp_rkey_pack_common):
  //   u64 md_map; u8 mem_type; per set bit of md_map: u8 size, size bytes;
  //   then nothing, or u8 sys_dev and 3 bytes of distance per device.
  // mem_type indexes tables inside UCX; each size is trusted as read.
  if (!Key || Size < 9)
    return false;
  uint64_t MdMap;
  std::memcpy(&MdMap, Key, sizeof MdMap);
  if (Key[8] >= UCS_MEMORY_TYPE_LAST)
    return false;
  size_t At = 9;
  for (; MdMap; MdMap &= MdMap - 1) {
    if (At >= Size)
      return false;
    size_t Blob = Key[At];
    if (Blob > Size - At - 1)
      return false;
    At += 1 + Blob;
  }
  size_t Tail = Size - At;
  return Tail == 0 || Tail % 3 == 1;
}

} // namespace twochains::rt
