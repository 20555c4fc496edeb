//===- PayloadAheadTest.cpp - Payloads larger than a slot -----------------===//
//
// A receiver with 256-byte slots and a sender with payloads of KiBs: the
// payloads go ahead of their frames (send/PayloadAhead.h) and the frames
// run on them, in every mode; a sender keeps within the receiver's share;
// and what a peer sends ahead that it may not is refused, never held, and
// a frame whose payload never comes is refused rather than run.
//
//===----------------------------------------------------------------------===//
#include "BareClient.h"
#include "TwoContexts.h"

#include "context/Context.h"
#include "core/Peer.h"
#include "package/Package.h"
#include "path/FramePath.h"
#include "receive/ReceiveContext.h"
#include "send/PeerSend.h"
#include "wire/Frame.h"
#include "wire/Ring.h"
#include "wire/Wire.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using namespace twochains::rt;

/// A 4000-byte payload against 512-byte slots runs, Local, Injected and
/// Injected with its code, and answers a call with all of its bytes.
TEST_F(TwoContexts, PayloadLargerThanASlotGoesAheadInEveryMode) {
  Drive = Driver::Executor;
  // The jam's image (192 bytes) fits a slot beside what names the payload.
  Receiver.Params.slot_size = 512;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  auto Large = sumPayload(1000, 7);
  int64_t Before = readTotal(Total);
  for (tc_send_mode_t Mode : {TC_SEND_LOCAL, TC_SEND_INJECTED, TC_SEND_INJECTED_FULL})
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, Mode, Large.data(), Large.size() * 4), TC_OK)
        << "mode " << Mode;
  ASSERT_EQ(flush(), TC_OK);
  EXPECT_EQ(readTotal(Total) - Before, 3 * sumOf(Large)) << "each frame summed all 4000 bytes";
  EXPECT_EQ(stats(Sender).payloads_ahead_sent, 3u);
  EXPECT_EQ(stats(Sender).payload_ahead_bytes_sent, 3 * Large.size() * 4);
  EXPECT_EQ(stats(Receiver).payloads_ahead_received, 3u);
  EXPECT_EQ(stats(Receiver).payloads_ahead_refused, 0u);
  EXPECT_EQ(stats(Receiver).frames_rejected, 0u);

  std::vector<uint8_t> Question(6000), Answer(6000);
  for (size_t I = 0; I < Question.size(); ++I)
    Question[I] = uint8_t(I * 7 + 3);
  size_t Size = 0;
  ASSERT_EQ(whileReceiverRuns([&] {
              return tc_call(Peer, Sender.Calls, element(Sender.Calls, "echo"), TC_SEND_LOCAL,
                             Question.data(), Question.size(), Answer.data(), Answer.size(),
                             &Size, WaitMs);
            }),
            TC_OK);
  ASSERT_EQ(Size, Question.size());
  EXPECT_EQ(Answer, Question);
}

/// A payload larger than the receiver's share (payload_ahead_bytes) can
/// never go: TC_ERR_TOO_LARGE at once, nothing sent, and the log says why.
TEST_F(TwoContexts, PayloadPastTheReceiversShareIsTooLarge) {
  Drive = Driver::Executor;
  Receiver.Params.slot_size = 256;
  Receiver.Params.payload_ahead_bytes = 2048;
  ASSERT_NO_FATAL_FAILURE(start());
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  auto Fits = sumPayload(512, 1), TooLarge = sumPayload(513, 1);
  EXPECT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, TooLarge.data(), TooLarge.size() * 4),
            TC_ERR_TOO_LARGE);
  EXPECT_EQ(stats(Sender).payloads_ahead_sent, 0u);
  EXPECT_EQ(stats(Sender).frames_sent, 0u);
  EXPECT_TRUE(logged("it takes payloads of at most 2048 bytes ahead of their frames"));
  EXPECT_EQ(sendRetrying(Sender.Stdlib, Sum, TC_SEND_LOCAL, Fits.data(), Fits.size() * 4), TC_OK);
  EXPECT_EQ(flush(), TC_OK);
  EXPECT_EQ(stats(Receiver).payloads_ahead_received, 1u);
}

