//===- HostileSenderTest.cpp - A connected peer that forges what it sends -===//
//
// A sender with the key, connected as any, that then sends what its
// runtime never would: a ried push claiming 64 GiB, batches of frames
// that do not add up, a frame whose slot it keeps rewriting while the jam
// runs. The receiver must refuse each from what it can check (or, for the
// rewrite, not let the jam see it), and go on serving (docs/security.md).
// These were the end-to-end program tc-security's verbs ried, batch and
// tamper, which needed the internals; end-to-end programs use only the
// installed headers.
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "base/Clock.h"
#include "core/CoreContext.h"
#include "core/Peer.h"
#include "package/Package.h"
#include "package/PackageContext.h"
#include "package/PeerPackage.h"
#include "path/FramePath.h"
#include "send/Send.h"
#include "ucx/Request.h"
#include "wire/Frame.h"
#include "wire/Wire.h"

#include <cstddef>
#include <optional>
#include <sys/mman.h>
#include <ucp/api/ucp.h>

namespace {

using namespace twochains::rt;

const char *const TestKey = "the job's key for the hostile sender tests";

class HostileSender : public TwoContexts {
protected:
  void SetUp() override {
    TwoContexts::SetUp();
    setKey(TestKey);
    // The contexts tc-security's peers were made for.
    setSlots(16);
    setSlotSize(1024);
  }

  /// Frames of the standard package's server_side_sum, run FrameCount
  /// more times on the receiver than at Before. Call under
  /// ASSERT_NO_FATAL_FAILURE.
  void receiverRan(const tc_stats_t &Before, uint64_t FrameCount) {
    auto Ran = [&] {
      tc_stats_t S = stats(Receiver);
      return S.frames_executed_local + S.frames_executed_injected -
             Before.frames_executed_local - Before.frames_executed_injected;
    };
    ASSERT_TRUE(progressUntil([&] { return Ran() >= FrameCount; }, "the receiver ran the frames"));
    EXPECT_EQ(Ran(), FrameCount) << describe();
  }

  /// A good peer's frames after the attack: the receiver kept serving.
  void goodFramesRun(unsigned Frames) {
    tc_stats_t Before = stats(Receiver);
    ASSERT_NO_FATAL_FAILURE(sendGoodFrames(Frames));
    ASSERT_NO_FATAL_FAILURE(receiverRan(Before, Frames));
  }

