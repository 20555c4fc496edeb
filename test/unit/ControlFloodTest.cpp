//===- ControlFloodTest.cpp - Every control message kind, by the thousand --===//
//
// Issue 41, item 1: whatever a peer that holds the key sends, the
// receiver's memory stays bounded. Before, a peer sending DEPLOY offers
// the default policy refuses made the receiver keep a copy of every answer
// until the connection closed (22 -> 646 MB in 40 s). Here the welcomed
// sender floods the receiver with each control message kind in turn, a
// thousand messages of 8 KiB each (8 MiB), with a header of that kind's
// magic or of garbage; the heap the process holds afterwards may not have
// grown by more than a stated bound, 1 MiB: an eighth of what was sent,
// well under one kept copy per message.
//
// The heap is malloc's count of bytes in use (mallinfo2: small blocks and
// mapped ones), not the resident size, which keeps what malloc freed; both
// contexts are in this process, so the bound holds for the two together.
//
//===----------------------------------------------------------------------===//
#include "RawMessage.h"
#include "TwoContexts.h"

#include "context/Context.h"
#include "wire/Deploy.h"
#include "wire/Wire.h"

#include <malloc.h>
#include <tuple>
#include <ucp/api/ucp.h>

namespace {

using namespace twochains::rt;

/// The magic a message of kind Id starts with (0 where it has none).
uint32_t magicOf(unsigned Id) {
  switch (Id) {
  case AmHello:
  case AmWelcome:
    return HandshakeMagic;
  case AmRied:
    return RiedMagic;
  case AmRiedAck:
    return RiedAckMagic;
  case AmAuth:
    return AuthMagic;
  case AmChallenge:
    return ChallengeMagic;
  case AmRefused:
    return RefusalMagic;
  case AmCode:
    return CodeMagic;
  case AmCodeAck:
    return CodeAckMagic;
  case AmReply:
    return ReplyMagic;
  case AmQuiesce:
    return QuiesceMagic;
  case AmReady:
    return ReadyMagic;
  case AmDeploy:
    return DeployOfferMagic;
  case AmDeployAck:
    return DeployNeedMagic;
  case AmPayload:
    return PayloadMagic;
  default:
    return 0;
  }
}

size_t heapInUse() {
  struct mallinfo2 M = mallinfo2();
  return M.uordblks + M.hblkhd;
}

class ControlFlood : public TwoContexts,
                     public ::testing::WithParamInterface<std::tuple<unsigned, bool>> {};

TEST_P(ControlFlood, LeavesTheReceiversHeapBounded) {
  const auto [Id, Garbage] = GetParam();
  constexpr unsigned Messages = 1000;
  constexpr size_t BodySize = 8192, Bound = 1 << 20;
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  std::vector<uint8_t> Body(BodySize, 0xa5);
  // The kind's first word is its magic (or garbage); the rest, garbage.
  std::array<uint32_t, 16> Header;
  Header.fill(0x5a5a5a5a);
  Header[0] = Garbage ? 0xdeadbeef : magicOf(Id);
  Header[1] = 1;
  auto Turn = [&] {
    for (int T = 0; T < 4; ++T)
      tc_progress(Receiver.Ctx, nullptr), tc_progress(Sender.Ctx, nullptr);
  };
  Turn();
  const size_t Before = heapInUse();
  size_t Most = 0;
  unsigned Sent = 0;
  for (; Sent < Messages; ++Sent) {
    ucp_request_param_t P = {};
    P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
    ucs_status_ptr_t R =
        ucp_am_send_nbx(Peer->Ep, Id, Header.data(), sizeof Header, Body.data(), BodySize, &P);
    if (UCS_PTR_IS_ERR(R))
      break; // the receiver cut the peer off: the flood is over
    while (R && ucp_request_check_status(R) == UCS_INPROGRESS)
      Turn();
    if (R)
      ucp_request_free(R);
    if (Sent % 32 == 31) {
      Turn();
      Most = std::max(Most, heapInUse());
    }
  }
  // Then a wake, which a welcomed peer may send and the receiver counts:
  // messages on one endpoint are taken in order, so once it is counted the
  // receiver has taken the whole flood (unless it ended the peer first).
  const uint64_t WakesBefore = stats(Receiver).wakes_received;
  ASSERT_NO_FATAL_FAILURE(sendRawMessage(Peer, AmWake, nullptr, 0));
  ASSERT_TRUE(progressUntil(
      [&] {
        Turn();
        tc_peer_t *Still = nullptr;
        return stats(Receiver).wakes_received > WakesBefore ||
               tc_context_peer(Receiver.Ctx, 1, &Still) != TC_OK;
      },
      "the receiver took the flood and the wake after it", 60000))
      << describe();
  const uint64_t Taken = stats(Receiver).messages_refused + stats(Receiver).deployments_refused;
  const size_t After = heapInUse();
  Most = std::max(Most, After);
  std::printf("flood of kind %#x: %u messages sent, %llu refused; heap %+lld bytes after, "
              "%+lld at most\n",
              Id, Sent, (unsigned long long)Taken,
              (long long)(After - Before), (long long)(Most - Before));
  EXPECT_LE(After, Before + Bound) << Sent << " messages of kind " << std::hex << Id
                                   << " sent; the heap grew by " << std::dec
                                   << (After - Before) << " bytes\n"
                                   << describe();
  EXPECT_LE(Most, Before + 2 * Bound) << "while the flood went on\n" << describe();
  // Nothing of it ran, and the receiver still serves a good peer.
  EXPECT_EQ(stats(Receiver).frames_executed_local + stats(Receiver).frames_executed_injected, 0u);
  Side *Good = createExtraSide("good");
  ASSERT_NE(Good, nullptr);
  tc_peer_t *GoodPeer = nullptr;
  ASSERT_EQ(whileReceiverRuns([&] {
              return tc_connect(Good->Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &GoodPeer);
            }),
            TC_OK)
      << describe();
  tc_peer_close(GoodPeer);
}

std::vector<std::tuple<unsigned, bool>> everyKind() {
  std::vector<std::tuple<unsigned, bool>> Kinds;
  for (unsigned Id = TC_AM_ID_FIRST; Id <= TC_AM_ID_LAST; ++Id)
    for (bool Garbage : {false, true})
      Kinds.emplace_back(Id, Garbage);
  return Kinds;
}

INSTANTIATE_TEST_SUITE_P(TwoContexts, ControlFlood, ::testing::ValuesIn(everyKind()),
                         [](const auto &Info) {
                           char Name[32];
                           std::snprintf(Name, sizeof Name, "Kind%04x%s", std::get<0>(Info.param),
                                         std::get<1>(Info.param) ? "Garbage" : "Magic");
                           return std::string(Name);
                         });

} // namespace