/// A sender keeps within the receiver's share: with two payloads' worth
/// uncredited it waits (TC_ERR_NO_CREDIT, as for a full ring), and goes on
/// once the receiver has run their frames. (Payloads this small leave by
/// UCX's eager protocol, whose sends complete at once: a rendezvous, one
/// at a time per peer, would wait for the receiver, which this test holds.)
TEST_F(TwoContexts, SenderWaitsForTheReceiversShare) {
  Drive = Driver::TestThread;
  Receiver.Params.slot_size = 256;
  Receiver.Params.payload_ahead_bytes = 2048;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  auto Large = sumPayload(250, 11);
  int64_t Before = readTotal(Total);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, Large.data(), 1000), TC_OK);
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, Large.data(), 1000), TC_OK);
  EXPECT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, Large.data(), 1000),
            TC_ERR_NO_CREDIT)
      << "2000 of the receiver's 2048 bytes are in flight";
  ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, TC_SEND_LOCAL, Large.data(), 1000), TC_OK);
  ASSERT_TRUE(progressUntil([&] { return readTotal(Total) - Before == 3 * sumOf(Large); },
                            "the receiver ran all three frames"));
  EXPECT_EQ(stats(Receiver).payloads_ahead_refused, 0u);
}

/// Sends a PAYLOAD message as a peer could, whatever it says, on its
/// control endpoint or its RMA endpoint (ByRma: the receiver's context,
/// which must turn while the send waits for it to fetch the bytes).
void forgePayload(tc_peer_t *From, uint64_t Sequence, uint32_t Says, size_t Carries,
                  tc_context_t *ByRma = nullptr) {
  PayloadHeader H = {PayloadMagic, Says, Sequence};
  std::vector<uint8_t> Bytes(Carries, 0x5a);
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY; // H and Bytes outlive the send: it is waited for
  ucs_status_ptr_t R = ucp_am_send_nbx(ByRma ? From->DataEp : From->Ep, AmPayload, &H, sizeof H,
                                       Bytes.data(), Bytes.size(), &P);
  ASSERT_FALSE(UCS_PTR_IS_ERR(R));
  while (R && ucp_request_check_status(R) == UCS_INPROGRESS) {
    ucp_worker_progress(ByRma ? From->Ctx->DataWorker : From->Ctx->Worker);
    if (ByRma)
      tc_progress(ByRma, nullptr);
  }
  if (R)
    ucp_request_free(R);
}

/// What a peer with the key may send ahead but must not: a payload for a
/// frame outside its window, one for a sequence twice, one past its share,
/// one whose size is not what it carries. Each is refused before its bytes
/// are taken (counted), none is held, and the ring still works.
TEST_F(TwoContexts, PayloadsAPeerMayNotSendAreRefused) {
  Drive = Driver::TestThread;
  Receiver.Params.slot_size = 256;
  Receiver.Params.payload_ahead_bytes = 4096;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *R = reinterpret_cast<tc_context *>(Receiver.Ctx);
  uint64_t Next = Peer->Tx->Send->next();
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 1000, 1024, 1024)); // outside its window
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 5, 3000, 3000));    // fits: held
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 6, 2000, 2000));    // past its share
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 7, 2048, 1024));    // says more than it carries
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 5, 1000, 1000));    // that sequence again
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 8, 8192, 8192));    // larger than any
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).payloads_ahead_refused == 5; },
                            "the receiver refused five payloads"));
  ASSERT_TRUE(progressUntil([&] { return R->Receive->PayloadAheadHeld == 3000; },
                            "the receiver held the one that fits, alone"));
  EXPECT_TRUE(logged("this side takes at most 4096"));
  EXPECT_TRUE(logged("which is not a frame it may send now"));
  EXPECT_TRUE(logged("its share is 4096"));
  EXPECT_TRUE(logged("it says 2048 bytes, carries 1024"));
}

/// Over shared memory the payloads go on the RMA endpoints (shared memory
/// and CMA), not the control endpoint's TCP: sizes from just past a slot
/// to 1 MiB (UCX's rendezvous), run in order on the right bytes, by a
/// receiver whose executor sleeps between them.
TEST_F(TwoContexts, PayloadsGoAheadOnTheRmaEndpoint) {
  Drive = Driver::Executor;
  Receiver.Params.slot_size = 512;
  ASSERT_NO_FATAL_FAILURE(start());
  if (stats(Sender).peers_rma != 1)
    GTEST_SKIP() << "no RMA path between the two contexts";
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  int64_t Before = readTotal(Total), Expected = 0;
  unsigned Sent = 0;
  for (size_t Ints : {200u, 1000u, 16384u, 262144u}) {
    auto Large = sumPayload(Ints, uint32_t(Ints % 97));
    for (tc_send_mode_t Mode : {TC_SEND_LOCAL, TC_SEND_INJECTED}) {
      ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, Mode, Large.data(), Large.size() * 4), TC_OK)
          << Ints * 4 << " bytes, mode " << Mode;
      Expected += sumOf(Large);
      ++Sent;
    }
  }
  ASSERT_EQ(flush(), TC_OK);
  EXPECT_EQ(readTotal(Total) - Before, Expected) << "each frame summed all of its payload";
  EXPECT_EQ(stats(Sender).payloads_ahead_sent, Sent);
  EXPECT_EQ(stats(Sender).payloads_ahead_by_rma, Sent) << "a payload went on the control endpoint";
  EXPECT_EQ(stats(Receiver).payloads_ahead_received, Sent);
  EXPECT_EQ(stats(Receiver).payloads_ahead_refused, 0u);
}