  /// Pushes a ried claiming 64 GiB of address space that is never
  /// touched: the receiver must refuse it from the header alone. Answer:
  /// what it told the pusher (TC_ERR_TIMED_OUT: nothing). Call under
  /// ASSERT_NO_FATAL_FAILURE.
  void pushHugeRied(tc_status_t &Answer) {
    auto *Ctx = coreOf(Sender.Ctx);
    const uint64_t Claim = 64ull << 30;
    void *Huge =
        mmap(nullptr, Claim, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(Huge, MAP_FAILED) << "cannot reserve 64 GiB of address space";
    RiedHeader H = {RiedMagic, 8, Claim - 8};
    // A push in flight, as tc_ried_push marks it: only then is its answer
    // taken.
    Peer->Package->PushingRied = true;
    ucp_request_param_t P = {};
    P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    P.flags = UCP_AM_SEND_FLAG_REPLY;
    ucs_status_ptr_t Request = ucp_am_send_nbx(Peer->Ep, AmRied, &H, sizeof H, Huge, Claim, &P);
    Answer = TC_ERR_TIMED_OUT;
    for (uint64_t End = nowNs() + uint64_t(WaitMs) * 1'000'000;
         nowNs() < End && Answer == TC_ERR_TIMED_OUT;) {
      ucp_worker_progress(Ctx->Worker);
      for (size_t I = 0; I < Ctx->Package->RiedAcks.size(); ++I)
        if (Ctx->Package->RiedAcks[I].From == Peer->Ep) {
          Answer = Ctx->Package->RiedAcks[I].Status;
          Ctx->Package->RiedAcks.erase(Ctx->Package->RiedAcks.begin() + I);
          break;
        }
    }
    Peer->Package->PushingRied = false;
    if (UCS_PTR_IS_PTR(Request)) {
      ucp_request_cancel(Ctx->Worker, Request);
      waitRequestUntil(Ctx->Worker, Request, nowNs() + NsPerS);
    }
    munmap(Huge, Claim);
  }
  /// The security package's reread jam in one frame: it reads its
  /// payload's first word, waits in its probe ried until the word changes
  /// or the test says it rewrote it, and reads it again. Once the jam waits,
  /// the slot is rewritten (sealed, the checksum right) with another word,
  /// and once that has landed the jam is told: nothing waits for a span of
  /// time (a fixed span once ended before a loaded receiver ran the jam).
  /// Runs and Changed: what the probe counted. Skips without an RMA path to
  /// rewrite the slot through. Call under ASSERT_NO_FATAL_FAILURE, and
  /// return if IsSkipped().
  void tamper(uint64_t &Runs, uint64_t &Changed) {
    ASSERT_NO_FATAL_FAILURE(createContexts());
    tc_package_t *Pkg = loadPackage(TC_TEST_SECURITY_PREFIX, "unitsecurity",
                                    TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
    ASSERT_NE(Pkg, nullptr);
    ASSERT_EQ(tc_context_add_package(Receiver.Ctx, Pkg), TC_OK);
    ASSERT_EQ(tc_context_add_package(Sender.Ctx, Pkg), TC_OK);
    ASSERT_EQ(connect(), TC_OK) << describe();
    if (Peer->Path != PathRma)
      GTEST_SKIP() << "no RMA path to rewrite a slot through";
    uint64_t *ProbeRuns = receiverSymbol<uint64_t>("probe_runs", Pkg);
    uint64_t *ProbeChanged = receiverSymbol<uint64_t>("probe_changed", Pkg);
    uint64_t *Waiting = receiverSymbol<uint64_t>("probe_waiting", Pkg);
    uint64_t *Stop = receiverSymbol<uint64_t>("probe_stop", Pkg);
    ASSERT_TRUE(ProbeRuns && ProbeChanged && Waiting && Stop);
    auto Load = [](const uint64_t *P) { return __atomic_load_n(P, __ATOMIC_SEQ_CST); };
    __atomic_store_n(Stop, 0, __ATOMIC_SEQ_CST);
    const uint64_t RunsBefore = Load(ProbeRuns), ChangedBefore = Load(ProbeChanged);
    const uint64_t WaitingBefore = Load(Waiting);
    const uint32_t Reread = element(Pkg, "reread");
    uint64_t Seq;
    uint32_t Slot;
    ASSERT_EQ(Peer->Tx->Send->reserve(&Seq, &Slot), TC_OK);
    auto Put = [&](uint64_t Word) {
      FrameSpec S;
      S.Kind = FrameLocal;
      S.Package = Pkg->Tag;
      S.Element = Reread;
      uint64_t Payload[4] = {Word, 0, 0, 0}; // two lines: payload off the header
      S.Payload = Payload;
      S.PayloadSize = sizeof Payload;
      S.Sequence = Seq;
      size_t Size = 0;
      encodeFrame(Peer->Sending->Staging.data(), Peer->Tx->SlotSize, S, &Size);
      return deliverFrame(Peer, Peer->Sending->Staging.data(), Size, Seq, Slot);
    };
    ASSERT_EQ(Put(0x1111), TC_OK);
    ASSERT_TRUE(progressUntil([&] { return Load(Waiting) > WaitingBefore; },
                              "the jam read its word and waits"));
    ASSERT_EQ(Put(0x2222), TC_OK);
    ucp_request_param_t P = {};
    ASSERT_EQ(waitRequest(frameWorker(Peer), ucp_worker_flush_nbx(frameWorker(Peer), &P)),
              UCS_OK)
        << "the rewrite did not land";
    __atomic_store_n(Stop, 1, __ATOMIC_SEQ_CST);
    const volatile uint64_t *Finished = &Peer->Tx->CreditWord[CreditWordFinished];
    ASSERT_TRUE(progressUntil([&] { return *Finished > Seq; }, "the receiver credited the frame"));
    ASSERT_EQ(flush(), TC_OK) << describe();
    Runs = Load(ProbeRuns) - RunsBefore;
    Changed = Load(ProbeChanged) - ChangedBefore;
  }
};

/// A push claiming 64 GiB to a receiver that takes no rieds: refused, and
/// the pusher told so (TC_ERR_REFUSED).
TEST_F(HostileSender, AHugeRiedIsRefusedWhereRiedsAreOff) {
  ASSERT_NO_FATAL_FAILURE(start());
  tc_status_t Answer;
  ASSERT_NO_FATAL_FAILURE(pushHugeRied(Answer));
  EXPECT_EQ(Answer, TC_ERR_REFUSED) << tc_status_string(Answer);
  EXPECT_TRUE(logged("does not accept rieds")) << "refused: pushes are off";
  ASSERT_NO_FATAL_FAILURE(goodFramesRun(4));
}

/// The same to a receiver that takes rieds: refused from its header, over
/// the size limit (TC_ERR_INVALID_PARAM), nothing allocated.
TEST_F(HostileSender, AHugeRiedIsRefusedFromItsHeader) {
  Receiver.Params.flags = TC_CONTEXT_ACCEPT_RIEDS;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_status_t Answer;
  ASSERT_NO_FATAL_FAILURE(pushHugeRied(Answer));
  EXPECT_EQ(Answer, TC_ERR_INVALID_PARAM) << tc_status_string(Answer);
  EXPECT_TRUE(logged("(at most 67108864 and 256)")) << "refused: over the size limit";
  ASSERT_NO_FATAL_FAILURE(goodFramesRun(4));
}

/// Batches of frames (FrameBatchMessage) a corked sender would never
/// send, over messages (UCX_TLS=tcp): each refused whole, the receiver's
/// memory unchanged; then four corked frames leave as one batch and run
/// once each.
TEST_F(HostileSender, BrokenBatchesAreRefusedWholeAndCorkedFramesStillRun) {
  ScopedEnv Tcp("UCX_TLS", "tcp");
  ASSERT_NO_FATAL_FAILURE(start());
  if (Peer->Path != PathAm)
    GTEST_SKIP() << "frames travel by RMA here, even over TCP";
  std::vector<uint8_t> Canary(4096, 0xc5); // heap memory no peer may reach
  auto *Ctx = coreOf(Sender.Ctx);
  const uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  int32_t Payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  auto Frames = [&](uint64_t First, unsigned Count) {
    std::vector<uint8_t> Bytes;
    for (unsigned I = 0; I < Count; ++I) {
      std::vector<uint8_t> F(Peer->Tx->SlotSize);
      FrameSpec S;
      S.Kind = FrameLocal;
      S.Package = Sender.Stdlib->Tag;
      S.Element = Sum;
      S.Payload = Payload;
      S.PayloadSize = sizeof Payload;
      S.Sequence = First + I;
      size_t Size = 0;
      EXPECT_EQ(encodeFrame(F.data(), F.size(), S, &Size), TC_OK);
      Bytes.insert(Bytes.end(), F.begin(), F.begin() + Size);
    }
    return Bytes;
  };
  auto Send = [&](FrameBatchMessage M, const std::vector<uint8_t> &Bytes) {
    ucp_request_param_t P = {};
    P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
    return waitRequest(Ctx->Worker, ucp_am_send_nbx(Peer->Ep, AmFrame, &M, sizeof M,
                                                    Bytes.data(), Bytes.size(), &P));
  };
  tc_stats_t Before = stats(Receiver);
  const uint32_t Slots = Peer->Tx->Slots;
  std::vector<uint8_t> Stretched = Frames(0, 2);
  uint16_t Lines = uint16_t(Peer->Tx->SlotSize / FrameLine + 1); // more than a slot
  std::memcpy(Stretched.data() + offsetof(FrameHeader, Lines), &Lines, sizeof Lines);
  EXPECT_EQ(Send({0, 2, 0}, Frames(0, 3)), UCS_OK) << "fewer frames than bytes";
  EXPECT_EQ(Send({0, Slots + 1, 0}, Frames(0, 3)), UCS_OK) << "more than the window";
  EXPECT_EQ(Send({0, 2, 0}, Stretched), UCS_OK) << "a frame longer than a slot";
  EXPECT_EQ(Send({Slots - 1, 2, 0}, Frames(Slots - 1, 2)), UCS_OK) << "past the window";
  EXPECT_EQ(Send({0, 2, 7}, Frames(0, 2)), UCS_OK) << "reserved bits";
  ASSERT_TRUE(progressUntil(
      [&] { return stats(Receiver).messages_refused - Before.messages_refused >= 5; },
      "the receiver refused the five batches"));

  const uint64_t Coalesced = stats(Sender).frames_coalesced;
  ASSERT_EQ(tc_peer_cork(Peer, 1), TC_OK);
  for (unsigned I = 0; I < 4; ++I)
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, Payload, sizeof Payload), TC_OK);
  EXPECT_EQ(stats(Sender).frames_coalesced - Coalesced, 0u) << "corked frames waited";
  ASSERT_EQ(flush(), TC_OK) << describe();
  EXPECT_EQ(stats(Sender).frames_coalesced - Coalesced, 4u) << "and left as one batch";
  ASSERT_NO_FATAL_FAILURE(receiverRan(Before, 4));

