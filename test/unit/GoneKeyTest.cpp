//===- GoneKeyTest.cpp - A memory key already gone, to libtwochains -------===//
//
// UCX 1.13 to 1.18 crash a receiver that unpacks a memory key whose
// segment the peer already removed (a sender dying mid-handshake); the
// runtime interposes two UCT calls around it (runtime/ucx/UcxRkeyGuard.cpp),
// and only where libtwochains-ucx comes before libuct in the process's
// lookup order, as it does for a program linking libtwochains. So the
// receiver here is such a program's: this executable links the shared
// library, not the runtime's objects, and calls only its public API. The
// peer is a bare UCX client that speaks the handshake itself, with the
// wire formats' layouts (header-only) and libcrypto's HMAC; it offers an
// RMA ring whose key names a segment it unmapped just before. The
// receiver must refuse the offer, say why, and go on serving. (This was
// the end-to-end step 'gone-key' of run-security.sh, whose peer needed the
// internals; end-to-end programs use only the installed headers.)
//
//===----------------------------------------------------------------------===//
#include "twochains/twochains.h"
#include "wire/Frame.h"
#include "wire/Wire.h"
#include "LoopbackEndpoint.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <mutex>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <string>
#include <thread>
#include <ucp/api/ucp.h>
#include <vector>

namespace {

using namespace twochains::rt;

const std::string TestKey = "the job's key for the gone-key test";
constexpr auto AnswerWait = std::chrono::seconds(10);

/// What the receiver logged.
struct Log {
  std::mutex Lock;
  std::vector<std::string> Lines;
  bool has(const std::string &Text) {
    std::lock_guard<std::mutex> G(Lock);
    for (const std::string &L : Lines)
      if (L.find(Text) != std::string::npos)
        return true;
    return false;
  }
};

/// The handshake messages the bare client received, by kind.
struct Inbox {
  struct Message {
    unsigned Id;
    std::vector<uint8_t> Header;
  };
  std::vector<Message> Messages;
};

/// HMAC-SHA256 under the job's key of the parts, one after another, as
/// the runtime's hmacSha256 computes it (AuthTest checks RFC 4231's
/// vectors against it).
void mac(std::initializer_list<std::pair<const void *, size_t>> Parts, uint8_t Out[MacSize]) {
  std::vector<uint8_t> Bytes;
  for (auto [P, N] : Parts)
    Bytes.insert(Bytes.end(), static_cast<const uint8_t *>(P),
                 static_cast<const uint8_t *>(P) + N);
  unsigned Len = 0;
  ASSERT_NE(HMAC(EVP_sha256(), TestKey.data(), int(TestKey.size()), Bytes.data(), Bytes.size(),
                 Out, &Len),
            nullptr);
  ASSERT_EQ(Len, MacSize);
}

class GoneKey : public ::testing::Test {
protected:
  void SetUp() override {
    // The crash is UCX's on a removed System V segment: the bare client's
    // segments are System V (UCX's default allocation), and the receiver
    // unpacks System V keys only where UCX_TLS names sysv
    // (docs/runtime.md).
    setenv("UCX_TLS", "tcp,sysv,posix,cma", 1);
    unsetenv("TC_KEY");
    unsetenv("TC_KEY_FILE");
    tc_set_log_handler(
        [](tc_log_level_t, const char *Message, void *Arg) {
          auto *L = static_cast<Log *>(Arg);
          std::lock_guard<std::mutex> G(L->Lock);
          L->Lines.push_back(Message);
        },
        &Received);
  }
  void TearDown() override {
    closeClient();
    for (tc_context_t **C : {&Good, &Receiver})
      if (*C) {
        if (C == &Receiver)
          tc_executor_stop(*C);
        tc_context_destroy(*C);
        *C = nullptr;
      }
    for (tc_package_t **P : {&GoodStdlib, &Stdlib})
      if (*P)
        tc_package_unload(*P);
    tc_set_log_handler(nullptr, nullptr);
    if (HasFailure())
      for (const std::string &L : Received.Lines)
        std::cerr << "twochains (collected): " << L << "\n";
  }

  tc_context_t *context(tc_package_t *&Pkg) {
    tc_package_params_t PP = {};
    PP.version = TC_PACKAGE_PARAMS_VERSION;
    PP.roles = TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER;
    PP.prefix = TC_TEST_STDLIB_PREFIX;
    PP.name = "stdlib";
    EXPECT_EQ(tc_package_load(&PP, &Pkg), TC_OK);
    tc_context_params_t P = {};
    P.version = TC_CONTEXT_PARAMS_VERSION;
    P.slots = 16;
    P.slot_size = 1024;
    P.key = TestKey.data();
    P.key_size = uint32_t(TestKey.size());
    tc_context_t *Ctx = nullptr;
    EXPECT_EQ(tc_context_create(&P, &Ctx), TC_OK);
    if (Ctx && Pkg)
      EXPECT_EQ(tc_context_add_package(Ctx, Pkg), TC_OK);
    return Ctx;
  }