/// Two contexts, driven by the test's thread, whose receiver has 512-byte
/// slots: a 1 MiB payload of server_side_sum (UCX's rendezvous) goes
/// ahead of its frame on the RMA endpoint, sent with TC_SEND_NO_COPY.
class NoCopyPayload : public TwoContexts {
protected:
  int64_t *Total = nullptr;
  int64_t Before = 0;
  std::vector<int32_t> Large;

  /// Skips the test where the two contexts have no RMA path.
  void startOnRma(int32_t First) {
    Drive = Driver::TestThread;
    Receiver.Params.slot_size = 512;
    ASSERT_NO_FATAL_FAILURE(start());
    if (stats(Sender).peers_rma != 1)
      GTEST_SKIP() << "no RMA path between the two contexts";
    Total = receiverSymbol<int64_t>("tc_stdlib_total");
    ASSERT_NE(Total, nullptr);
    Large = sumPayload(262144, First);
    Before = readTotal(Total);
  }
  tc_status_t sendLarge() {
    return tc_send(Peer, Sender.Stdlib, element(Sender.Stdlib, "server_side_sum"),
                   tc_send_mode_t(TC_SEND_LOCAL | TC_SEND_NO_COPY), Large.data(), Large.size() * 4);
  }
  int64_t summed() { return readTotal(Total) - Before; }
};

/// TC_SEND_NO_COPY: a payload sent ahead leaves from the caller's buffer,
/// not a copy. Written over after tc_send returned and before the
/// receiver fetched it, the frame sums what the buffer holds then.
TEST_F(NoCopyPayload, LeavesFromTheCallersBuffer) {
  ASSERT_NO_FATAL_FAILURE(startOnRma(5));
  if (IsSkipped())
    return;
  ASSERT_EQ(sendLarge(), TC_OK);
  for (int32_t &V : Large)
    V += 3;
  ASSERT_EQ(flush(), TC_OK);
  EXPECT_EQ(summed(), sumOf(Large)) << "the frame summed the bytes of a copy made at tc_send";
  EXPECT_EQ(stats(Sender).payloads_ahead_by_rma, 1u);
}

/// A frame whose payload left from the caller's buffer is not counted
/// finished while UCX may still read the buffer: the receiver has run it
/// and said so in the sender's credit line, but the sender has not taken
/// UCX's word that the rendezvous ended. Nor is a flush done then.
TEST_F(NoCopyPayload, IsFinishedOnlyOnceItsBufferIsFree) {
  ASSERT_NO_FATAL_FAILURE(startOnRma(9));
  if (IsSkipped())
    return;
  tc_peer_frames_t F = {};
  ASSERT_EQ(tc_peer_frames(Peer, &F), TC_OK);
  uint64_t Sent = F.sent;
  ASSERT_EQ(sendLarge(), TC_OK);
  // Both sides turn until the receiver has the bytes (its turn that took
  // the last of them told UCX's sender side so, which has not turned
  // since); then the receiver alone runs the frame and reports it
  // finished into the sender's credit line.
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(WaitMs);
  while (stats(Receiver).payloads_ahead_received == 0 &&
         std::chrono::steady_clock::now() < Deadline) {
    tc_progress(Sender.Ctx, nullptr);
    tc_progress(Receiver.Ctx, nullptr);
  }
  ASSERT_EQ(stats(Receiver).payloads_ahead_received, 1u);
  volatile uint64_t *Credit = Peer->Tx->CreditWord;
  ASSERT_NE(Credit, nullptr);
  while (Credit[CreditWordFinished] < Sent + 1 && std::chrono::steady_clock::now() < Deadline)
    tc_progress(Receiver.Ctx, nullptr);
  ASSERT_GE(Credit[CreditWordFinished], Sent + 1) << "the receiver never reported the frame";
  EXPECT_EQ(summed(), sumOf(Large));
  ASSERT_EQ(tc_peer_frames(Peer, &F), TC_OK);
  EXPECT_EQ(F.sent, Sent + 1);
  EXPECT_EQ(F.finished, Sent) << "counted finished before UCX ended its reads of the buffer";
  // The sender's turn takes UCX's completion: now it is.
  ASSERT_TRUE(
      progressUntil([&] { return tc_peer_frames(Peer, &F) == TC_OK && F.finished == Sent + 1; },
                    "the frame is counted finished"));
  ASSERT_EQ(flush(), TC_OK);
}

