//===- Bootstrap.cpp - Finding each other: ports and address blobs --------===//
//
// A context listening on port 0 gets a free port (tc_listen_port). Its
// address blob (tc_context_address) names that port and the IPv4
// addresses it can be reached at, for an application to exchange with
// MPI_Allgather, PMIx or a file; tc_connect_address tries them in turn.
//
//   blob:  "TCAB" | version u16 (3) | port u16 | count u16 | key size u16 |
//          worker size u16 | count x IPv4 address (network order) | the
//          context's public rank key (32 bytes, or none) | its control
//          worker's UCX address (or none); integers little-endian
//          (packAddressBlob and parseAddressBlob in Wire.cpp, fuzzed)
//
// A job's ranks connect to each other from the worker addresses
// (job/RankEndpoints.cpp); the port is for everyone else.
//
//===----------------------------------------------------------------------===//
#include "wireup/Wireup.h"

#include "base/Clock.h"
#include "base/Timeouts.h"
#include "base/Log.h"

#include <arpa/inet.h>
#include <cstring>
#include <ifaddrs.h>
#include <net/if.h>
#include <vector>

using namespace twochains::rt;

namespace {

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

/// The control worker's UCX address (empty if UCX gives none).
std::vector<uint8_t> controlWorkerAddress(const CoreContext *Ctx) {
  ucp_address_t *Address = nullptr;
  size_t Size = 0;
  if (ucp_worker_get_address(Ctx->Worker, &Address, &Size) != UCS_OK)
    return {};
  auto *Bytes = reinterpret_cast<const uint8_t *>(Address);
  std::vector<uint8_t> Out(Bytes, Bytes + Size);
  ucp_worker_release_address(Ctx->Worker, Address);
  return Out;
}

} // namespace

extern "C" tc_status_t tc_listen_port(const tc_context_t *Api, uint16_t *Port) {
  const auto *Ctx = coreOf(Api);
  if (!Ctx || !Port || !Ctx->Wireup->Listener)
    return TC_ERR_INVALID_PARAM;
  *Port = Ctx->Wireup->ListenPort;
  return TC_OK;
}

extern "C" tc_status_t tc_context_address(const tc_context_t *Api, void *Blob, size_t *Size) {
  const auto *Ctx = coreOf(Api);
  if (!Ctx || !Size || !Ctx->Wireup->Listener)
    return TC_ERR_INVALID_PARAM;
  std::vector<uint32_t> Addresses;
  if (Ctx->Wireup->ListenAddress == htonl(INADDR_ANY))
    Addresses = hostAddresses();
  else
    Addresses.push_back(Ctx->Wireup->ListenAddress);
  // The rank key goes with the address: a job's ranks learn it from the
  // blob, whichever way it travels, and take a claim of this context's
  // rank only with its signature.
  std::vector<uint8_t> Packed = packAddressBlob(
      Ctx->Wireup->ListenPort, Addresses,
      Ctx->Wireup->Job.RankKey.present() ? Ctx->Wireup->Job.RankKey.publicKey().data() : nullptr,
      controlWorkerAddress(Ctx));
  if (!Blob || *Size < Packed.size()) {
    *Size = Packed.size();
    return Blob ? TC_ERR_TOO_LARGE : TC_OK;
  }
  std::memcpy(Blob, Packed.data(), Packed.size());
  *Size = Packed.size();
  return TC_OK;
}

extern "C" tc_status_t tc_connect_address(tc_context_t *Api, const void *Blob, size_t Size,
                                          int TimeoutMs, tc_peer_t **Out) {
  auto *Ctx = coreOf(Api);
  if (!Ctx || !Blob || !Out)
    return TC_ERR_INVALID_PARAM;
  // The blob came from elsewhere: every field is checked before use.
  uint16_t Port = 0;
  std::vector<uint32_t> Addresses;
  // The key and the worker address are a job's business (job/Job.cpp).
  std::vector<uint8_t> Key, Worker;
  std::string Why;
  if (tc_status_t St = parseAddressBlob(static_cast<const uint8_t *>(Blob), Size, Port, Addresses,
                                        Key, Worker, Why);
      St != TC_OK) {
    logError("tc_connect_address: " + Why);
    return St;
  }
  uint64_t Deadline = nowNs() + msToNs(uint64_t(TimeoutMs > 0 ? TimeoutMs : 0));
  std::string Tried;
  // Round after round until the deadline: an address that does not answer
  // yet gets a short turn, so one that works is found soon.
  for (uint64_t Slice = AddressSliceFirstNs;; Slice = std::min<uint64_t>(Slice * 2, NsPerS)) {
    for (uint32_t Address : Addresses) {
      sockaddr_in SA = {};
      SA.sin_family = AF_INET;
      SA.sin_port = htons(Port);
      SA.sin_addr.s_addr = Address;
      char Text[INET_ADDRSTRLEN] = "?";
      inet_ntop(AF_INET, &SA.sin_addr, Text, sizeof Text);
      std::string Where = std::string(Text) + ":" + std::to_string(Port);
      if (Tried.find(Where) == std::string::npos)
        Tried += (Tried.empty() ? "" : ", ") + Where;
      uint64_t Now = nowNs();
      if (Now >= Deadline)
        break;
      tc_status_t St = connectUntil(Ctx, SA, Where, Deadline, false, Out, true,
                                    std::min(Deadline, Now + Slice));
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