  /// The bare client: a UCX context of its own (messages and RMA), whose
  /// handlers keep what the receiver sends. Call under
  /// ASSERT_NO_FATAL_FAILURE.
  void openClient(uint16_t Port) {
    ucp_params_t P = {};
    P.field_mask = UCP_PARAM_FIELD_FEATURES;
    P.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
    ASSERT_EQ(ucp_init(&P, nullptr, &Ucp), UCS_OK);
    ucp_worker_params_t W = {};
    ASSERT_EQ(ucp_worker_create(Ucp, &W, &Worker), UCS_OK);
    for (unsigned Id : {unsigned(AmChallenge), unsigned(AmRefused), unsigned(AmWelcome)}) {
      ucp_am_handler_param_t H = {};
      H.field_mask =
          UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
          UCP_AM_HANDLER_PARAM_FIELD_ARG;
      H.id = Id;
      H.arg = &Box;
      // One handler each, which knows its id.
      H.cb = Id == AmChallenge ? &take<AmChallenge> : Id == AmRefused ? &take<AmRefused>
                                                                      : &take<AmWelcome>;
      ASSERT_EQ(ucp_worker_set_am_recv_handler(Worker, &H), UCS_OK);
    }
    ASSERT_EQ(connectLoopback(
                  Worker, Port, [](void *, ucp_ep_h, ucs_status_t) {}, // closed by the receiver
                  nullptr, &Ep),
              UCS_OK);
  }

  template <unsigned Id>
  static ucs_status_t take(void *Arg, const void *Header, size_t Size, void *, size_t,
                           const ucp_am_recv_param_t *) {
    auto *B = static_cast<Inbox *>(Arg);
    auto *Bytes = static_cast<const uint8_t *>(Header);
    B->Messages.push_back({Id, std::vector<uint8_t>(Bytes, Bytes + Size)});
    return UCS_OK;
  }

  ucs_status_t wait(ucs_status_ptr_t R) {
    if (!UCS_PTR_IS_PTR(R))
      return UCS_PTR_STATUS(R);
    ucs_status_t St;
    auto End = std::chrono::steady_clock::now() + AnswerWait;
    while ((St = ucp_request_check_status(R)) == UCS_INPROGRESS &&
           std::chrono::steady_clock::now() < End)
      ucp_worker_progress(Worker);
    if (St != UCS_INPROGRESS)
      ucp_request_free(R);
    return St;
  }

  ucs_status_t send(unsigned Id, const void *Header, size_t Size, const void *Body = nullptr,
                    size_t BodySize = 0) {
    ucp_request_param_t P = {};
    P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
    return wait(ucp_am_send_nbx(Ep, Id, Header, Size, Body, BodySize, &P));
  }

  /// The first message of kind Id (or of any of Ids), once it came.
  const Inbox::Message *await(std::initializer_list<unsigned> Ids) {
    auto End = std::chrono::steady_clock::now() + AnswerWait;
    while (std::chrono::steady_clock::now() < End) {
      ucp_worker_progress(Worker);
      for (const Inbox::Message &M : Box.Messages)
        for (unsigned Id : Ids)
          if (M.Id == Id)
            return &M;
    }
    return nullptr;
  }

  void closeClient() {
    if (Ep) {
      ucp_request_param_t C = {};
      C.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      C.flags = UCP_EP_CLOSE_FLAG_FORCE;
      wait(ucp_ep_close_nbx(Ep, &C));
      Ep = nullptr;
    }
    if (WorkerAddress)
      ucp_worker_release_address(Worker, WorkerAddress);
    WorkerAddress = nullptr;
    if (Worker)
      ucp_worker_destroy(Worker);
    Worker = nullptr;
    if (Ucp)
      ucp_cleanup(Ucp);
    Ucp = nullptr;
  }

