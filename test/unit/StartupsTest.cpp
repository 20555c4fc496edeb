//===- StartupsTest.cpp - Connections not yet authenticated, by address ---===//
//
// Anyone who reaches the port can hold connections that never
// authenticate ("startups"), and an address may hold only so many
// (max_startups_per_address). Before, a flood of them from an address
// locked out a good peer on the same address: its connection was refused
// as it came, before it could show anything (issue 41, item 8: a 5 s
// connect error). Now a sender that holds the key proves it in its first
// message (AUTH: a MAC of its nonce and the time), such a startup no
// longer counts against its address, and an address at its limit gives up
// its oldest connection that has not proved the key to a newer one.
//
//===----------------------------------------------------------------------===//
#include "BareClient.h"
#include "TwoContexts.h"

#include "base/Clock.h"
#include "context/Context.h"
#include "wire/Auth.h"
#include "wire/Wire.h"
#include "wireup/WireupContext.h"
#include "wireup/PeerWireup.h"
#include "wireup/Wireup.h"
#include "ucx/UcxAsyncGuard.h"

#include <algorithm>
#include <arpa/inet.h>
#include <deque>
#include <sys/socket.h>
#include <thread>
#include <chrono>
#include <ucp/api/ucp.h>

namespace {

using namespace twochains::rt;

const char *const TestKey = "the job's key for the startups tests";

/// An AUTH as a sender with Key makes it, sent at SentNs.
AuthRequest provedAuth(const std::string &Key, uint64_t SentNs, uint8_t NonceByte) {
  AuthRequest A = {AuthMagic, HandshakeVersion, {}, SentNs, {}};
  std::memset(A.ClientNonce, NonceByte, NonceSize);
  JobKey K;
  K.Bytes.assign(Key.begin(), Key.end());
  const char Label[] = "tc-auth-v1 client";
  EXPECT_TRUE(hmacSha256(K,
                         {{Label, sizeof Label},
                          {A.ClientNonce, NonceSize},
                          {&A.SentNs, sizeof A.SentNs}},
                         A.Proof));
  return A;
}

class Startups : public TwoContexts {
protected:
  struct Seen {
    size_t Open = 0, Proved = 0, Closed = 0;
  };
  /// The receiver's connections since the test began: open startups, the
  /// proved among them, and those closed (refused, or given up to newer
  /// ones; reaping forgets them, the count does not).
  Seen seen() {
    Seen S;
    S.Closed = size_t(stats(Receiver).connections_refused - RefusedBefore);
    auto *Ctx = coreOf(Receiver.Ctx);
    std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
    for (auto &P : Ctx->Accepted)
      if (!P->Failed && P->Wireup->AuthState != PeerWireup::Auth::Refused && !P->Welcomed) {
        ++S.Open;
        S.Proved += P->Wireup->KeyProvedAtAuth;
      }
    return S;
  }
  /// Progresses both until the receiver has taken (or closed) Count
  /// connections since the test began.
  ::testing::AssertionResult tookConnections(BareClient &Client, size_t Count) {
    return progressUntil(
        [&] {
          Client.progress();
          tc_progress(Receiver.Ctx, nullptr);
          Seen S = seen();
          return S.Open + S.Closed == Count;
        },
        "the receiver took connection " + std::to_string(Count - 1));
  }
  void startBare() {
    ASSERT_NO_FATAL_FAILURE(startUnconnected());
    RefusedBefore = stats(Receiver).connections_refused;
  }
  uint64_t RefusedBefore = 0;

