//===- BadInputTest.cpp - A sender that breaks the rules ------------------===//
//
// The sender here writes its frames itself, with the runtime's internals,
// straight into its ring on the receiver, and ships code ahead falsely:
// what no runtime would send, but a hostile peer with the key can. The
// receiver must refuse and count each bad frame and offer, run none, and
// go on running good frames, of this peer and of others. (These were the
// end-to-end program tc-rogue's, which needed the internals; end-to-end
// programs use only the installed headers.)
//
// A frame the rogue puts itself is in no send queue of its runtime: with
// direct stores the runtime would find it in the ring on a miss report and
// send it again with code, so the handshake is made with puts alone
// (TC_DIRECT_STORES=0, read when each side makes its offer).
//
//===----------------------------------------------------------------------===//
#include "TwoContexts.h"

#include "code/CodeTransfer.h"
#include "code/PeerCode.h"
#include "context/Context.h"
#include "control/ControlMessage.h"
#include "package/Package.h"
#include "path/FramePath.h"
#include "send/Send.h"
#include "ucx/Request.h"
#include "wire/Frame.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <functional>
#include <ucp/api/ucp.h>

namespace {

using namespace twochains::rt;

/// TC_DIRECT_STORES=0 while it lives (see the top of the file).
class DirectStoresOff {
public:
  DirectStoresOff() {
    if (const char *V = std::getenv("TC_DIRECT_STORES"))
      Old = V;
    setenv("TC_DIRECT_STORES", "0", 1);
  }
  ~DirectStoresOff() {
    if (Old)
      setenv("TC_DIRECT_STORES", Old->c_str(), 1);
    else
      unsetenv("TC_DIRECT_STORES");
  }

private:
  std::optional<std::string> Old;
};

using Shaping = std::function<void(FrameSpec &)>;
using Damaging = std::function<void(uint8_t *, size_t, uint64_t)>;

const Damaging None = [](uint8_t *, size_t, uint64_t) {};

/// Rewrites the header, then seals the frame again with a valid trailer:
/// only what Change did is wrong with it.
Damaging reseal(std::function<void(FrameHeader &)> Change) {
  return [Change](uint8_t *F, size_t Size, uint64_t Seq) {
    FrameHeader H;
    std::memcpy(&H, F, sizeof H);
    Change(H);
    std::memcpy(F, &H, sizeof H);
    FrameTrailer T = {uint32_t(Seq), frameChecksum(F, Size - FrameTrailerSize, Seq)};
    std::memcpy(F + Size - FrameTrailerSize, &T, sizeof T);
  };
}

/// Puts the first Keep bytes of a frame shaped by Shape for the peer's
/// next sequence, damaged by Damage, into its slot on the receiver, as the
/// runtime's send path would put a good one. Call under
/// ASSERT_NO_FATAL_FAILURE.
void putFrame(tc_peer *Peer, const Shaping &Shape, const Damaging &Damage,
              size_t Keep = SIZE_MAX) {
  uint64_t Seq;
  uint32_t Slot;
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (Peer->Tx->Send->credit(*Peer->Tx->CreditWord),
         Peer->Tx->Send->reserve(&Seq, &Slot) != TC_OK) {
    ASSERT_LT(std::chrono::steady_clock::now(), Deadline) << "no credit came back for a slot";
    ucp_worker_progress(frameWorker(Peer));
  }
  FrameSpec Spec;
  Spec.Sequence = Seq;
  Shape(Spec);
  size_t Size = 0;
  ASSERT_EQ(encodeFrame(Peer->Sending->Staging.data(), Peer->Tx->SlotSize, Spec, &Size), TC_OK);
  Damage(Peer->Sending->Staging.data(), Size, Seq);
  ASSERT_EQ(deliverFrame(Peer, Peer->Sending->Staging.data(), std::min(Size, Keep), Seq, Slot),
            TC_OK);
}

/// The frames of the standard package's server_side_sum of 1..8 (36 added
/// to the receiver's tc_stdlib_total), by kind.
struct SumFrames {
  const tc_package *Pkg;
  uint32_t Sum;
  int32_t Payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};

