//===- AddressQuarantineTest.cpp - Abandoned-frame time per peer address --===//
#include "containment/AddressQuarantine.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

using namespace twochains::rt;

namespace {

constexpr uint64_t Ms = 1'000'000;
constexpr uint64_t Budget = 1000 * Ms, Window = 10'000 * Ms;
constexpr uint64_t Start = 1'000'000 * Ms; // any time on the steady clock

PeerIdentity ipv4(const char *Text) {
  sockaddr_storage SA = {};
  auto &In = reinterpret_cast<sockaddr_in &>(SA);
  In.sin_family = AF_INET;
  In.sin_port = htons(40000);
  inet_pton(AF_INET, Text, &In.sin_addr);
  return PeerIdentity::of(SA);
}

AddressQuarantine quarantine() {
  AddressQuarantine Q;
  Q.setBudget(Budget, Window);
  return Q;
}

TEST(PeerIdentity, AnAddressWithoutItsPort) {
  sockaddr_storage Mapped = {};
  auto &In6 = reinterpret_cast<sockaddr_in6 &>(Mapped);
  In6.sin6_family = AF_INET6;
  In6.sin6_port = htons(1);
  inet_pton(AF_INET6, "::ffff:192.0.2.7", &In6.sin6_addr);
  // The same host on another port, and as an IPv4-mapped address: the same.
  EXPECT_EQ(PeerIdentity::of(Mapped), ipv4("192.0.2.7"));
  EXPECT_EQ(ipv4("192.0.2.7").str(), "192.0.2.7");
  EXPECT_FALSE(ipv4("192.0.2.7") == ipv4("192.0.2.8"));
  EXPECT_EQ(PeerIdentity::of(sockaddr_storage{}).str(), "unknown address");
}

TEST(PeerIdentity, LoopbackIsOneHost) {
  PeerIdentity Host;
  ASSERT_TRUE(ipv4("127.3.2.1").hostGroup(Host));
  EXPECT_EQ(Host.str(), "127.0.0.0/8");
  EXPECT_TRUE(ipv4("127.0.0.1").within(Host));
  EXPECT_TRUE(ipv4("127.255.0.9").within(Host));
  EXPECT_FALSE(ipv4("128.0.0.1").within(Host));
  EXPECT_FALSE(ipv4("192.0.2.7").hostGroup(Host));
  EXPECT_TRUE(ipv4("192.0.2.7").within(ipv4("192.0.2.7")));
}

/// A proved rank is its rank: not an address, in no address's group, and
/// charged alone.
TEST(PeerIdentity, ARankIsNoAddress) {
  PeerIdentity R3 = PeerIdentity::ofRank(3), Host;
  EXPECT_EQ(R3.str(), "rank 3");
  EXPECT_FALSE(R3.hostGroup(Host));
  ASSERT_TRUE(ipv4("127.0.0.1").hostGroup(Host));
  EXPECT_FALSE(R3.within(Host));
  EXPECT_FALSE(R3.within(ipv4("0.0.0.3")));
  EXPECT_FALSE(ipv4("0.0.0.3").within(R3));
  EXPECT_TRUE(R3.within(PeerIdentity::ofRank(3)));
  EXPECT_FALSE(R3 == PeerIdentity::ofRank(4));
}

TEST(AddressQuarantine, PastTheBudgetRefusedForAWindow) {
  AddressQuarantine Q = quarantine();
  PeerIdentity A = ipv4("192.0.2.7"), B = ipv4("192.0.2.8");
  // Three overruns of 300 ms (reconnects change nothing: the address is
  // the same), then a fourth.
  for (int I = 0; I < 3; ++I)
    EXPECT_FALSE(Q.charge(A, 300 * Ms, Start + I * Ms).NewlyRefused);
  EXPECT_EQ(Q.refusedUntil(A, Start + 3 * Ms), 0u);
  AddressQuarantine::Verdict V = Q.charge(A, 300 * Ms, Start + 5 * Ms);
  EXPECT_TRUE(V.NewlyRefused);
  EXPECT_EQ(V.Refused, A);
  EXPECT_EQ(V.ChargedNs, 1200 * Ms);
  EXPECT_EQ(V.RefusedUntilNs, Start + 5 * Ms + Window);
  EXPECT_EQ(Q.refusedUntil(A, Start + 6 * Ms), Start + 5 * Ms + Window);
  EXPECT_EQ(Q.refusedUntil(B, Start + 6 * Ms), 0u) << "another address is not";
  // Once refused, it stays so for the window; then it starts afresh.
  EXPECT_FALSE(Q.charge(A, 300 * Ms, Start + 7 * Ms).NewlyRefused);
  EXPECT_NE(Q.refusedUntil(A, Start + 5 * Ms + Window - 1), 0u);
  EXPECT_EQ(Q.refusedUntil(A, Start + 5 * Ms + Window), 0u);
  EXPECT_FALSE(Q.charge(A, 300 * Ms, Start + 6 * Ms + Window).NewlyRefused);
  EXPECT_EQ(Q.refusedUntil(A, Start + 7 * Ms + Window), 0u);
}

TEST(AddressQuarantine, ChargesOfAPastWindowAreForgotten) {
  AddressQuarantine Q = quarantine();
  PeerIdentity A = ipv4("192.0.2.7");
  EXPECT_FALSE(Q.charge(A, 900 * Ms, Start).NewlyRefused);
  EXPECT_FALSE(Q.charge(A, 900 * Ms, Start + Window).NewlyRefused);
  EXPECT_TRUE(Q.charge(A, 100 * Ms, Start + Window + Ms).NewlyRefused);
}

TEST(AddressQuarantine, FastFaultsCountToo) {
  AddressQuarantine Q = quarantine();
  PeerIdentity A = ipv4("192.0.2.7");
  uint64_t Faults = Budget / AddressQuarantine::MinChargeNs;
  for (uint64_t I = 1; I < Faults; ++I)
    ASSERT_FALSE(Q.charge(A, 0, Start + I).NewlyRefused);
  EXPECT_TRUE(Q.charge(A, 0, Start + Faults).NewlyRefused);
}

TEST(AddressQuarantine, AHostsAddressesAreChargedTogether) {
  AddressQuarantine Q = quarantine();
  // Loopback addresses, each under its own budget: together past the
  // host's (HostBudgets budgets), every one of them is refused, also one
  // never charged (a good peer on the same host: the trade-off), and no
  // other host.
  unsigned N = 0;
  AddressQuarantine::Verdict V;
  char Text[32];
  do {
    std::snprintf(Text, sizeof Text, "127.0.0.%u", 10 + N);
    V = Q.charge(ipv4(Text), 900 * Ms, Start + N);
    ++N;
  } while (!V.NewlyRefused && N < 10);
  EXPECT_EQ(N, AddressQuarantine::HostBudgets * Budget / (900 * Ms) + 1);
  EXPECT_EQ(V.Refused.str(), "127.0.0.0/8");
  EXPECT_NE(Q.refusedUntil(ipv4("127.0.0.1"), Start + N), 0u);
  EXPECT_EQ(Q.refusedUntil(ipv4("192.0.2.7"), Start + N), 0u);
}

TEST(AddressQuarantine, AFullTableForgetsTheLeastCharged) {
  AddressQuarantine Q = quarantine();
  PeerIdentity Attacker = ipv4("198.51.100.1");
  ASSERT_TRUE(Q.charge(Attacker, Budget, Start).NewlyRefused);
  // Many more addresses than the table holds, each charged a little.
  for (unsigned I = 0; I < 3 * AddressQuarantine::MaxEntries; ++I) {
    PeerIdentity A;
    A.Family = AF_INET;
    A.Bits = 32;
    A.Address[0] = 10;
    A.Address[1] = uint8_t(I >> 16);
    A.Address[2] = uint8_t(I >> 8);
    A.Address[3] = uint8_t(I);
    Q.charge(A, 100 * Ms, Start + Ms + I);
    ASSERT_LE(Q.size(), AddressQuarantine::MaxEntries);
  }
  EXPECT_NE(Q.refusedUntil(Attacker, Start + 4 * AddressQuarantine::MaxEntries), 0u)
      << "a refused address is kept while others can go";
  // An address charged more than the least stays charged.
  PeerIdentity Heavy = ipv4("203.0.113.5");
  Q.charge(Heavy, 900 * Ms, Start + 5 * Ms);
  for (unsigned I = 0; I < AddressQuarantine::MaxEntries; ++I) {
    PeerIdentity A = ipv4("10.200.0.0");
    A.Address[2] = uint8_t(I >> 8);
    A.Address[3] = uint8_t(I);
    Q.charge(A, 100 * Ms, Start + 6 * Ms);
  }
  EXPECT_TRUE(Q.charge(Heavy, 100 * Ms, Start + 7 * Ms).NewlyRefused);
}

TEST(AddressQuarantine, NoBudgetNoQuarantine) {
  AddressQuarantine Q;
  EXPECT_FALSE(Q.enabled());
  EXPECT_FALSE(Q.charge(ipv4("192.0.2.7"), 3600'000 * Ms, Start).NewlyRefused);
  EXPECT_EQ(Q.size(), 0u);
}

} // namespace