  /// The sender's connect to the receiver, started in the background.
  /// Call under ASSERT_NO_FATAL_FAILURE.
  void connectInBackground(tc_peer *&Connect) {
    auto *Ctx = coreOf(Sender.Ctx);
    sockaddr_in SA = {};
    ASSERT_TRUE(resolve("127.0.0.1", Port, SA));
    std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
    Connect = startConnect(Ctx, SA, "the receiver", NoJobRank, nowNs() + 20'000'000'000ull);
    ASSERT_NE(Connect, nullptr);
  }
  /// Only the receiver turns, for 300 ms: it accepts, and its reply
  /// reaches the sender's connection manager, which then waits for the
  /// sender.
  void turnOnlyTheReceiver() {
    uint64_t Until = nowNs() + 300'000'000;
    while (nowNs() < Until)
      tc_progress(Receiver.Ctx, nullptr);
  }

  void SetUp() override {
    setKey(TestKey);
    Receiver.Params.max_startups_per_address = 1;
    Drive = Driver::TestThread;
  }
};

/// A startup that proved the key in its AUTH neither counts against its
/// address nor gives its place up to a newer connection from there; of
/// those that did not prove it, the newest keeps the address's one place.
/// Before, the proved one took the place and every later connection from
/// the address was refused as it came (a good peer behind a flood, never
/// let in).
TEST_F(Startups, AStartupThatProvedTheKeyKeepsItsPlaceFromItsAddress) {
  ASSERT_NO_FATAL_FAILURE(startBare());
  BareClient Client;
  ASSERT_NO_FATAL_FAILURE(Client.connect(Port));
  ASSERT_NO_FATAL_FAILURE(Client.sendAuth(0, provedAuth(TestKey, wallNs(), 1)));
  ASSERT_TRUE(progressUntil(
      [&] {
        Client.progress();
        tc_progress(Receiver.Ctx, nullptr);
        return seen().Proved == 1;
      },
      "the receiver took the first AUTH as proving the key"))
      << describe();
  // Two more from the same address, which prove nothing.
  for (size_t I = 1; I <= 2; ++I) {
    ASSERT_NO_FATAL_FAILURE(Client.connect(Port));
    ASSERT_TRUE(tookConnections(Client, I + 1)) << describe();
  }
  Seen S = seen();
  EXPECT_EQ(S.Proved, 1u) << "the proved startup lost its place\n" << describe();
  EXPECT_EQ(S.Open, 2u) << "the proved one and the newest of the others, open\n" << describe();
  EXPECT_EQ(S.Closed, 1u) << "the older of the others gave its place up\n" << describe();
}

/// What does not prove the key: a MAC under another key, a time far from
/// the receiver's, and a proof seen before (replayed). Each counts against
/// the address like any other startup.
TEST_F(Startups, AStartupProvesTheKeyOnlyWithAFreshMacUnderIt) {
  ASSERT_NO_FATAL_FAILURE(startBare());
  BareClient Client;
  const uint64_t Now = wallNs(), Hour = 3600ull * 1'000'000'000ull;
  AuthRequest Good = provedAuth(TestKey, Now, 7);
  const AuthRequest Sent[] = {
      Good,                                          // proved
      provedAuth("not the job's key at all", Now, 8), // another key
      provedAuth(TestKey, Now - Hour, 9),            // an hour old
      provedAuth(TestKey, Now + Hour, 10),           // an hour ahead
      Good,                                          // replayed
  };
  for (size_t I = 0; I < std::size(Sent); ++I) {
    ASSERT_NO_FATAL_FAILURE(Client.connect(Port));
    ASSERT_NO_FATAL_FAILURE(Client.sendAuth(I, Sent[I]));
    ASSERT_TRUE(tookConnections(Client, I + 1)) << describe();
    // Its AUTH answered (or the connection closed) before the next comes.
    ASSERT_TRUE(progressUntil(
        [&] {
          Client.progress();
          tc_progress(Receiver.Ctx, nullptr);
          auto *Ctx = coreOf(Receiver.Ctx);
          std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
          return Ctx->Wireup->Handshakes.empty() &&
                 std::all_of(Ctx->Accepted.begin(), Ctx->Accepted.end(), [](auto &P) {
                   return P->Failed || P->Wireup->AuthState != PeerWireup::Auth::None;
                 });
        },
        "the receiver answered AUTH " + std::to_string(I)))
        << describe();
  }
  Seen S = seen();
  EXPECT_EQ(S.Proved, 1u) << describe();
  // The proved one, and the newest of the four that proved nothing.
  EXPECT_EQ(S.Open, 2u) << describe();
  EXPECT_EQ(S.Closed, 3u) << describe();
}

/// A client without the key opens 60 connections and sends on each an AUTH
/// and a HELLO whose MAC is wrong (no key is needed for either), then never
/// progresses again, its connections open. The receiver refuses each, and
/// counts it, without waiting for the client or keeping its connections;
/// a good peer connects within tc_connect's usual timeout meanwhile and
/// gets every frame through. (Was run-startups.sh's badauth step, whose
/// client needed the handshake's wire formats.)
TEST_F(Startups, WrongMacsOfAClientThatStopsReadingAreRefusedWithoutWaiting) {
  Receiver.Params.max_startups = 100;
  Receiver.Params.max_startups_per_address = 100;
  ConnectTimeoutMs = 5000;
  ASSERT_NO_FATAL_FAILURE(startBare());
  const uint64_t AuthBefore = stats(Receiver).auth_failures;
  BareClient Client;
  const AuthRequest Auth = {AuthMagic, HandshakeVersion, {}, 0, {}};
  Offer Hello = {}; // its MAC all zeros: not the job's
  Hello.Magic = HandshakeMagic;
  Hello.Version = HandshakeVersion;
  constexpr size_t Count = 60;
  for (size_t I = 0; I < Count; ++I) {
    ASSERT_NO_FATAL_FAILURE(Client.connect(Port));
    ASSERT_NO_FATAL_FAILURE(Client.sendAuth(I, Auth));
    ASSERT_NO_FATAL_FAILURE(Client.send(I, AmHello, &Hello, sizeof Hello));
  }
  // Until every message has left, and not a moment longer: the receiver
  // then has peers that take nothing more.
  ASSERT_TRUE(progressUntil(
      [&] {
        Client.progress();
        return Client.idle();
      },
      "every AUTH and HELLO left"));

  // The good peer, while the refused client is still there.
  ASSERT_EQ(connect(), TC_OK) << describe();
  const uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  std::vector<int32_t> Payload = sumPayload(8, 1);
  constexpr unsigned Frames = 200;
  for (unsigned I = 0; I < Frames; ++I)
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, TC_SEND_LOCAL, Payload.data(),
                           Payload.size() * sizeof(int32_t)),
              TC_OK)
        << describe();
  ASSERT_EQ(flush(), TC_OK) << describe();
  EXPECT_EQ(stats(Receiver).frames_executed_local, Frames) << describe();

