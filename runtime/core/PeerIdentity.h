//===- PeerIdentity.h - Who a peer is, beyond one connection --------------===//
//
// A connection ends and the same peer comes back on another: what is kept
// against a peer across its connections (quarantine by address,
// containment/AddressQuarantine.h) is kept against its identity: a rank of
// this side's job that proved its rank (wireup/Handshake.cpp) is that
// rank, whatever its address (every rank of a node shares one); any other
// peer is its network address, without the port (a reconnect takes a new
// one).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CORE_PEERIDENTITY_H
#define TWOCHAINS_RUNTIME_CORE_PEERIDENTITY_H

#include <cstdint>
#include <cstring>
#include <string>
#include <sys/socket.h>

struct sockaddr_in;

namespace twochains::rt {

struct PeerIdentity {
  /// A proved rank of this side's job: its rank in Address's first four
  /// bytes (network order), Bits 32. Neither an address nor within one.
  static constexpr uint16_t FamilyJobRank = 0xffff;
  /// AF_INET or AF_INET6 (an IPv4-mapped IPv6 address is IPv4), or
  /// FamilyJobRank; AF_UNSPEC when the address is not known: all such
  /// peers are one identity.
  uint16_t Family = AF_UNSPEC;
  /// The leading bits of Address that count: all of them (32, 128) for one
  /// address, fewer for a group of addresses (hostGroup).
  uint8_t Bits = 0;
  uint8_t Address[16] = {}; // network order; IPv4 in the first four bytes

  static PeerIdentity of(const sockaddr_storage &SA);
  static PeerIdentity of(const sockaddr_in &SA);
  static PeerIdentity ofRank(uint32_t Rank);

  /// The group of addresses that are certainly one host with this one, so
  /// that they are charged together: 127.0.0.0/8 for a loopback address.
  /// False for any other (a network's addresses may be many hosts).
  bool hostGroup(PeerIdentity &Out) const;
  /// Whether this identity is Group or one of its addresses.
  bool within(const PeerIdentity &Group) const;
  /// "192.0.2.7", "127.0.0.0/8", "rank 3", "unknown address".
  std::string str() const;

  bool operator==(const PeerIdentity &O) const {
    return Family == O.Family && Bits == O.Bits && !std::memcmp(Address, O.Address, 16);
  }
  bool operator<(const PeerIdentity &O) const {
    if (Family != O.Family)
      return Family < O.Family;
    if (Bits != O.Bits)
      return Bits < O.Bits;
    return std::memcmp(Address, O.Address, 16) < 0;
  }
};

} // namespace twochains::rt

#endif