  tc_stats_t S = stats(Receiver);
  EXPECT_EQ(S.messages_refused - Before.messages_refused, 5u) << "each broken batch refused";
  EXPECT_EQ(S.auth_failures - Before.auth_failures, 0u);
  EXPECT_EQ(S.offers_refused - Before.offers_refused, 0u);
  EXPECT_GE(loggedMatching("refused a message from .*: a batch of 2 frames in"), 1u)
      << "a broken batch refused, logged";
  EXPECT_TRUE(std::all_of(Canary.begin(), Canary.end(), [](uint8_t B) { return B == 0xc5; }))
      << "receiver memory changed";
}

/// A peer rewriting its slot while the jam runs changes nothing the jam
/// reads: under the package policy the jam reads a copy, taken before.
TEST_F(HostileSender, ARewriteWhileTheJamRunsChangesNothingItReads) {
  uint64_t Runs = 0, Changed = 0;
  ASSERT_NO_FATAL_FAILURE(tamper(Runs, Changed));
  if (IsSkipped())
    return;
  EXPECT_EQ(Runs, 1u);
  EXPECT_EQ(Changed, 0u) << "the jam saw its payload change";
}

/// Under TC_CODE_TRUST=job the jam reads its payload in the ring, no copy
/// (docs/security.md, "Code trust"): the same rewrite shows.
TEST_F(HostileSender, UnderTheJobPolicyTheJamReadsItsPayloadInTheRing) {
  Receiver.Params.code_trust = TC_CODE_TRUST_JOB;
  uint64_t Runs = 0, Changed = 0;
  ASSERT_NO_FATAL_FAILURE(tamper(Runs, Changed));
  if (IsSkipped())
    return;
  EXPECT_EQ(Runs, 1u);
  EXPECT_EQ(Changed, 1u) << "under the job policy the jam read a copy, not its payload in the ring";
}

} // namespace