  Shaping local() const {
    return [this](FrameSpec &S) {
      S.Package = Pkg->Tag;
      S.Element = Sum;
      S.Payload = Payload;
      S.PayloadSize = sizeof Payload;
    };
  }
  Shaping injected() const {
    return [this](FrameSpec &S) {
      local()(S);
      S.Kind = FrameInjected;
      S.Image = Pkg->Elements[Sum].Image.Bytes.data();
      S.ImageSize = uint32_t(Pkg->Elements[Sum].Image.Bytes.size());
      S.Code = Pkg->Elements[Sum].CodeKey;
    };
  }
  Shaping cached() const {
    return [this](FrameSpec &S) {
      local()(S);
      S.Kind = FrameCached;
      S.Code = Pkg->Elements[Sum].CodeKey;
    };
  }
};

/// Ships Bytes as the code of Element, as CodeTransfer.cpp does, with the
/// header changed by Change; Answer: the receiver's answer.
void offerCode(tc_peer *Peer, const tc_package *Pkg, uint32_t Element, std::vector<uint8_t> Bytes,
               const std::function<void(CodeHeader &)> &Change, tc_status_t &Answer) {
  auto *Ctx = static_cast<tc_context *>(Peer->Ctx);
  const PackageElement &E = Pkg->Elements[Element];
  CodeHeader H = {CodeMagic, Element, Pkg->Tag, E.CodeKey, uint32_t(Bytes.size()), 0};
  Change(H);
  // As shipCode does: the answer to this shipment is the one taken.
  Peer->Code->Shipping.start(Pkg, H.Package, H.Element, ~0ull);
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY;
  ASSERT_EQ(waitRequest(Ctx->Worker, ucp_am_send_nbx(Peer->Ep, AmCode, &H, sizeof H, Bytes.data(),
                                                     Bytes.size(), &P)),
            UCS_OK);
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Ctx->Code->CodeAcks.empty()) {
    ASSERT_LT(std::chrono::steady_clock::now(), Deadline) << "no answer to the shipped code";
    ucp_worker_progress(Ctx->Worker);
  }
  Answer = Ctx->Code->CodeAcks.front().Status;
  Ctx->Code->CodeAcks.clear();
  Peer->Code->Shipping.end();
}