  // Refused, each, and let go while the client, which never reads, still
  // holds its ends.
  auto *Ctx = coreOf(Receiver.Ctx);
  ASSERT_TRUE(progressUntil(
      [&] {
        if (stats(Receiver).auth_failures - AuthBefore < Count)
          return false;
        std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
        return std::all_of(Ctx->Accepted.begin(), Ctx->Accepted.end(),
                           [](auto &P) { return bool(P->Welcomed); });
      },
      "the receiver refused every wrong MAC and kept none of those connections"));
  EXPECT_EQ(stats(Receiver).auth_failures - AuthBefore, Count) << describe();
}

/// A connect whose reply has come costs its process nothing until the
/// process turns its worker again. UCX's TCP connection manager asks for
/// write events on its socket until its owner takes the reply, and a
/// socket is always writable: UCX's async thread took them as fast as it
/// could, doing nothing, until the owner's next progress (40 % of all CPU
/// time in the first round of a 64-rank job on 2 cores, each rank waiting
/// for its turn of a core). Now the descriptor is parked after a few, and
/// the owner's next turn rearms it: the connection is then made, and its
/// first message taken, as before.
TEST_F(Startups, AConnectWaitingForItsOwnerIsParked) {
  ASSERT_NO_FATAL_FAILURE(startBare());
  uint64_t TakenBefore = 0, ParkingsBefore = 0, ParkedEventsBefore = 0;
  twochains_ucx_idle_writes(&TakenBefore, &ParkingsBefore, &ParkedEventsBefore);
  auto *Ctx = coreOf(Sender.Ctx);
  tc_peer *Connect = nullptr;
  ASSERT_NO_FATAL_FAILURE(connectInBackground(Connect));
  turnOnlyTheReceiver();
  uint64_t Taken = 0, Parkings = 0, ParkedEvents = 0;
  twochains_ucx_idle_writes(&Taken, &Parkings, &ParkedEvents);
  EXPECT_GE(Parkings - ParkingsBefore, 1u) << "the waiting connect's socket was never parked";
  EXPECT_LE(Taken - TakenBefore, 32u)
      << "write events taken for nothing while the connect waited (16 before each parking)";
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_progress(Sender.Ctx, nullptr);
        tc_progress(Receiver.Ctx, nullptr);
        std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
        return std::find(Ctx->Connected.begin(), Ctx->Connected.end(), Connect) !=
               Ctx->Connected.end();
      },
      "the sender's connect, parked, was welcomed"))
      << describe();
  tc_peer_close(Connect); // the application's, as tc_connect's would be
}

