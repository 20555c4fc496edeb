//===- HostileOffersTest.cpp - Handshakes no runtime would send -----------===//
//
// An authenticated peer whose HELLO offers what no runtime offers (rings
// out of bounds, keys that do not add up or cannot be unpacked, a ring or
// credit line aimed outside the memory its key maps, down to the
// receiver's own heap), or that sends what only the other role sends: the
// receiver must refuse each at the handshake, with a status the peer sees,
// before anything is allocated or stored, count and log it, and go on
// serving good peers (docs/security.md). These were the end-to-end
// program tc-security's verbs offer and aim-canary, which needed the
// wire formats; end-to-end programs use only the installed headers.
//
// The sender's context is the attacker's; the receiver runs on its
// executor, which answers the raw peers as it answers any.
//
//===----------------------------------------------------------------------===//
#include "RawPeer.h"
#include "TwoContexts.h"

#include "control/ControlMessage.h"
#include "core/Peers.h"
#include "path/Mailbox.h"
#include "base/SharedSegment.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <dirent.h>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

namespace {

using namespace twochains::rt;
using rawpeer::OwnMemory;
using rawpeer::RawPeer;

const char *const TestKey = "the job's key for the hostile offers tests";

class HostileOffers : public TwoContexts {
protected:
  void SetUp() override {
    TwoContexts::SetUp();
    setKey(TestKey);
    // The receiver tc-security's offers were made for.
    Receiver.Params.slots = 16;
    Receiver.Params.slot_size = 1024;
  }

  /// Both contexts, without a connection between them; Before: the
  /// receiver's counters then.
  void startAttack() {
    ASSERT_NO_FATAL_FAILURE(startUnconnected());
    Before = stats(Receiver);
  }

  /// One raw peer: connect, AUTH, HELLO with O and Body; Answer: the
  /// receiver's. Call under ASSERT_NO_FATAL_FAILURE.
  void offer(const Offer &O, const std::vector<uint8_t> &Body, bool BadMac,
             tc_status_t &Answer) {
    RawPeer R(Sender.Ctx);
    ASSERT_NO_FATAL_FAILURE(R.connect(Port));
    ASSERT_NO_FATAL_FAILURE(R.authenticate());
    ASSERT_NO_FATAL_FAILURE(R.hello(O, Body, BadMac, Answer));
  }

  /// A good peer connects and runs Frames frames: the receiver kept
  /// serving. Call under ASSERT_NO_FATAL_FAILURE.
  void goodPeerRuns(unsigned Frames) {
    tc_stats_t S0 = stats(Receiver);
    ASSERT_EQ(connect(), TC_OK) << describe();
    ASSERT_NO_FATAL_FAILURE(sendGoodFrames(Frames));
    tc_stats_t S = stats(Receiver);
    EXPECT_EQ(S.frames_executed_local + S.frames_executed_injected -
                  S0.frames_executed_local - S0.frames_executed_injected,
              Frames)
        << describe();
  }

  /// A HELLO of shared memory (OfferSharedMemory) naming R: the credit
  /// line at its start, the ring a page after, the attacker's worker
  /// address after the record.
  void sharedHello(const SharedSegmentRecord &R, Offer &O, std::vector<uint8_t> &Body) {
    auto *Attacker = coreOf(Sender.Ctx);
    O = rawpeer::smallOffer();
    O.Path = PathRma;
    O.Flags = OfferSharedMemory | OfferStoresDirect;
    O.RingKeySize = sizeof(SharedSegmentRecord);
    O.WorkerAddressSize = uint32_t(Attacker->WorkerAddressSize);
    O.CreditAddress = R.Base;
    O.RingAddress = R.Base + 4096;
    Body.assign(reinterpret_cast<const uint8_t *>(&R),
                reinterpret_cast<const uint8_t *>(&R) + sizeof R);
    auto *W = reinterpret_cast<const uint8_t *>(Attacker->WorkerAddress);
    Body.insert(Body.end(), W, W + Attacker->WorkerAddressSize);
  }