/// Eleven bad frames, then three good ones (local, injected, cached):
/// each bad one is refused, counted and logged with its reason, none runs,
/// the sender is told why, and the good ones after them run. Then a send
/// larger than a slot and than the receiver's share of payloads sent ahead
/// (4 MiB by default), which can never go, is refused at the sender.
TEST_F(TwoContexts, MalformedFramesAreRefusedAndGoodOnesAfterThemRun) {
  DirectStoresOff Off;
  ASSERT_NO_FATAL_FAILURE(start());
  const int64_t *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  const int64_t Before = readTotal(Total);
  SumFrames F{Sender.Stdlib, element(Sender.Stdlib, "server_side_sum")};
  // GOTP travels as zero, as the runtime's templates send it.
  Damaging WithGotp = reseal([](FrameHeader &) {});

  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.local(), reseal([](FrameHeader &H) { H.Magic ^= 0xff; })));
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.local(), reseal([](FrameHeader &H) { H.Version = 77; })));
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.local(), reseal([](FrameHeader &H) { H.Package ^= 1; })));
  ASSERT_NO_FATAL_FAILURE(
      putFrame(Peer, F.local(), reseal([](FrameHeader &H) { H.Element = 9999; })));
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.injected(), [&](uint8_t *B, size_t Size, uint64_t Seq) {
    B[FrameLine + 20] ^= 0x01; // a changed instruction byte of the image
    WithGotp(B, Size, Seq);
  }));
  ASSERT_NO_FATAL_FAILURE(
      putFrame(Peer, F.local(), reseal([](FrameHeader &H) { H.PayloadSize = 100000; })));
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.local(), None, 64)); // cut short; the next completes
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.local(), [](uint8_t *B, size_t Size, uint64_t) {
    B[Size - 1] ^= 0x5a; // whole, but the checksum is wrong
  }));
  // Right bytes, wrong claim.
  ASSERT_NO_FATAL_FAILURE(putFrame(
      Peer, [&](FrameSpec &S) {
        F.injected()(S);
        S.Code ^= 1;
      }, WithGotp));
  // A cached frame naming a hash that is no code of the element.
  ASSERT_NO_FATAL_FAILURE(putFrame(
      Peer, [&](FrameSpec &S) {
        F.cached()(S);
        S.Code ^= 2;
      }, None));
  // A cached frame naming the element's own code, which was never sent:
  // the receiver asks for it; this sender never sends it.
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.cached(), None));
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.local(), None));
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.injected(), WithGotp));
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.cached(), None)); // now installed: runs

  // The receiver tells the sender why it refused its frames: the flush
  // says the last one's reason, once (docs/runtime.md, "Refusals").
  tc_status_t Flushed = flush(20000);
  tc_jam_fault_t Last = {};
  tc_peer_last_fault(Peer, &Last);
  EXPECT_EQ(unsigned(Last.kind), unsigned(TC_JAM_REFUSED)) << describe();
  if (Flushed != TC_OK && Last.kind == TC_JAM_REFUSED && Flushed == tc_status_t(Last.status))
    Flushed = flush(20000);
  ASSERT_EQ(Flushed, TC_OK) << "the receiver did not finish the frames\n" << describe();
  EXPECT_GE(loggedMatching("refused frame [0-9]* \\(element [0-9]*\\): "), 1u)
      << "the sender was told why";

  std::vector<uint8_t> Big(5u << 20, 1);
  EXPECT_EQ(tc_send(Peer, Sender.Stdlib, F.Sum, TC_SEND_LOCAL, Big.data(), Big.size()),
            TC_ERR_TOO_LARGE);

  ASSERT_TRUE(progressUntil(
      [&] {
        tc_stats_t S = stats(Receiver);
        return S.frames_executed_local + S.frames_executed_injected + S.frames_rejected == 14;
      },
      "the receiver took all 14 frames"));
  tc_stats_t S = stats(Receiver);
  EXPECT_EQ(S.frames_executed_local, 1u) << describe();
  EXPECT_EQ(S.frames_executed_injected, 2u) << describe();
  EXPECT_EQ(S.frames_rejected, 11u) << describe();
  // The receiver's own lines ("dropped frame N from peer ..."), not the
  // sender's about the same frames.
  const std::string Dropped = "dropped frame [0-9]* from peer [0-9]* \\([^)]*\\): ";
  EXPECT_EQ(loggedMatching(Dropped + "frame not completely arrived"), 2u);
  // The tampered image, the false claim and the forged cached hash.
  EXPECT_EQ(loggedMatching(Dropped + "code does not hash to the hash its frame claims"), 3u);
  EXPECT_EQ(S.cache_installs, 1u);
  EXPECT_EQ(S.frames_executed_cached, 1u);
  EXPECT_EQ(S.cache_misses, 1u);
  EXPECT_EQ(S.cache_evictions, 0u);
  EXPECT_EQ(S.cache_hash_mismatches, 3u);
  EXPECT_EQ(readTotal(Total) - Before, 3 * 36) << "the three good frames ran, once each";
  for (const char *Why : {"bad frame magic", "unsupported frame version", "unknown package",
                          "unknown element", "frame length or offset outside the slot",
                          "frame not completely arrived",
                          "frame names code this receiver does not hold"})
    EXPECT_GE(loggedMatching(Dropped + Why), 1u) << "no rejection for: " << Why;
}