/// The sockets of this process connected to 127.0.0.1:Port.
std::vector<int> socketsTo(uint16_t Port) {
  std::vector<int> Found;
  for (int Fd = 3; Fd < 4096; ++Fd) {
    sockaddr_in Peer = {};
    socklen_t Size = sizeof Peer;
    if (getpeername(Fd, reinterpret_cast<sockaddr *>(&Peer), &Size) == 0 &&
        Peer.sin_family == AF_INET && ntohs(Peer.sin_port) == Port)
      Found.push_back(Fd);
  }
  return Found;
}

/// A parked connect whose socket then breaks costs its process nothing
/// either: the hang-up the kernel reports on it, whatever is asked, comes
/// once (parked edge-triggered), and the connect fails when its owner
/// turns. Parked level-triggered, the async thread took it again and
/// again until then (127,089 times in 300 ms).
TEST_F(Startups, AParkedConnectWhoseSocketBreaksCostsNothing) {
  ASSERT_NO_FATAL_FAILURE(startBare());
  auto *Ctx = coreOf(Sender.Ctx);
  tc_peer *Connect = nullptr;
  ASSERT_NO_FATAL_FAILURE(connectInBackground(Connect));
  uint64_t Taken0 = 0, Parkings0 = 0, Events0 = 0;
  twochains_ucx_idle_writes(&Taken0, &Parkings0, &Events0);
  turnOnlyTheReceiver();
  uint64_t Taken1 = 0, Parkings1 = 0, Events1 = 0;
  twochains_ucx_idle_writes(&Taken1, &Parkings1, &Events1);
  ASSERT_GE(Parkings1 - Parkings0, 1u) << "the waiting connect's socket was never parked";
  // The connection manager's socket breaks (the sender's end of it: the
  // receiver's accepted one has the listener's port as its own).
  std::vector<int> Sockets = socketsTo(Port);
  ASSERT_FALSE(Sockets.empty());
  for (int Fd : Sockets)
    shutdown(Fd, SHUT_RDWR);
  uint64_t Until = nowNs() + 300'000'000;
  while (nowNs() < Until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  uint64_t Taken2 = 0, Parkings2 = 0, Events2 = 0;
  twochains_ucx_idle_writes(&Taken2, &Parkings2, &Events2);
  EXPECT_LE(Events2 - Events1, 64u) << "events taken for a parked socket, over and over";
  // The sender learns its connect failed when it turns.
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_progress(Sender.Ctx, nullptr);
        std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
        return std::find(Ctx->Connecting.begin(), Ctx->Connecting.end(), Connect) ==
               Ctx->Connecting.end();
      },
      "the sender's connect ended"))
      << describe();
  std::lock_guard<std::recursive_mutex> G(Ctx->Lock);
  EXPECT_EQ(std::find(Ctx->Connected.begin(), Ctx->Connected.end(), Connect), Ctx->Connected.end())
      << "a connect whose socket broke was welcomed";
}

} // namespace