  tc_stats_t Before = {};
};

/// The kinds tc-security's offer verb had: what each breaks in an offer (on the
/// message path unless it says RMA).
struct Kind {
  const char *Name;
  bool Rma;
  void (*Break)(Offer &, std::vector<uint8_t> &);
};

void rmaSizes(Offer &O, uint32_t CreditKey, uint32_t RingKey, uint32_t Worker) {
  O.Path = PathRma;
  O.CreditAddress = O.RingAddress = 0x1000;
  O.CreditKeySize = CreditKey;
  O.RingKeySize = RingKey;
  O.WorkerAddressSize = Worker;
}

const Kind OutOfBounds[] = {
    {"huge-ring", false,
     [](Offer &O, std::vector<uint8_t> &) {
       O.Slots = 1u << 30;
       O.SlotSize = 1u << 20;
     }},
    {"big-slot", false, [](Offer &O, std::vector<uint8_t> &) { O.SlotSize = 3u << 20; }},
    {"zero-slots", false, [](Offer &O, std::vector<uint8_t> &) { O.Slots = 0; }},
    {"key-sizes", false,
     [](Offer &O, std::vector<uint8_t> &B) {
       rmaSizes(O, 1u << 20, 16, 16);
       B.assign(32, 0);
     }},
    {"worker-address", false,
     [](Offer &O, std::vector<uint8_t> &B) {
       rmaSizes(O, 16, 16, 1u << 24);
       B.assign(48, 0);
     }},
    // Real keys whose insides are broken while their sizes still add up:
    // what UCX's unpacker, which takes no length, would read past (the
    // first per-memory-domain length byte says 255; Wire.cpp has the
    // layout).
    {"bad-rkey", true, [](Offer &O, std::vector<uint8_t> &B) { B[9] = 0xff; }},
    {"in-place", false, [](Offer &O, std::vector<uint8_t> &) {
       O.MailboxMode = TC_MAILBOX_IN_PLACE;
     }},
    {"trailing-body", false, [](Offer &, std::vector<uint8_t> &B) { B.assign(4096, 0x41); }},
    // The memory the keys name is gone before the receiver unpacks them (a
    // sender dying mid-handshake): UCX 1.13 crashed here
    // (runtime/ucx/UcxRkeyGuard.cpp).
    {"gone-key", true, nullptr},
};

/// Offers out of bounds, a wrong MAC, and good offers by the same raw
/// peer: each bad one refused with the status the peer sees, counted and
/// logged; the good ones accepted; a good peer served after them.
TEST_F(HostileOffers, OffersOutOfBoundsAreRefusedAndTheReceiverKeepsServing) {
  ASSERT_NO_FATAL_FAILURE(startAttack());
  auto *Attacker = coreOf(Sender.Ctx);
  std::vector<std::unique_ptr<OwnMemory>> Memory;
  auto Make = [&](bool Rma, bool Gone, Offer &O, std::vector<uint8_t> &Body) {
    O = rawpeer::smallOffer();
    Body.clear();
    if (!Rma)
      return;
    size_t Region = 0;
    Memory.push_back(std::make_unique<OwnMemory>());
    ASSERT_NO_FATAL_FAILURE(rawpeer::rmaOffer(Attacker, O, Body, *Memory.back(), Region, Gone));
  };
  for (const Kind &K : OutOfBounds) {
    SCOPED_TRACE(std::string("offer ") + K.Name);
    Offer O;
    std::vector<uint8_t> Body;
    ASSERT_NO_FATAL_FAILURE(Make(K.Rma, !K.Break, O, Body));
    if (K.Break)
      K.Break(O, Body);
    tc_status_t Answer;
    ASSERT_NO_FATAL_FAILURE(offer(O, Body, false, Answer));
    EXPECT_EQ(Answer, TC_ERR_BAD_OFFER) << tc_status_string(Answer) << "\n" << describe();
  }
  Offer O;
  std::vector<uint8_t> Body;
  tc_status_t Answer;
  ASSERT_NO_FATAL_FAILURE(Make(false, false, O, Body));
  ASSERT_NO_FATAL_FAILURE(offer(O, Body, true, Answer));
  EXPECT_EQ(Answer, TC_ERR_AUTH) << "offer bad-mac: " << tc_status_string(Answer);
  ASSERT_NO_FATAL_FAILURE(offer(O, Body, false, Answer));
  EXPECT_EQ(Answer, TC_OK) << "offer good: " << tc_status_string(Answer);
  ASSERT_NO_FATAL_FAILURE(Make(true, false, O, Body));
  ASSERT_NO_FATAL_FAILURE(offer(O, Body, false, Answer));
  EXPECT_EQ(Answer, TC_OK) << "offer good-rma: " << tc_status_string(Answer);

  tc_stats_t S = stats(Receiver);
  EXPECT_EQ(S.auth_failures - Before.auth_failures, 1u) << "bad-mac counted";
  EXPECT_EQ(S.offers_refused - Before.offers_refused, std::size(OutOfBounds))
      << "bad offers counted";
  EXPECT_TRUE(logged("slots (1 to 4096)")) << "the slot limit named";
  ASSERT_NO_FATAL_FAILURE(goodPeerRuns(4));
}

/// Messages only a connecting side takes (CHALLENGEs), sent to the
/// receiver, more of them than its handshake queue holds: refused, not
/// queued, and the receiver goes on serving.
TEST_F(HostileOffers, HandshakeMessagesOfTheOtherRoleAreRefused) {
  ASSERT_NO_FATAL_FAILURE(startAttack());
  {
    RawPeer R(Sender.Ctx);
    ASSERT_NO_FATAL_FAILURE(R.connect(Port));
    AuthChallenge C = {ChallengeMagic, HandshakeVersion, {}, {}};
    unsigned Sent = 0;
    // Until the receiver cuts the connection, if it does.
    for (int I = 0; I < 400 && !R.Peer->Failed; ++I)
      Sent += R.send(AmChallenge, &C, sizeof C) == UCS_OK;
    EXPECT_GE(Sent, 1u);
    // The receiver's executor takes them; the attacker's context is left
    // to the raw peer meanwhile (RawPeer.h).
    for (uint64_t End = nowNs() + rawpeer::AnswerWaitNs;
         !logged("a handshake message of the other role") && nowNs() < End;)
      ucp_worker_progress(R.Ctx->Worker);
    EXPECT_TRUE(logged("a handshake message of the other role")) << "refused, not queued";
  }
  ASSERT_NO_FATAL_FAILURE(goodPeerRuns(4));
}

/// The mappings of this process of the file of inode Inode, as
/// [begin, end) (from /proc/self/maps, as any process of the same user can
/// read another's).
std::vector<std::pair<uint64_t, uint64_t>> mappingsOfInode(uint64_t Inode) {
  std::vector<std::pair<uint64_t, uint64_t>> Out;
  std::FILE *M = std::fopen("/proc/self/maps", "re");
  char Line[512];
  while (M && std::fgets(Line, sizeof Line, M)) {
    unsigned long long B, E, I;
    if (std::sscanf(Line, "%llx-%llx %*s %*s %*s %llu", &B, &E, &I) == 3 && I == Inode && Inode)
      Out.push_back({B, E});
  }
  if (M)
    std::fclose(M);
  return Out;
}

/// The inode of the mapping of this process that holds Address (0: none).
uint64_t inodeOfMapping(uint64_t Address) {
  std::FILE *M = std::fopen("/proc/self/maps", "re");
  char Line[512];
  uint64_t Found = 0;
  while (M && !Found && std::fgets(Line, sizeof Line, M)) {
    unsigned long long B, E, Inode;
    if (std::sscanf(Line, "%llx-%llx %*s %*s %*s %llu", &B, &E, &Inode) == 3 && Address >= B &&
        Address < E)
      Found = Inode;
  }
  if (M)
    std::fclose(M);
  return Found;
}

/// RMA offers whose ring or credit line lies outside the memory their key
/// maps (1 TiB away, one line past the segment's end), and one aimed at
/// the receiver's own heap (its canary) through where the receiver mapped
/// the attacker's segment on a first, good connection: each refused at
/// the handshake, nothing stored, and good peers served beside them.
TEST_F(HostileOffers, OffersAimedOutsideTheirSegmentAreRefused) {
  ASSERT_NO_FATAL_FAILURE(startAttack());
  auto *Attacker = coreOf(Sender.Ctx);
  std::vector<uint8_t> Canary(4096, 0xc5); // the receiver's memory no peer may reach
  std::vector<std::unique_ptr<OwnMemory>> Memory;
  tc_status_t Answer;
  {
    Offer O = rawpeer::smallOffer();
    std::vector<uint8_t> Body;
    size_t Region;
    Memory.push_back(std::make_unique<OwnMemory>());
    ASSERT_NO_FATAL_FAILURE(rawpeer::rmaOffer(Attacker, O, Body, *Memory.back(), Region));
    ASSERT_NO_FATAL_FAILURE(offer(O, Body, false, Answer));
    EXPECT_EQ(Answer, TC_OK) << "offer good-rma: " << tc_status_string(Answer);
    if (stats(Receiver).peers_rma == Before.peers_rma)
      GTEST_SKIP() << "no RMA path here";
  }
  enum Aim { RingFar, CreditFar, RingPastEnd, CreditPastEnd };
  for (Aim A : {RingFar, CreditFar, RingPastEnd, CreditPastEnd}) {
    SCOPED_TRACE("aim " + std::to_string(A));
    Offer O = rawpeer::smallOffer();
    std::vector<uint8_t> Body;
    size_t Region;
    Memory.push_back(std::make_unique<OwnMemory>());
    ASSERT_NO_FATAL_FAILURE(rawpeer::rmaOffer(Attacker, O, Body, *Memory.back(), Region));
    const uint64_t Base = Memory.back()->Base;
    const uint64_t RingBytes = uint64_t(O.Slots) * slotStride(O.SlotSize);
    if (A == RingFar)
      O.RingAddress += 1ull << 40;
    else if (A == CreditFar)
      O.CreditAddress += 1ull << 40;
    else if (A == RingPastEnd)
      O.RingAddress = Base + Region - RingBytes + 64;
    else
      O.CreditAddress = Base + Region - 8;
    ASSERT_NO_FATAL_FAILURE(offer(O, Body, false, Answer));
    EXPECT_EQ(Answer, TC_ERR_BAD_OFFER) << tc_status_string(Answer) << "\n" << describe();
  }

  // Where does the receiver map this segment? A first, good connection.
  Offer O = rawpeer::smallOffer();
  std::vector<uint8_t> Body;
  size_t Region;
  Memory.push_back(std::make_unique<OwnMemory>());
  ASSERT_NO_FATAL_FAILURE(rawpeer::rmaOffer(Attacker, O, Body, *Memory.back(), Region));
  const uint64_t Base = Memory.back()->Base;
  const uint64_t Inode = inodeOfMapping(Base);
  auto TheReceivers = [&] {
    std::vector<uint64_t> Places;
    for (auto [B, E] : mappingsOfInode(Inode))
      if (Base < B || Base >= E) // not the attacker's own
        Places.push_back(B);
    return Places;
  };
  std::vector<uint64_t> Places;
  {
    RawPeer First(Sender.Ctx);
    ASSERT_NO_FATAL_FAILURE(First.connect(Port));
    ASSERT_NO_FATAL_FAILURE(First.authenticate());
    ASSERT_NO_FATAL_FAILURE(First.hello(O, Body, false, Answer));
    ASSERT_EQ(Answer, TC_OK) << "the first, good offer: " << tc_status_string(Answer);
    Places = TheReceivers();
    ASSERT_GE(Places.size(), 1u) << "the attacker found its segment in the receiver";
  }
  // Gone: the receiver unmaps it, and maps the next connection's keys in
  // the same places.
  for (uint64_t End = nowNs() + rawpeer::AnswerWaitNs; nowNs() < End && !TheReceivers().empty();)
    ucp_worker_progress(Attacker->Worker);
  EXPECT_TRUE(TheReceivers().empty()) << "the receiver kept the first peer's segment";
  const uint64_t CanaryAt = reinterpret_cast<uintptr_t>(Canary.data());
  unsigned Aimed = 0;
  for (uint64_t Place : Places) {
    O.CreditAddress = Base + (CanaryAt - Place);
    ASSERT_NO_FATAL_FAILURE(offer(O, Body, false, Answer));
    EXPECT_EQ(Answer, TC_ERR_BAD_OFFER) << "an offer aimed at the receiver's canary: "
                                        << tc_status_string(Answer);
    Aimed += Answer == TC_ERR_BAD_OFFER;
  }
  EXPECT_GE(Aimed, 1u);

  tc_stats_t S = stats(Receiver);
  EXPECT_EQ(S.auth_failures - Before.auth_failures, 0u);
  EXPECT_EQ(S.offers_refused - Before.offers_refused, 4u + Aimed) << "aimed offers counted";
  EXPECT_GE(loggedMatching("lies outside the .*-byte segment its key maps"), 1u)
      << "the reason named";
  EXPECT_TRUE(std::all_of(Canary.begin(), Canary.end(), [](uint8_t B) { return B == 0xc5; }))
      << "something was stored into the receiver's memory";
  ASSERT_NO_FATAL_FAILURE(goodPeerRuns(4));
}

/// This process's open descriptors that are regular files, by number.
std::map<int, struct stat> openFiles() {
  std::map<int, struct stat> Out;
  if (DIR *D = opendir("/proc/self/fd")) {
    while (dirent *E = readdir(D)) {
      struct stat St;
      int Fd = std::atoi(E->d_name);
      if (E->d_name[0] != '.' && Fd != dirfd(D) && fstat(Fd, &St) == 0 && S_ISREG(St.st_mode))
        Out[Fd] = St;
    }
    closedir(D);
  }
  return Out;
}

/// A key names a segment by its owner's PID and a descriptor number there
/// (UCX's POSIX segments, `/proc/PID/fd/N`): a peer may name the
/// receiver's own PID and the descriptor of one of the receiver's own
/// rings, for another peer's frames. Mapping it as the attacker's ring
/// would aim the receiver's stores (credits, answers) at its own memory
/// and let the attacker's frames reach another peer's ring. Here the
/// attacker's key is made to name the receiver's segment for a first,
/// good peer (the descriptor its key names is made a copy of the
/// receiver's); it is refused at the handshake, and the good peer keeps
/// its ring.
TEST_F(HostileOffers, AKeyNamingTheReceiversOwnSegmentIsRefused) {
  ASSERT_NO_FATAL_FAILURE(startAttack());
  auto *Attacker = coreOf(Sender.Ctx);
  std::vector<std::unique_ptr<OwnMemory>> Memory;
  tc_status_t Answer;
  // The good peer: the receiver makes a segment for its ring.
  Offer Good = rawpeer::smallOffer();
  std::vector<uint8_t> GoodBody;
  size_t Region;
  Memory.push_back(std::make_unique<OwnMemory>());
  ASSERT_NO_FATAL_FAILURE(rawpeer::rmaOffer(Attacker, Good, GoodBody, *Memory.back(), Region));
  std::map<int, struct stat> FilesBefore = openFiles();
  RawPeer First(Sender.Ctx);
  ASSERT_NO_FATAL_FAILURE(First.connect(Port));
  ASSERT_NO_FATAL_FAILURE(First.authenticate());
  ASSERT_NO_FATAL_FAILURE(First.hello(Good, GoodBody, false, Answer));
  ASSERT_EQ(Answer, TC_OK) << "the good peer's offer: " << tc_status_string(Answer);
  if (stats(Receiver).peers_rma == Before.peers_rma)
    GTEST_SKIP() << "no RMA path here";
  // The receiver's new segments whose descriptors it keeps (UCX's POSIX
  // segments, named to peers by them).
  std::vector<int> Receivers;
  for (auto &[Fd, St] : openFiles())
    if (!FilesBefore.count(Fd) && !mappingsOfInode(uint64_t(St.st_ino)).empty())
      Receivers.push_back(Fd);
  if (Receivers.empty())
    GTEST_SKIP() << "the receiver keeps no descriptor of its segment: a key cannot name it";
  unsigned Refused = 0;
  for (int Target : Receivers) {
    SCOPED_TRACE("the receiver's descriptor " + std::to_string(Target));
    Offer O = rawpeer::smallOffer();
    std::vector<uint8_t> Body;
    std::map<int, struct stat> Mine = openFiles();
    Memory.push_back(std::make_unique<OwnMemory>());
    ASSERT_NO_FATAL_FAILURE(rawpeer::rmaOffer(Attacker, O, Body, *Memory.back(), Region));
    // The descriptor the attacker's key names now names the receiver's
    // segment (the attacker's own mapping stays as it was).
    int Named = -1;
    uint64_t Inode = inodeOfMapping(Memory.back()->Base);
    for (auto &[Fd, St] : openFiles())
      if (!Mine.count(Fd) && Inode && uint64_t(St.st_ino) == Inode)
        Named = Fd;
    ASSERT_GE(Named, 0) << "the descriptor of the attacker's segment";
    ASSERT_EQ(dup2(Target, Named), Named);
    ASSERT_NO_FATAL_FAILURE(offer(O, Body, false, Answer));
    EXPECT_EQ(Answer, TC_ERR_BAD_OFFER) << tc_status_string(Answer) << "\n" << describe();
    Refused += Answer == TC_ERR_BAD_OFFER;
  }
  EXPECT_EQ(stats(Receiver).offers_refused - Before.offers_refused, Refused);
  EXPECT_GE(loggedMatching("maps a segment of this side's own"), 1u) << "the reason named";
  ASSERT_NO_FATAL_FAILURE(goodPeerRuns(4));
}

/// The same through a record of shared memory (as ranks of one host offer
/// their rings): a second connection names the memory file the receiver
/// made for a first one, with the token the receiver gave the first in its
/// WELCOME. The receiver does not take its own memory for the second
/// peer's ring: the second gets the message path, the first keeps its ring.
TEST_F(HostileOffers, ARecordNamingTheReceiversOwnSegmentIsRefused) {
  ASSERT_NO_FATAL_FAILURE(startAttack());
  Offer Small = rawpeer::smallOffer();
  size_t Length = 4096 + size_t(Small.Slots) * slotStride(Small.SlotSize);
  SharedSegment Segment;
  std::string Why;
  ASSERT_TRUE(createSharedSegment(SegmentKind::Mailbox, Length, MailboxTokenAt, Segment, Why))
      << Why;
  Offer O;
  std::vector<uint8_t> Body, WelcomeBody;
  sharedHello(recordOfSegment(Segment), O, Body);
  tc_status_t Answer;
  Offer Welcome = {};
  RawPeer First(Sender.Ctx);
  ASSERT_NO_FATAL_FAILURE(First.connect(Port));
  ASSERT_NO_FATAL_FAILURE(First.authenticate());
  ASSERT_NO_FATAL_FAILURE(First.hello(O, Body, false, Answer, &Welcome, &WelcomeBody));
  ASSERT_EQ(Answer, TC_OK) << tc_status_string(Answer) << "\n" << describe();
  if (!(Welcome.Flags & OfferSharedMemory))
    GTEST_SKIP() << "the receiver offers no memory file here";
  ASSERT_GE(WelcomeBody.size(), sizeof(SharedSegmentRecord));
  SharedSegmentRecord Receivers;
  std::memcpy(&Receivers, WelcomeBody.data(), sizeof Receivers);
  ASSERT_EQ(Receivers.Length, Length) << "the receiver's segment is as large as the offer's";

  sharedHello(Receivers, O, Body);
  Offer Second = {};
  RawPeer Next(Sender.Ctx);
  ASSERT_NO_FATAL_FAILURE(Next.connect(Port));
  ASSERT_NO_FATAL_FAILURE(Next.authenticate());
  ASSERT_NO_FATAL_FAILURE(Next.hello(O, Body, false, Answer, &Second));
  ASSERT_EQ(Answer, TC_OK) << tc_status_string(Answer) << "\n" << describe();
  EXPECT_EQ(Second.Path, PathAm) << "the receiver took its own memory for a peer's ring\n"
                                 << describe();
  EXPECT_TRUE(logged("maps a segment of this side's own")) << describe();
  releaseSharedSegment(Segment);
  ASSERT_NO_FATAL_FAILURE(goodPeerRuns(4));
}

//===----------------------------------------------------------------------===//
// A hostile receiver's WELCOME
//===----------------------------------------------------------------------===//

/// Where the hostile receiver's WELCOME aims its real ring or credit line.
enum class WelcomeAim { RingFar, CreditFar, RingPastEnd, CreditPastEnd };
WelcomeAim HostileAim;
/// sendMessage's status for the last hostile WELCOME (UCS_ERR_LAST: none).
std::atomic<int> HostileSent{UCS_ERR_LAST};

/// The hostile receiver's housekeeping, run before the handshake's own:
/// takes the HELLOs of authenticated peers and answers each with a WELCOME
/// of its real ring and credit line, aimed elsewhere, and a right MAC
/// (AUTH is answered by the runtime as always).
void hostileWelcome(CoreContext *Core) {
  CoreContext *Ctx = Core;
  for (size_t I = 0; I < Ctx->Wireup->Handshakes.size();) {
    tc_peer *Peer =
        Ctx->Wireup->Handshakes[I].Id == AmHello ? peerOfEndpoint(Ctx, Ctx->Wireup->Handshakes[I].Ep) : nullptr;
    if (!Peer || Peer->Wireup->AuthState != PeerWireup::Auth::Challenged) {
      ++I;
      continue;
    }
    WireupContext::PendingMessage M = std::move(Ctx->Wireup->Handshakes[I]);
    Ctx->Wireup->Handshakes.erase(Ctx->Wireup->Handshakes.begin() + I);
    Peer->Wireup->AuthState = PeerWireup::Auth::Authenticated;
    ParsedOffer Hello;
    std::string Why;
    Offer W;
    std::vector<uint8_t> Body;
    if (parseOffer(M.Header.data(), M.Header.size(), M.Body.data(), M.Body.size(), Hello, Why) !=
        TC_OK)
      continue;
    Peer->Path = rmaReaches(Ctx, Peer, Hello) ? PathRma : PathAm;
    if (setupLocalSide(Ctx, Peer) != TC_OK || acceptOffer(Ctx, Peer, Hello, Why) != TC_OK ||
        makeOffer(Ctx, Peer, W, Body) != TC_OK || W.Path != PathRma) {
      HostileSent = UCS_ERR_UNSUPPORTED; // no RMA welcome to aim
      continue;
    }
    switch (HostileAim) {
    case WelcomeAim::RingFar:
      W.RingAddress += 1ull << 40;
      break;
    case WelcomeAim::CreditFar:
      W.CreditAddress += 1ull << 40;
      break;
    case WelcomeAim::RingPastEnd: // past the page UCX rounds the segment to
      W.RingAddress += 4096;
      break;
    case WelcomeAim::CreditPastEnd: // the segment ends with the ring
      W.CreditAddress = W.RingAddress + Peer->Rx->RingBytes;
      break;
    }
    static const char Label[] = "tc-auth-v1 welcome";
    hmacSha256(Ctx->Key,
               {{Label, sizeof Label},
                {Peer->Wireup->ClientNonce, NonceSize},
                {Peer->Wireup->ServerNonce, NonceSize},
                {reinterpret_cast<const uint8_t *>(&W) + MacSize, sizeof W - MacSize},
                {Body.data(), Body.size()}},
               W.Mac);
    HostileSent = sendMessage(Ctx, Peer, AmWelcome, &W, sizeof W, Body.data(), Body.size());
  }
}

/// A HELLO of shared memory (OfferSharedMemory, as ranks of one host send)
/// whose segment the receiver cannot take as named: a token the segment
/// does not hold, a length it does not have, a descriptor that is a pipe,
/// a segment of another host. The receiver maps none of them, stores
/// nothing into the attacker's memory, and answers on the message path;
/// the segment as named is taken, and stored into, on the RMA path.
TEST_F(HostileOffers, SharedMemoryItCannotMapGetsTheMessagePath) {
  ASSERT_NO_FATAL_FAILURE(startAttack());
  Offer Small = rawpeer::smallOffer();
  size_t Length = 4096 + size_t(Small.Slots) * slotStride(Small.SlotSize);
  SharedSegment Segment;
  std::string Why;
  ASSERT_TRUE(createSharedSegment(SegmentKind::Mailbox, Length, MailboxTokenAt, Segment, Why))
      << Why;
  int Pipe[2];
  ASSERT_EQ(pipe(Pipe), 0);
  auto Untouched = [&] {
    for (size_t I = 0; I < Length; ++I)
      if ((I < MailboxTokenAt || I >= MailboxTokenAt + SegmentTokenBytes) && Segment.Base[I])
        return false;
    return true;
  };
  enum Break { Token, Longer, APipe, OtherHost, None };
  for (Break B : {Token, Longer, APipe, OtherHost, None}) {
    SCOPED_TRACE("break " + std::to_string(B));
    SharedSegmentRecord R = recordOfSegment(Segment);
    if (B == Token)
      R.Token[0] ^= 0x80;
    else if (B == Longer)
      R.Length += 4096;
    else if (B == APipe)
      R.Fd = Pipe[1];
    else if (B == OtherHost)
      R.Host[5] ^= 1;
    Offer O;
    std::vector<uint8_t> Body;
    sharedHello(R, O, Body);
    tc_status_t Answer;
    Offer Welcome = {};
    {
      RawPeer P(Sender.Ctx);
      ASSERT_NO_FATAL_FAILURE(P.connect(Port));
      ASSERT_NO_FATAL_FAILURE(P.authenticate());
      ASSERT_NO_FATAL_FAILURE(P.hello(O, Body, false, Answer, &Welcome));
    }
    ASSERT_EQ(Answer, TC_OK) << tc_status_string(Answer) << "\n" << describe();
    if (B != None) {
      EXPECT_EQ(Welcome.Path, PathAm) << describe();
      EXPECT_FALSE(Welcome.Flags & OfferSharedMemory);
      EXPECT_TRUE(Untouched()) << "the receiver stored into memory it refused";
    } else {
      EXPECT_EQ(Welcome.Path, PathRma) << describe();
      EXPECT_TRUE(Welcome.Flags & OfferSharedMemory);
    }
  }
  EXPECT_TRUE(logged("does not hold the segment's token")) << describe();
  EXPECT_TRUE(logged("not a twochains-mailbox segment")) << describe();
  EXPECT_TRUE(logged("sealed against shrinking")) << describe();
  EXPECT_TRUE(logged("its shared segment is another host's")) << describe();
  close(Pipe[0]);
  close(Pipe[1]);
  releaseSharedSegment(Segment);
  ASSERT_NO_FATAL_FAILURE(goodPeerRuns(4));
}

/// A hostile receiver's WELCOME whose ring or credit line lies outside
/// the memory its key maps, as each aim says: the sender refuses it at
/// the handshake (tc_connect fails, the reason logged) and does not crash.
TEST_F(HostileOffers, AWelcomeAimedOutsideItsSegmentIsRefused) {
  ASSERT_NO_FATAL_FAILURE(startAttack());
  if (stats(Receiver).peers_rma == 0)
    GTEST_SKIP() << "no RMA path here";
  for (WelcomeAim Aim : {WelcomeAim::RingFar, WelcomeAim::CreditFar, WelcomeAim::RingPastEnd,
                         WelcomeAim::CreditPastEnd}) {
    SCOPED_TRACE("welcome aim " + std::to_string(int(Aim)));
    Side *Hostile = nullptr;
    ASSERT_NO_FATAL_FAILURE(Hostile = createExtraSide("hostile receiver", {}, TestKey));
    ASSERT_NE(Hostile, nullptr);
    HostileAim = Aim;
    HostileSent = UCS_ERR_LAST;
    auto &H = coreOf(Hostile->Ctx)->Housekeeping;
    H.insert(H.begin(), hostileWelcome);
    const size_t Outside = loggedMatching("lies outside the .*-byte segment its key maps");
    uint16_t HostilePort = 0;
    tc_peer_t *Victim = nullptr;
    tc_status_t St = connectSides(Sender, *Hostile, HostilePort, &Victim);
    EXPECT_EQ(HostileSent.load(), UCS_OK) << "the hostile welcome was sent";
    EXPECT_EQ(St, TC_ERR_BAD_OFFER) << tc_status_string(St) << "\n" << describe();
    EXPECT_GT(loggedMatching("lies outside the .*-byte segment its key maps"), Outside)
        << "the reason";
    if (Victim)
      tc_peer_close(Victim);
  }
}

} // namespace