/// Code shipped ahead of frames: only the receiver's own image, exactly,
/// is installed; every false offer is refused and answered. Answers to
/// nothing this side shipped (a hostile receiver's) are dropped, so they
/// cannot crowd out the real one.
TEST_F(TwoContexts, CodeShippedAheadFalselyIsRefusedAndAnswered) {
  DirectStoresOff Off;
  ASSERT_NO_FATAL_FAILURE(start());
  const tc_package *Pkg = Sender.Stdlib;
  SumFrames F{Pkg, element(Pkg, "server_side_sum")};
  const uint32_t Sum = F.Sum;
  std::vector<uint8_t> Image = Pkg->Elements[Sum].Image.Bytes;
  std::vector<uint8_t> Changed = Image;
  Changed[20] ^= 0x01;
  auto Same = [](CodeHeader &) {};
  tc_status_t Answer = TC_OK;
  ASSERT_NO_FATAL_FAILURE(offerCode(Peer, Pkg, Sum, Changed, Same, Answer));
  EXPECT_EQ(Answer, TC_ERR_HASH_MISMATCH) << "a changed byte";
  ASSERT_NO_FATAL_FAILURE(offerCode(
      Peer, Pkg, Sum, std::vector<uint8_t>(Image.begin(), Image.end() - 64), Same, Answer));
  EXPECT_EQ(Answer, TC_ERR_HASH_MISMATCH) << "a wrong size";
  ASSERT_NO_FATAL_FAILURE(
      offerCode(Peer, Pkg, Sum, Image, [](CodeHeader &H) { H.Code ^= 4; }, Answer));
  EXPECT_EQ(Answer, TC_ERR_HASH_MISMATCH) << "a wrong key";
  ASSERT_NO_FATAL_FAILURE(
      offerCode(Peer, Pkg, Sum, Image, [](CodeHeader &H) { H.Element = 9999; }, Answer));
  EXPECT_EQ(Answer, TC_ERR_UNKNOWN_ELEMENT) << "an unknown element";

  auto *Ctx = static_cast<tc_context *>(Peer->Ctx);
  CodeAck Forged = {CodeAckMagic, TC_OK, Pkg->Tag, Sum, 0};
  ucp_am_recv_param_t From = {};
  From.recv_attr = UCP_AM_RECV_ATTR_FIELD_REPLY_EP;
  From.reply_ep = Peer->Ep;
  for (int K = 0; K < 32; ++K)
    onCodeAck(Ctx, &Forged, sizeof Forged, nullptr, 0, &From);
  EXPECT_EQ(Ctx->Code->CodeAcks.size(), 0u) << "forged answers kept";

  ASSERT_NO_FATAL_FAILURE(offerCode(Peer, Pkg, Sum, Image, Same, Answer));
  EXPECT_EQ(Answer, TC_OK) << "the true image";
  ASSERT_NO_FATAL_FAILURE(putFrame(Peer, F.cached(), None));
  EXPECT_EQ(flush(20000), TC_OK) << "the receiver did not run the cached frame\n" << describe();
  EXPECT_EQ(loggedCount("refused code shipped by"), 4u);
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_stats_t S = stats(Receiver);
        return S.frames_executed_local + S.frames_executed_injected + S.frames_rejected == 1;
      },
      "the receiver took the cached frame"));
  tc_stats_t S = stats(Receiver);
  EXPECT_EQ(S.frames_executed_local, 0u);
  EXPECT_EQ(S.frames_executed_injected, 1u);
  EXPECT_EQ(S.frames_rejected, 0u);
}

/// A sender that sends 5 good frames, cuts a sixth write short and is
/// gone without closing (its connection broken, as when its process
/// dies) does not stop the receiver serving another sender: the 5 and
/// every frame of the other run, once each.
TEST_F(TwoContexts, ASenderDyingMidWriteDoesNotStopTheReceiver) {
  // The receiver runs only when the test lets it: it may find the dying
  // sender's frames and its end in one turn, and must still run the
  // frames (nothing sent is lost).
  Drive = Driver::TestThread;
  DirectStoresOff Off;
  ASSERT_NO_FATAL_FAILURE(start());
  Side *Rogue = nullptr;
  ASSERT_NO_FATAL_FAILURE(Rogue = createExtraSide("rogue"));
  ASSERT_NE(Rogue, nullptr);
  tc_peer_t *Dying = nullptr;
  ASSERT_EQ(connectSides(*Rogue, Receiver, Port, &Dying), TC_OK) << describe();
  const int64_t *Total = receiverSymbol<int64_t>("tc_stdlib_total");
  ASSERT_NE(Total, nullptr);
  const int64_t Before = readTotal(Total);
  SumFrames F{Rogue->Stdlib, element(Rogue->Stdlib, "server_side_sum")};
  for (int I = 0; I < 5; ++I)
    ASSERT_NO_FATAL_FAILURE(putFrame(Dying, F.local(), None));
  ASSERT_NO_FATAL_FAILURE(putFrame(Dying, F.local(), None, 64)); // the trailer never lands
  // Gone: its control connection ends at once, without the close's last
  // words (no flush, no credits), and it is never progressed again.
  cutOffPeer(static_cast<tc_context *>(Dying->Ctx), Dying, "the rogue dies mid-write");
  // Its handle let go as an application lets a failed peer go: a failed
  // peer has no last words, and its context is left with nothing to free.
  tc_peer_close(Dying);

  const uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
  std::vector<int32_t> Payload = sumPayload(8, 1);
  constexpr unsigned Good = 1000;
  for (unsigned I = 0; I < Good; ++I)
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, I % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL,
                           Payload.data(), Payload.size() * sizeof(int32_t)),
              TC_OK)
        << "frame " << I << "\n"
        << describe();
  ASSERT_EQ(flush(20000), TC_OK) << describe();
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_stats_t S = stats(Receiver);
        return S.frames_executed_local + S.frames_executed_injected >= 5 + Good;
      },
      "the receiver ran the dying sender's 5 frames and the other's"));
  tc_stats_t S = stats(Receiver);
  EXPECT_EQ(S.frames_executed_local + S.frames_executed_injected, 5 + Good) << describe();
  EXPECT_EQ(readTotal(Total) - Before, int64_t(5 + Good) * sumOf(Payload));
}

