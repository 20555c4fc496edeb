//===- PeerIdentity.cpp ---------------------------------------------------===//
#include "core/PeerIdentity.h"

#include <arpa/inet.h>
#include <netinet/in.h>

using namespace twochains::rt;

static PeerIdentity ipv4(const in_addr &A) {
  PeerIdentity Id;
  Id.Family = AF_INET;
  Id.Bits = 32;
  std::memcpy(Id.Address, &A, 4);
  return Id;
}

PeerIdentity PeerIdentity::of(const sockaddr_in &SA) { return ipv4(SA.sin_addr); }

PeerIdentity PeerIdentity::ofRank(uint32_t Rank) {
  PeerIdentity Id;
  Id.Family = FamilyJobRank;
  Id.Bits = 32;
  uint32_t Net = htonl(Rank);
  std::memcpy(Id.Address, &Net, 4);
  return Id;
}

PeerIdentity PeerIdentity::of(const sockaddr_storage &SA) {
  if (SA.ss_family == AF_INET)
    return of(reinterpret_cast<const sockaddr_in &>(SA));
  if (SA.ss_family != AF_INET6)
    return {};
  const in6_addr &A = reinterpret_cast<const sockaddr_in6 &>(SA).sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&A)) {
    in_addr V4;
    std::memcpy(&V4, A.s6_addr + 12, 4);
    return ipv4(V4);
  }
  PeerIdentity Id;
  Id.Family = AF_INET6;
  Id.Bits = 128;
  std::memcpy(Id.Address, A.s6_addr, 16);
  return Id;
}

bool PeerIdentity::hostGroup(PeerIdentity &Out) const {
  if (Family != AF_INET || Bits != 32 || Address[0] != 127)
    return false;
  Out = {};
  Out.Family = AF_INET;
  Out.Bits = 8;
  Out.Address[0] = 127;
  return true;
}

bool PeerIdentity::within(const PeerIdentity &Group) const {
  if (Family != Group.Family || Bits < Group.Bits)
    return false;
  unsigned Whole = Group.Bits / 8, Rest = Group.Bits % 8;
  if (std::memcmp(Address, Group.Address, Whole))
    return false;
  uint8_t Mask = uint8_t(0xff00 >> Rest);
  return !Rest || (Address[Whole] & Mask) == (Group.Address[Whole] & Mask);
}

std::string PeerIdentity::str() const {
  if (Family == FamilyJobRank) {
    uint32_t Net;
    std::memcpy(&Net, Address, 4);
    return "rank " + std::to_string(ntohl(Net));
  }
  char Text[INET6_ADDRSTRLEN] = "";
  if (Family != AF_INET && Family != AF_INET6)
    return "unknown address";
  inet_ntop(Family, Address, Text, sizeof Text);
  std::string S = Text;
  if (Bits != (Family == AF_INET ? 32 : 128))
    S += "/" + std::to_string(Bits);
  return S;
}
