//===- AuthTest.cpp - HMAC-SHA256, the job key, offers ----------------------===//
#include "wire/Auth.h"
#include "wire/Wire.h"
#include "wire/Frame.h"
#include "twochains/twochains.h"

#include <gtest/gtest.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace twochains::rt;

namespace {

std::string hex(const uint8_t *P, size_t N) {
  static const char D[] = "0123456789abcdef";
  std::string S;
  for (size_t I = 0; I < N; ++I)
    S += {D[P[I] >> 4], D[P[I] & 15]};
  return S;
}

JobKey key(const std::vector<uint8_t> &Bytes) {
  JobKey K;
  K.Bytes = Bytes;
  return K;
}

// RFC 4231, test cases 1, 2 and 6 (a key longer than a block).
TEST(Hmac, Rfc4231Vectors) {
  uint8_t Mac[MacSize];
  hmacSha256(key(std::vector<uint8_t>(20, 0x0b)), {{"Hi There", 8}}, Mac);
  EXPECT_EQ(hex(Mac, MacSize), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  std::string Jefe = "Jefe";
  hmacSha256(key({Jefe.begin(), Jefe.end()}),
             {{"what do ya want ", 16}, {"for nothing?", 12}}, Mac);
  EXPECT_EQ(hex(Mac, MacSize), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  const char Long[] = "Test Using Larger Than Block-Size Key - Hash Key First";
  hmacSha256(key(std::vector<uint8_t>(131, 0xaa)), {{Long, sizeof Long - 1}}, Mac);
  EXPECT_EQ(hex(Mac, MacSize), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

// Without a key the MACs are keyed with no bytes, as RFC 2104 defines it.
TEST(Hmac, NoKeyIsTheEmptyKey) {
  uint8_t Mac[MacSize];
  EXPECT_TRUE(hmacSha256(JobKey(), {}, Mac));
  EXPECT_EQ(hex(Mac, MacSize), "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
  EXPECT_TRUE(hmacSha256(JobKey(), {{"server", 6}, {std::string(64, '\0').data(), 64}}, Mac));
  EXPECT_EQ(hex(Mac, MacSize), "0810083177aa5faf247b94d642bfee9c3582f9e6d94c782e4bf7f1cf7e91e6d9");
}

// Each thread keeps a context keyed with its last key: a key of the same
// length but other bytes, and a return to the first, key it anew. RFC 4231
// cases 1 and 3 have 20-byte keys.
TEST(Hmac, AnotherKeyOfTheSameLength) {
  const std::string Case1 = "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7";
  const std::string Case3 = "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe";
  std::vector<uint8_t> Dd(50, 0xdd);
  auto Run = [&](std::string &Failed) {
    uint8_t Mac[MacSize];
    for (int I = 0; I < 200; ++I) {
      hmacSha256(key(std::vector<uint8_t>(20, 0x0b)), {{"Hi There", 8}}, Mac);
      if (hex(Mac, MacSize) != Case1)
        Failed = "case 1 after case 3: " + hex(Mac, MacSize);
      hmacSha256(key(std::vector<uint8_t>(20, 0xaa)), {{Dd.data(), Dd.size()}}, Mac);
      if (hex(Mac, MacSize) != Case3)
        Failed = "case 3 after case 1: " + hex(Mac, MacSize);
    }
  };
  // On two threads at once, too: each has its own context.
  std::string FailedHere, FailedThere;
  std::thread Other(Run, std::ref(FailedThere));
  Run(FailedHere);
  Other.join();
  EXPECT_EQ(FailedHere, "");
  EXPECT_EQ(FailedThere, "");
}

TEST(Hmac, ComparisonSeesEveryByte) {
  uint8_t A[MacSize] = {}, B[MacSize] = {};
  EXPECT_TRUE(equalMacs(A, B));
  B[MacSize - 1] = 1;
  EXPECT_FALSE(equalMacs(A, B));
}

struct KeyEnv : ::testing::Test {
  void SetUp() override {
    unsetenv("TC_KEY");
    unsetenv("TC_KEY_FILE");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(KeyEnv, NoKeyIsNotAnError) {
  JobKey K;
  std::string Error;
  EXPECT_EQ(loadJobKey(nullptr, K, Error), TC_OK);
  EXPECT_FALSE(K.present());
}

TEST_F(KeyEnv, FromTheEnvironment) {
  setenv("TC_KEY", "0123456789abcdef0123", 1);
  JobKey K;
  std::string Error;
  ASSERT_EQ(loadJobKey(nullptr, K, Error), TC_OK);
  EXPECT_EQ(K.Bytes.size(), 20u);
  setenv("TC_KEY", "short", 1);
  EXPECT_EQ(loadJobKey(nullptr, K, Error), TC_ERR_AUTH);
  EXPECT_NE(Error.find("holds 5 bytes"), std::string::npos) << Error;
}

TEST_F(KeyEnv, KeyFilesMustBeTheOwnersAlone) {
  char Path[] = "/tmp/tc-key-XXXXXX";
  int Fd = mkstemp(Path);
  ASSERT_GE(Fd, 0);
  ASSERT_EQ(write(Fd, "a-key-of-twenty-bytes\n", 22), 22);
  close(Fd);
  chmod(Path, 0644);
  tc_context_params_t P = {};
  P.version = TC_CONTEXT_PARAMS_VERSION;
  P.key_file = Path;
  JobKey K;
  std::string Error;
  EXPECT_EQ(loadJobKey(&P, K, Error), TC_ERR_AUTH);
  EXPECT_NE(Error.find("mode 0644"), std::string::npos) << Error;
  chmod(Path, 0600);
  ASSERT_EQ(loadJobKey(&P, K, Error), TC_OK) << Error;
  EXPECT_EQ(std::string(K.Bytes.begin(), K.Bytes.end()), "a-key-of-twenty-bytes");
  // The parameters come before the environment.
  setenv("TC_KEY", "another-key-entirely", 1);
  ASSERT_EQ(loadJobKey(&P, K, Error), TC_OK);
  EXPECT_EQ(K.Bytes.size(), 21u);
  unlink(Path);
}

Offer goodOffer() {
  Offer O = {};
  O.Magic = HandshakeMagic;
  O.Version = HandshakeVersion;
  O.Slots = 64;
  O.SlotSize = 4096;
  O.MailboxMode = TC_MAILBOX_CODE_CACHE;
  O.Path = PathAm;
  O.Isa = IsaX86_64;
  O.CodeTrust = TC_CODE_TRUST_PACKAGE;
  return O;
}

tc_status_t parse(const Offer &O, const std::vector<uint8_t> &Body = {}) {
  ParsedOffer Out;
  std::string Why;
  return parseOffer(&O, sizeof O, Body.data(), Body.size(), Out, Why);
}

TEST(Offer, Bounds) {
  EXPECT_EQ(parse(goodOffer()), TC_OK);
  Offer O = goodOffer();
  O.Slots = 1u << 30;
  O.SlotSize = 1u << 20;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.Slots = MaxSlots;
  O.SlotSize = MaxSlotSize; // each within bounds, together too large
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.SlotSize = 100;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.Slots = 0;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.MailboxMode = TC_MAILBOX_IN_PLACE;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.Isa = IsaAArch64;
  EXPECT_EQ(parse(O), TC_OK); // either instruction set, named
  O.Isa = 0;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O.Isa = 3;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.Job = 1;
  O.JobRank = 7;
  EXPECT_EQ(parse(O), TC_OK);
  O.JobRank = MaxJobRanks;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O.JobRank = 7;
  O.ProofFor = 3; // a proof for rank 3, or for any (NoJobRank)
  EXPECT_EQ(parse(O), TC_OK);
  O.ProofFor = NoJobRank;
  EXPECT_EQ(parse(O), TC_OK);
  O.ProofFor = MaxJobRanks;
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.Flags = OfferStoresDirect;
  EXPECT_EQ(parse(O), TC_OK);
  O.Flags = OfferPayloadsByRma; // only an RMA offer takes payloads on its RMA worker
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O.Flags = OfferSharedMemory; // only an RMA offer shares memory
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  O.Flags = 8; // a flag no side sends
  EXPECT_EQ(parse(O), TC_ERR_BAD_OFFER);
  EXPECT_EQ(parse(goodOffer(), std::vector<uint8_t>(8)), TC_ERR_BAD_OFFER); // AM with a body
  O = goodOffer();
  O.Path = PathRma;
  O.CreditAddress = O.RingAddress = 0x1000;
  O.CreditKeySize = O.RingKeySize = 0x7fffffff;
  O.WorkerAddressSize = 2; // sums that wrap 32 bits must not pass
  EXPECT_EQ(parse(O, std::vector<uint8_t>(4)), TC_ERR_BAD_OFFER);
  ParsedOffer Out;
  std::string Why;
  EXPECT_EQ(parseOffer(&O, sizeof O - 1, nullptr, 0, Out, Why), TC_ERR_BAD_OFFER);
}

/// A segment record as a process of this host would send it.
static SharedSegmentRecord segmentRecord(uint64_t Base, uint64_t Length) {
  SharedSegmentRecord R = {};
  R.Base = Base;
  R.Length = Length;
  R.Pid = 1;
  R.Fd = 3;
  return R;
}

/// An RMA offer's body: two keys and a worker address, and a doorbell
/// segment if Doorbell (each key the smallest well-formed one).
static std::vector<uint8_t> rmaBody(Offer &O, bool Doorbell,
                                    const SharedSegmentRecord &Bell = segmentRecord(0x2000, 4096)) {
  O.Path = PathRma;
  O.CreditAddress = O.RingAddress = 0x1000;
  O.CreditKeySize = O.RingKeySize = 9;
  O.WorkerAddressSize = 1;
  O.DoorbellKeySize = Doorbell ? sizeof Bell : 0;
  std::vector<uint8_t> Body(9 + 9 + 1, 0);
  if (Doorbell)
    Body.insert(Body.end(), reinterpret_cast<const uint8_t *>(&Bell),
                reinterpret_cast<const uint8_t *>(&Bell) + sizeof Bell);
  return Body;
}

TEST(Offer, Doorbell) {
  Offer O = goodOffer();
  std::vector<uint8_t> Body = rmaBody(O, false);
  EXPECT_EQ(parse(O, Body), TC_OK); // no doorbell
  Body = rmaBody(O, true, segmentRecord(0x2000, doorbellSegmentBytes(4096)));
  O.DoorbellAddress = 0x2000;
  O.DoorbellIndex = 4095;
  ParsedOffer Out;
  std::string Why;
  ASSERT_EQ(parseOffer(&O, sizeof O, Body.data(), Body.size(), Out, Why), TC_OK) << Why;
  EXPECT_EQ(Out.Doorbell.Base, 0x2000u);
  EXPECT_EQ(Out.Doorbell.Length, doorbellSegmentBytes(4096));
  O.DoorbellIndex = 4096; // a place past the segment's end
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.DoorbellIndex = MaxDoorbellPlaces; // a place no doorbell has
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.DoorbellIndex = 1;
  O.DoorbellAddress = 0;
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.DoorbellAddress = 0x3000; // not the segment's start
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  Body = rmaBody(O, false);
  O.DoorbellAddress = 0x2000; // a place without a segment
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  SharedSegmentRecord Bell = segmentRecord(0x2000, doorbellSegmentBytes(64));
  Bell.Fd = -1; // a descriptor no process has
  Body = rmaBody(O, true, Bell);
  O.DoorbellIndex = 0;
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  Bell = segmentRecord(~0ull - 100, doorbellSegmentBytes(64)); // wraps
  Body = rmaBody(O, true, Bell);
  O.DoorbellAddress = Bell.Base;
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  Bell = segmentRecord(0x2000, doorbellSegmentBytes(MaxDoorbellPlaces) + 64); // too long
  Body = rmaBody(O, true, Bell);
  O.DoorbellAddress = Bell.Base;
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  Body = rmaBody(O, true);
  Body.pop_back(); // a record cut short
  O.DoorbellKeySize -= 1;
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O = goodOffer();
  O.DoorbellKeySize = sizeof(SharedSegmentRecord); // the message path has no doorbell
  O.DoorbellAddress = 0x2000;
  EXPECT_EQ(parse(O, std::vector<uint8_t>(sizeof(SharedSegmentRecord))), TC_ERR_BAD_OFFER);
}

/// A shared-memory offer's body: the mailbox segment and a worker address.
static std::vector<uint8_t> sharedBody(Offer &O, const SharedSegmentRecord &Mailbox) {
  O.Path = PathRma;
  O.Flags = OfferSharedMemory | OfferStoresDirect;
  O.CreditKeySize = 0;
  O.RingKeySize = sizeof Mailbox;
  O.WorkerAddressSize = 1;
  std::vector<uint8_t> Body(reinterpret_cast<const uint8_t *>(&Mailbox),
                            reinterpret_cast<const uint8_t *>(&Mailbox) + sizeof Mailbox);
  Body.push_back(0);
  return Body;
}

TEST(Offer, SharedMemory) {
  Offer O = goodOffer(); // 64 slots of 4 KiB
  uint64_t Ring = 64 * slotStride(O.SlotSize);
  SharedSegmentRecord M = segmentRecord(0x10000, 4096 + Ring);
  std::vector<uint8_t> Body = sharedBody(O, M);
  O.CreditAddress = 0x10000;
  O.RingAddress = 0x11000;
  ParsedOffer Out;
  std::string Why;
  ASSERT_EQ(parseOffer(&O, sizeof O, Body.data(), Body.size(), Out, Why), TC_OK) << Why;
  EXPECT_EQ(Out.Mailbox.Length, 4096 + Ring);
  EXPECT_EQ(Out.CreditKey, nullptr);
  EXPECT_EQ(Out.RingKey, nullptr);
  EXPECT_EQ(Out.WorkerAddress, Body.data() + sizeof M);
  O.CreditAddress = 0x10040; // the credit line is the segment's start
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.CreditAddress = 0x10000;
  O.RingAddress = 0x10000 + MailboxTokenAt; // over the token
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.RingAddress = 0x11040; // its end past the segment's
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.RingAddress = 0x11000;
  O.Slots = 65; // more ring than the segment holds
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.Slots = 64;
  M.Pid = 0; // no process
  EXPECT_EQ(parse(O, sharedBody(O, M)), TC_ERR_BAD_OFFER);
  M = segmentRecord(0x10000, 4096 + Ring);
  Body = sharedBody(O, M);
  O.CreditKeySize = 9; // memory keys beside the segment
  Body.insert(Body.begin(), 9, 0);
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
}

TEST(Offer, Packages) {
  std::string Id(64, 'a');
  std::vector<uint8_t> Body;
  appendOfferPackages(Body, {{"stdlib", Id}, {"shop_2", std::string(64, '0')}});
  Offer O = goodOffer();
  O.PackagesSize = uint32_t(Body.size());
  ParsedOffer Out;
  std::string Why;
  ASSERT_EQ(parseOffer(&O, sizeof O, Body.data(), Body.size(), Out, Why), TC_OK) << Why;
  ASSERT_EQ(Out.Packages.size(), 2u);
  EXPECT_EQ(Out.Packages[0].first, "stdlib");
  EXPECT_EQ(Out.Packages[1].second, std::string(64, '0'));
  ASSERT_EQ(Out.Interfaces.size(), 2u);
  EXPECT_EQ(Out.Interfaces[0], std::string(64, '0')) << "an interface not given is sent as zeros";
  // The interface travels with its package.
  Body.clear();
  appendOfferPackages(Body, {{"stdlib", Id}}, {std::string(64, 'b')});
  O.PackagesSize = uint32_t(Body.size());
  ASSERT_EQ(parseOffer(&O, sizeof O, Body.data(), Body.size(), Out, Why), TC_OK) << Why;
  EXPECT_EQ(Out.Interfaces[0], std::string(64, 'b'));
  std::vector<uint8_t> NotHex = Body;
  NotHex.back() = 'G';
  EXPECT_EQ(parse(O, NotHex), TC_ERR_BAD_OFFER);
  // A code-trust policy that is none.
  Offer Policy = O;
  for (uint32_t Trust : {uint32_t(TC_CODE_TRUST_DEFAULT), uint32_t(TC_CODE_TRUST_VERIFIED) + 1}) {
    Policy.CodeTrust = Trust;
    EXPECT_EQ(parse(Policy, Body), TC_ERR_BAD_OFFER) << Trust;
  }
  Body.clear();
  appendOfferPackages(Body, {{"stdlib", Id}, {"shop_2", std::string(64, '0')}});
  // A section larger than the body, or cut inside an entry.
  O.PackagesSize = uint32_t(Body.size() + 1);
  EXPECT_EQ(parse(O, Body), TC_ERR_BAD_OFFER);
  O.PackagesSize = uint32_t(Body.size() - 1);
  std::vector<uint8_t> Cut(Body.begin(), Body.end() - 1);
  EXPECT_EQ(parse(O, Cut), TC_ERR_BAD_OFFER);
  // The same package twice; a name that is not one; an identity that is
  // not 64 lower-case hex digits.
  for (auto Bad : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"stdlib", Id}, {"stdlib", Id}},
           {{"std-lib", Id}},
           {{"stdlib", std::string(64, 'G')}}}) {
    std::vector<uint8_t> B;
    appendOfferPackages(B, Bad);
    O.PackagesSize = uint32_t(B.size());
    EXPECT_EQ(parse(O, B), TC_ERR_BAD_OFFER) << Bad[0].first;
  }
}

} // namespace