/// A rogue in a process of its own (this binary again, told the port by
/// TC_TEST_ROGUE_PORT): connects, stores one good frame and cuts a second
/// short, then dies (_exit: the kernel closes its sockets and maps, as a
/// crash does). Only run by ASenderThatDiesMidWriteIsReleased.
TEST_F(TwoContexts, RogueThatDiesMidWrite) {
  const char *Port = std::getenv("TC_TEST_ROGUE_PORT");
  if (!Port)
    GTEST_SKIP() << "the rogue process of ASenderThatDiesMidWriteIsReleased";
  Side *Rogue = nullptr;
  ASSERT_NO_FATAL_FAILURE(Rogue = createExtraSide("rogue"));
  ASSERT_NE(Rogue, nullptr);
  tc_peer_t *Dying = nullptr;
  ASSERT_EQ(
      tc_connect(Rogue->Ctx, "127.0.0.1", uint16_t(std::atoi(Port)), ConnectTimeoutMs, &Dying),
      TC_OK);
  SumFrames F{Rogue->Stdlib, element(Rogue->Stdlib, "server_side_sum")};
  ASSERT_NO_FATAL_FAILURE(putFrame(Dying, F.local(), None));
  ASSERT_NO_FATAL_FAILURE(putFrame(Dying, F.local(), None, 64)); // the trailer never lands
  std::fflush(nullptr);
  _exit(42);
}

/// A sender whose process dies mid-write (the receiver hears of it as its
/// connection breaks) keeps nothing of the receiver's: its complete frame
/// runs, then it is released (its ring, its endpoints, its place among
/// the accepted), and another sender is served meanwhile and after.
TEST_F(TwoContexts, ASenderThatDiesMidWriteIsReleased) {
  Drive = Driver::TestThread;
  DirectStoresOff Off; // read by the rogue too: its environment is this one's
  ASSERT_NO_FATAL_FAILURE(start());
  CoreContext *Core = coreOf(Receiver.Ctx);
  ASSERT_EQ(Core->Accepted.size(), 1u) << describe();
  // The receiver answers the rogue's handshake meanwhile.
  std::atomic<bool> Stop{false};
  std::thread Serve([&] {
    while (!Stop.load(std::memory_order_relaxed))
      tc_progress(Receiver.Ctx, nullptr);
  });
  pid_t Child = fork();
  if (Child == 0) {
    std::string PortText = std::to_string(Port);
    setenv("TC_TEST_ROGUE_PORT", PortText.c_str(), 1);
    execl("/proc/self/exe", "rogue", "--gtest_filter=TwoContexts.RogueThatDiesMidWrite",
          static_cast<char *>(nullptr));
    _exit(127);
  }
  int Status = 0;
  pid_t Waited = Child > 0 ? waitpid(Child, &Status, 0) : -1;
  Stop = true;
  Serve.join();
  ASSERT_EQ(Waited, Child) << "no rogue process";
  ASSERT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 42)
      << "the rogue did not die as planned (status " << Status << ")";
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_executed_local >= 1; },
                            "the receiver ran the rogue's frame that landed"));
  ASSERT_NO_FATAL_FAILURE(sendGoodFrames(4));
  ASSERT_TRUE(progressUntil([&] { return Core->Accepted.size() == 1; },
                            "the receiver released the sender that died mid-write"))
      << describe();
  ASSERT_NO_FATAL_FAILURE(sendGoodFrames(4));
}

} // namespace