/// A sender whose flush waits for its payload's rendezvous on the RMA
/// worker sleeps until that worker's event wakes it (the rendezvous's
/// answer), not in naps of 1 ms: the receiver fetches only after 100 ms,
/// in which a napping flush would sleep a hundred times.
TEST_F(NoCopyPayload, AFlushWaitingForItSleepsUntilTheRmaWorkerWakesIt) {
  ASSERT_NO_FATAL_FAILURE(startOnRma(11));
  if (IsSkipped())
    return;
  ASSERT_EQ(sendLarge(), TC_OK);
  uint64_t Sleeps = stats(Sender).sleeps;
  std::atomic<bool> Stop{false};
  std::thread Late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    while (!Stop.load(std::memory_order_relaxed))
      tc_progress(Receiver.Ctx, nullptr);
  });
  tc_status_t St = tc_flush(Peer, WaitMs);
  Stop = true;
  Late.join();
  ASSERT_EQ(St, TC_OK);
  EXPECT_EQ(summed(), sumOf(Large));
  EXPECT_LT(stats(Sender).sleeps - Sleeps, 20u)
      << "the flush napped while its payload waited on the RMA worker";
}

/// What a peer may not send ahead is refused on the RMA worker as on the
/// control one (the same checks), and a payload there from an endpoint
/// that is no peer's is refused before any byte is taken.
TEST_F(TwoContexts, PayloadsAPeerMayNotSendAreRefusedOnTheRmaWorker) {
  Drive = Driver::TestThread;
  Receiver.Params.slot_size = 256;
  Receiver.Params.payload_ahead_bytes = 4096;
  ASSERT_NO_FATAL_FAILURE(start());
  if (!Peer->Sending->PayloadsByRma)
    GTEST_SKIP() << "payloads do not go on the RMA endpoint here";
  auto *R = reinterpret_cast<tc_context *>(Receiver.Ctx);
  uint64_t Next = Peer->Tx->Send->next();
  ASSERT_NO_FATAL_FAILURE(
      forgePayload(Peer, Next + 1000, 1024, 1024, Receiver.Ctx)); // outside its window
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 5, 3000, 3000, Receiver.Ctx)); // fits: held
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 6, 2000, 2000, Receiver.Ctx)); // past its share
  ASSERT_NO_FATAL_FAILURE(
      forgePayload(Peer, Next + 5, 1000, 1000, Receiver.Ctx)); // that sequence again
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).payloads_ahead_refused == 3; },
                            "the receiver refused three payloads"));
  ASSERT_TRUE(progressUntil([&] { return R->Receive->PayloadAheadHeld == 3000; },
                            "the receiver held the one that fits, alone"));
  EXPECT_TRUE(logged("which is not a frame it may send now"));
  EXPECT_TRUE(logged("its share is 4096"));

  // A stranger with the receiver's RMA worker address (no handshake).
  BareClient Stranger;
  ASSERT_NO_FATAL_FAILURE(Stranger.connectToWorker(R->WorkerAddress));
  uint64_t Refused = stats(Receiver).messages_refused;
  PayloadHeader H = {PayloadMagic, 512, Next + 1};
  ASSERT_NO_FATAL_FAILURE(
      Stranger.sendWithBody(0, AmPayload, &H, sizeof H, std::vector<uint8_t>(512, 0x5a)));
  EXPECT_TRUE(progressUntil(
      [&] {
        Stranger.progress();
        return stats(Receiver).messages_refused > Refused;
      },
      "the receiver refused the stranger's payload"));
  EXPECT_EQ(R->Receive->PayloadAheadHeld, 3000u) << "the stranger's bytes were held";
  EXPECT_TRUE(logged("a payload from an endpoint that is no welcomed peer"));
  while (!Stranger.idle())
    Stranger.progress(), tc_progress(Receiver.Ctx, nullptr);
}

