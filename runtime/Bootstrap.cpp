//===- Bootstrap.cpp - Finding each other: ports and address blobs --------===//
//
// A context listening on port 0 gets a free port (tc_listen_port). Its
// address blob (tc_context_address) names that port and the IPv4
// addresses it can be reached at, for an application to exchange with
// MPI_Allgather, PMIx or a file; tc_connect_address tries them in turn.
//
//   blob:  "TCAB" | version u16 | port u16 | count u16 | reserved u16 |
//          count x IPv4 address (network order); integers little-endian
//
//===----------------------------------------------------------------------===//
#include "Log.h"
#include "Runtime.h"

#include <arpa/inet.h>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <vector>

using namespace twochains::rt;

namespace {

constexpr uint8_t BlobMagic[4] = {'T', 'C', 'A', 'B'};
constexpr uint16_t BlobVersion = 1;
constexpr size_t BlobHeader = 12;
constexpr uint16_t MaxBlobAddresses = 64;

void put16(uint8_t *P, uint16_t V) {
  P[0] = uint8_t(V);
  P[1] = uint8_t(V >> 8);
}
uint16_t get16(const uint8_t *P) { return uint16_t(P[0] | P[1] << 8); }

/// Where this host can be reached: every IPv4 address of an interface that
/// is up, loopback last (a peer on the same host tries the others first,
/// which also work, and a remote peer never needs it).
std::vector<uint32_t> hostAddresses() {
  std::vector<uint32_t> Out, Loopback;
  ifaddrs *List = nullptr;
  if (getifaddrs(&List) != 0)
    return {htonl(INADDR_LOOPBACK)};
  for (ifaddrs *I = List; I; I = I->ifa_next) {
    if (!I->ifa_addr || I->ifa_addr->sa_family != AF_INET || !(I->ifa_flags & IFF_UP))
      continue;
    uint32_t A = reinterpret_cast<const sockaddr_in *>(I->ifa_addr)->sin_addr.s_addr;
    (I->ifa_flags & IFF_LOOPBACK ? Loopback : Out).push_back(A);
  }
  freeifaddrs(List);
  Out.insert(Out.end(), Loopback.begin(), Loopback.end());
  if (Out.size() > MaxBlobAddresses)
    Out.resize(MaxBlobAddresses);
  return Out;
}

} // namespace

extern "C" tc_status_t tc_listen_port(const tc_context_t *Ctx, uint16_t *Port) {
  if (!Ctx || !Port || !Ctx->Listener)
    return TC_ERR_INVALID_PARAM;
  *Port = Ctx->ListenPort;
  return TC_OK;
}

extern "C" tc_status_t tc_context_address(const tc_context_t *Ctx, void *Blob, size_t *Size) {
  if (!Ctx || !Size || !Ctx->Listener)
    return TC_ERR_INVALID_PARAM;
  std::vector<uint32_t> Addresses;
  if (Ctx->ListenAddress == htonl(INADDR_ANY))
    Addresses = hostAddresses();
  else
    Addresses.push_back(Ctx->ListenAddress);
  size_t Need = BlobHeader + 4 * Addresses.size();
  if (!Blob || *Size < Need) {
    *Size = Need;
    return Blob ? TC_ERR_TOO_LARGE : TC_OK;
  }
  auto *B = static_cast<uint8_t *>(Blob);
  std::memcpy(B, BlobMagic, 4);
  put16(B + 4, BlobVersion);
  put16(B + 6, Ctx->ListenPort);
  put16(B + 8, uint16_t(Addresses.size()));
  put16(B + 10, 0);
  for (size_t I = 0; I < Addresses.size(); ++I)
    std::memcpy(B + BlobHeader + 4 * I, &Addresses[I], 4);
  *Size = Need;
  return TC_OK;
}

extern "C" tc_status_t tc_connect_address(tc_context_t *Ctx, const void *Blob, size_t Size,
                                          int TimeoutMs, tc_peer_t **Out) {
  if (!Ctx || !Blob || !Out)
    return TC_ERR_INVALID_PARAM;
  const auto *B = static_cast<const uint8_t *>(Blob);
  // The blob came from elsewhere: every field is checked before use.
  if (Size < BlobHeader || std::memcmp(B, BlobMagic, 4)) {
    logError("tc_connect_address: not a Two-Chains address (" + std::to_string(Size) +
             " bytes)");
    return TC_ERR_BAD_MAGIC;
  }
  if (get16(B + 4) != BlobVersion) {
    logError("tc_connect_address: address version " + std::to_string(get16(B + 4)) +
             " is not supported (expected " + std::to_string(BlobVersion) + ")");
    return TC_ERR_BAD_VERSION;
  }
  uint16_t Port = get16(B + 6), Count = get16(B + 8);
  if (Port == 0 || Count == 0 || Count > MaxBlobAddresses || get16(B + 10) ||
      Size != BlobHeader + 4 * size_t(Count)) {
    logError("tc_connect_address: an address of " + std::to_string(Size) + " bytes naming " +
             std::to_string(Count) + " addresses and port " + std::to_string(Port));
    return TC_ERR_BAD_LENGTH;
  }
  uint64_t Deadline = nowNs() + uint64_t(TimeoutMs > 0 ? TimeoutMs : 0) * 1'000'000;
  std::string Tried;
  // Round after round until the deadline: an address that does not answer
  // yet gets a short turn, so one that works is found soon.
  for (uint64_t Slice = 20'000'000;; Slice = std::min<uint64_t>(Slice * 2, 1'000'000'000)) {
    for (uint16_t I = 0; I < Count; ++I) {
      sockaddr_in SA = {};
      SA.sin_family = AF_INET;
      SA.sin_port = htons(Port);
      std::memcpy(&SA.sin_addr.s_addr, B + BlobHeader + 4 * I, 4);
      char Text[INET_ADDRSTRLEN] = "?";
      inet_ntop(AF_INET, &SA.sin_addr, Text, sizeof Text);
      std::string Where = std::string(Text) + ":" + std::to_string(Port);
      if (Tried.find(Where) == std::string::npos)
        Tried += (Tried.empty() ? "" : ", ") + Where;
      uint64_t Now = nowNs();
      if (Now >= Deadline)
        break;
      tc_status_t St = connectUntil(Ctx, SA, Where, std::min(Deadline, Now + Slice), false, Out);
      if (St == TC_OK)
        return TC_OK;
      if (St != TC_ERR_IO)
        return St; // it answered, and refused: logged where it was found
    }
    if (nowNs() >= Deadline)
      break;
  }
  logError("tc_connect_address: nothing answered at " + Tried + " within " +
           std::to_string(TimeoutMs) + " ms");
  return TC_ERR_IO;
}