  Log Received;
  tc_package_t *Stdlib = nullptr, *GoodStdlib = nullptr;
  tc_context_t *Receiver = nullptr, *Good = nullptr;
  ucp_context_h Ucp = nullptr;
  ucp_worker_h Worker = nullptr;
  ucp_ep_h Ep = nullptr;
  ucp_address_t *WorkerAddress = nullptr;
  Inbox Box;
};

/// A peer whose RMA offer names a segment it removed just before: refused
/// at the handshake with a status it sees, the reason logged, and a good
/// peer's frames run after it.
TEST_F(GoneKey, AReceiverLinkingLibtwochainsRefusesAKeyWhoseSegmentIsGone) {
  ASSERT_NE(Receiver = context(Stdlib), nullptr);
  ASSERT_EQ(tc_listen(Receiver, "127.0.0.1", 0), TC_OK);
  uint16_t Port = 0;
  ASSERT_EQ(tc_listen_port(Receiver, &Port), TC_OK);
  ASSERT_EQ(tc_executor_start(Receiver), TC_OK);
  ASSERT_NO_FATAL_FAILURE(openClient(Port));

  // AUTH, then the receiver's CHALLENGE.
  AuthRequest A = {AuthMagic, HandshakeVersion, {}, 0, {}};
  ASSERT_EQ(RAND_bytes(A.ClientNonce, NonceSize), 1);
  ASSERT_EQ(send(AmAuth, &A, sizeof A), UCS_OK);
  const Inbox::Message *C = await({AmChallenge});
  ASSERT_NE(C, nullptr) << "no CHALLENGE came";
  ASSERT_EQ(C->Header.size(), sizeof(AuthChallenge));
  AuthChallenge Challenge;
  std::memcpy(&Challenge, C->Header.data(), sizeof Challenge);

  // An RMA offer of a region that is gone: its keys and this client's
  // worker address, the credit line at its start, the ring after it.
  Offer O = {};
  O.Magic = HandshakeMagic;
  O.Version = HandshakeVersion;
  O.Slots = 16;
  O.SlotSize = 1024;
  O.MailboxMode = TC_MAILBOX_CODE_CACHE;
  O.Isa = hostIsa();
  O.CodeTrust = TC_CODE_TRUST_PACKAGE;
  O.Path = PathRma;
  size_t Region = (4096 + size_t(O.Slots) * slotStride(O.SlotSize) + 4095) & ~size_t(4095);
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.length = Region;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h Mem;
  ASSERT_EQ(ucp_mem_map(Ucp, &M, &Mem), UCS_OK);
  ucp_mem_attr_t Attr = {};
  Attr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  ASSERT_EQ(ucp_mem_query(Mem, &Attr), UCS_OK);
  void *Packed = nullptr;
  size_t PackedSize = 0;
  ASSERT_EQ(ucp_rkey_pack(Ucp, Mem, &Packed, &PackedSize), UCS_OK);
  std::vector<uint8_t> Key(static_cast<uint8_t *>(Packed),
                           static_cast<uint8_t *>(Packed) + PackedSize);
  ucp_rkey_buffer_release(Packed);
  ASSERT_EQ(ucp_mem_unmap(Ucp, Mem), UCS_OK); // gone before the receiver unpacks it
  size_t AddressSize = 0;
  ASSERT_EQ(ucp_worker_get_address(Worker, &WorkerAddress, &AddressSize), UCS_OK);
  O.CreditKeySize = O.RingKeySize = uint32_t(Key.size());
  O.WorkerAddressSize = uint32_t(AddressSize);
  O.CreditAddress = reinterpret_cast<uint64_t>(Attr.address);
  O.RingAddress = O.CreditAddress + 4096;
  std::vector<uint8_t> Body = Key;
  Body.insert(Body.end(), Key.begin(), Key.end());
  auto *W = reinterpret_cast<const uint8_t *>(WorkerAddress);
  Body.insert(Body.end(), W, W + AddressSize);
  static const char Label[] = "tc-auth-v1 hello";
  const auto *Fields = reinterpret_cast<const uint8_t *>(&O) + MacSize;
  ASSERT_NO_FATAL_FAILURE(mac({{Label, sizeof Label},
                               {A.ClientNonce, NonceSize},
                               {Challenge.ServerNonce, NonceSize},
                               {Fields, sizeof O - MacSize},
                               {Body.data(), Body.size()}},
                              O.Mac));
  ASSERT_EQ(send(AmHello, &O, sizeof O, Body.data(), Body.size()), UCS_OK);
  const Inbox::Message *Answer = await({AmRefused, AmWelcome});
  ASSERT_NE(Answer, nullptr) << "no answer to the HELLO";
  ASSERT_EQ(Answer->Id, unsigned(AmRefused)) << "the offer of a gone key was accepted";
  ASSERT_EQ(Answer->Header.size(), sizeof(Refusal));
  Refusal F;
  std::memcpy(&F, Answer->Header.data(), sizeof F);
  EXPECT_EQ(tc_status_t(F.Status), TC_ERR_BAD_OFFER) << tc_status_string(tc_status_t(F.Status));
  EXPECT_TRUE(Received.has("its memory keys cannot be unpacked")) << "the reason logged";
  closeClient();

  // The receiver still serves: a good peer's four frames run.
  ASSERT_NE(Good = context(GoodStdlib), nullptr);
  tc_peer_t *Peer = nullptr;
  ASSERT_EQ(tc_connect(Good, "127.0.0.1", Port, 10000, &Peer), TC_OK);
  uint32_t Sum = 0;
  ASSERT_EQ(tc_package_find(GoodStdlib, "server_side_sum", &Sum), TC_OK);
  int32_t Payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  for (int I = 0; I < 4; ++I) {
    tc_status_t St;
    while ((St = tc_send(Peer, GoodStdlib, Sum, TC_SEND_LOCAL, Payload, sizeof Payload)) ==
           TC_ERR_NO_CREDIT)
      tc_progress(Good, nullptr);
    ASSERT_EQ(St, TC_OK);
  }
  EXPECT_EQ(tc_flush(Peer, 10000), TC_OK);
  tc_stats_t S = {};
  ASSERT_EQ(tc_context_stats(Receiver, &S), TC_OK);
  EXPECT_EQ(S.frames_executed_local, 4u) << "the good peer's frames ran";
  EXPECT_EQ(S.offers_refused, 1u);
  tc_peer_close(Peer);
}

} // namespace