/// A peer that sends payloads ahead and never their frames holds its share
/// only for a rendezvous timeout without progress: it is then cut off and
/// its bytes given back, so another connection's payload goes through.
TEST_F(TwoContexts, APeerHoldingPayloadsWithoutTheirFramesIsCutOff) {
  Drive = Driver::TestThread;
  Receiver.Params.slot_size = 256;
  Receiver.Params.payload_ahead_bytes = 4096;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *R = reinterpret_cast<tc_context *>(Receiver.Ctx);
  R->Control->BodyTimeoutNs = 300'000'000;
  uint64_t Next = Peer->Tx->Send->next();
  ASSERT_NO_FATAL_FAILURE(forgePayload(Peer, Next + 1, 3000, 3000)); // its frame never comes
  ASSERT_TRUE(progressUntil([&] { return R->Receive->PayloadAheadHeld == 3000; },
                            "the receiver held the payload"));
  ASSERT_TRUE(progressUntil([&] { return R->Receive->PayloadAheadHeld == 0; },
                            "the receiver gave the held bytes back"))
      << describe();
  EXPECT_EQ(stats(Receiver).rendezvous_cancelled, 1u) << "the holder was cut off";
  EXPECT_TRUE(logged("without sending their frames"));
  // Another connection's payload larger than a slot runs.
  tc_peer_t *Again = nullptr;
  ASSERT_EQ(whileReceiverRuns([&] {
              return tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Again);
            }),
            TC_OK);
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  auto Large = sumPayload(700, 3);
  int64_t Before = readTotal(Total);
  tc_status_t St;
  while ((St = tc_send(Again, Sender.Stdlib, Sum, TC_SEND_LOCAL, Large.data(), Large.size() * 4)) ==
         TC_ERR_NO_CREDIT)
    tc_progress(Receiver.Ctx, nullptr), tc_progress(Sender.Ctx, nullptr);
  ASSERT_EQ(St, TC_OK);
  EXPECT_TRUE(progressUntil([&] { return readTotal(Total) - Before == sumOf(Large); },
                            "the other connection's large payload ran"));
  tc_peer_close(Again);
}

/// A frame that names a payload sent ahead which never comes waits for it
/// only until the time limit, and is then refused, never run, and the
/// ring goes on.
TEST_F(TwoContexts, AFrameWhosePayloadNeverComesIsRefused) {
  Drive = Driver::TestThread;
  Receiver.Params.slot_size = 256;
  ASSERT_NO_FATAL_FAILURE(start());
  if (!Peer->Tx->RingDirect)
    GTEST_SKIP() << "the ring is not mapped into this process: no frame can be forged into it";
  auto *R = reinterpret_cast<tc_context *>(Receiver.Ctx);
  R->Control->BodyTimeoutNs = 200'000'000;
  auto *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  uint64_t Seq;
  uint32_t Slot;
  ASSERT_EQ(Peer->Tx->Send->reserve(&Seq, &Slot), TC_OK);
  PayloadAhead Named = {PayloadAheadMagic, 4000, Seq, {0, 0}};
  FrameSpec Spec;
  Spec.Kind = FrameLocal;
  Spec.Package = Sender.Stdlib->Tag;
  Spec.Element = Sum;
  Spec.Payload = &Named;
  Spec.PayloadSize = sizeof Named;
  Spec.Sequence = Seq;
  Spec.Ordered = true;
  Spec.Flags = FramePayloadAhead;
  size_t Size;
  ASSERT_EQ(encodeFrame(ringSlot(Peer->Tx->RingDirect, Peer->Tx->SlotSize, Slot),
                        Peer->Tx->SlotSize, Spec, &Size),
            TC_OK);
  wakeIfSleeping(Peer);
  int64_t Before = readTotal(Total);
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_rejected == 1; },
                            "the receiver refused the frame"));
  EXPECT_EQ(readTotal(Total), Before) << "the frame never ran";
  EXPECT_EQ(stats(Receiver).payloads_ahead_refused, 1u);
  EXPECT_TRUE(logged("dropped frame " + std::to_string(Seq)));
  auto Small = sumPayload(4, 1);
  ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, TC_SEND_LOCAL, Small.data(), 16), TC_OK);
  ASSERT_TRUE(progressUntil([&] { return readTotal(Total) - Before == sumOf(Small); },
                            "the next frame ran"));
}

} // namespace
