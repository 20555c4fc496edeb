//===- QueueSharesTest.cpp - One peer fills only its share of a queue -----===//
//
// Queues every peer fills (code offers waiting for their bytes, answers
// waiting for theirs, frames forwarded to a route, events) hold a share per
// peer, and a transfer by rendezvous that does not complete in time is
// cancelled, its peer cut off. Each test runs an attacker beside a good
// peer, whose shipments, calls and forwards must still go through.
//
// The attacker is a third context of this process whose UCX sends
// rendezvous without its buffer's address (UCX_RNDV_SCHEME=put_zcopy): the
// other side must ask for the bytes, and the attacker, which is never
// progressed again, never sends them. That is how a hostile peer holds a
// place: its message is taken, its bytes never come.
//
//===----------------------------------------------------------------------===//
#include "JobRanks.h"
#include "RawMessage.h"
#include "TwoContexts.h"

#include "calls/CallsContext.h"
#include "context/Context.h"
#include "code/CodeContext.h"
#include "control/ControlContext.h"
#include "control/PeerControl.h"
#include "core/CoreContext.h"
#include "core/Events.h"
#include "core/Peer.h"
#include "package/PackageContext.h"
#include "package/Package.h"
#include "wire/Deploy.h"
#include "wire/Wire.h"

#include <algorithm>
#include <tuple>
#include <ucp/api/ucp.h>

namespace {

using namespace twochains::rt;

const std::vector<std::pair<const char *, const char *>> BytesNeverCome = {
    {"UCX_RNDV_SCHEME", "put_zcopy"}};

/// Sends, from From's control endpoint, a message by rendezvous that is
/// never completed (the request is let go: UCX ends it with the endpoint).
void sendByRendezvous(tc_peer_t *From, unsigned Id, const void *Header, size_t HeaderSize,
                      const void *Body, size_t BodySize) {
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_RNDV;
  ucs_status_ptr_t R = ucp_am_send_nbx(From->Ep, Id, Header, HeaderSize, Body, BodySize, &P);
  ASSERT_FALSE(UCS_PTR_IS_ERR(R)) << ucs_status_string(UCS_PTR_STATUS(R));
  if (R)
    ucp_request_free(R);
}

/// An offer of Pkg's element's image exactly as the receiver expects it,
/// whose bytes never come; Malformed: one refused at once (a bad magic),
/// which, sent last, says when the receiver has seen all before it.
void offerCode(tc_peer_t *From, const tc_package_t *Pkg, uint32_t Element, bool Malformed = false) {
  const PackageElement &E = Pkg->Elements[Element];
  CodeHeader H = {CodeMagic, Element, Pkg->Tag, E.CodeKey, uint32_t(E.Image.Bytes.size()), 0};
  if (Malformed)
    H.Magic = 0;
  sendByRendezvous(From, AmCode, &H, sizeof H, E.Image.Bytes.data(), E.Image.Bytes.size());
}

/// Sets a context's rendezvous timeout (ControlContext::BodyTimeoutNs).
void setRendezvousTimeout(tc_context_t *Ctx, uint64_t Ns) {
  auto *Control = coreOf(Ctx);
  std::lock_guard<std::recursive_mutex> G(Control->Lock);
  Control->Control->BodyTimeoutNs = Ns;
}

constexpr uint64_t Hour = 3600 * NsPerS;
/// How long places may take to be freed once their peers are cut off
/// (UCX ends the receives as the worker progresses): generous, for a
/// loaded machine.
constexpr int FreedWithinMs = 30000;

/// Closes a test's extra peers however it ends: a context whose peers are
/// left open with transfers in flight is not destroyed cleanly by UCX.
struct ClosedAtEnd {
  std::vector<tc_peer_t *> Peers;
  ~ClosedAtEnd() {
    for (tc_peer_t *P : Peers)
      tc_peer_close(P);
  }
};

//===----------------------------------------------------------------------===//
// code shipped ahead
//===----------------------------------------------------------------------===//

/// An attacker's offers whose bytes never come fill only its share of the
/// receiver's places: the good sender's image (larger than the receiver's
/// 128-byte slots, so shipped ahead) is still taken and installed.
TEST_F(TwoContexts, CodeOfferFloodLeavesTheOtherPeersPlaces) {
  Drive = Driver::Executor;
  Receiver.Params.slot_size = 128;
  ASSERT_NO_FATAL_FAILURE(start());
  setRendezvousTimeout(Receiver.Ctx, Hour); // the share alone keeps the places here
  Side *Attacker = nullptr;
  ASSERT_NO_FATAL_FAILURE(Attacker = createExtraSide("attacker", BytesNeverCome));
  ASSERT_NE(Attacker, nullptr);
  tc_peer_t *Evil = nullptr;
  ASSERT_EQ(tc_connect(Attacker->Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Evil), TC_OK);
  ClosedAtEnd Close{{Evil}};
  uint32_t Echo = element(Sender.Calls, "echo");
  for (size_t I = 0; I < MaxPendingCode; ++I)
    ASSERT_NO_FATAL_FAILURE(offerCode(Evil, Attacker->Calls, Echo));
  ASSERT_NO_FATAL_FAILURE(offerCode(Evil, Attacker->Calls, Echo, /*Malformed=*/true));
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).messages_refused == 1; },
                            "the receiver saw the attacker's last offer"));
  EXPECT_EQ(stats(Receiver).shares_full, MaxPendingCode - MaxPendingCodePerPeer)
      << "offers past the attacker's share are refused";

  uint64_t Question = 0x5eed;
  uint64_t Answer = 0;
  size_t Size = 0;
  EXPECT_EQ(tc_call(Peer, Sender.Calls, Echo, TC_SEND_INJECTED, &Question, sizeof Question, &Answer,
                    sizeof Answer, &Size, WaitMs),
            TC_OK)
      << describe();
  EXPECT_EQ(Answer, Question);
  EXPECT_EQ(stats(Sender).code_transfers, 1u) << "the good sender's image was shipped ahead";
  EXPECT_EQ(stats(Receiver).code_transfers_received, 1u);
  EXPECT_TRUE(logged("its share"));
}

/// Offers whose bytes never come are cancelled after the receiver's
/// rendezvous timeout, their peer cut off, and their places freed: eight
/// connections of the attacker fill every place (two each), the good
/// sender's image is refused; once they are cancelled it is taken, and so
/// is an offer from the attacker's process on a new connection.
TEST_F(TwoContexts, OverdueCodeOffersAreCancelledAndTheirPlacesFreed) {
  Drive = Driver::Executor;
  Receiver.Params.slot_size = 128;
  ASSERT_NO_FATAL_FAILURE(start());
  setRendezvousTimeout(Receiver.Ctx, Hour);
  Side *Attacker = nullptr;
  ASSERT_NO_FATAL_FAILURE(Attacker = createExtraSide("attacker", BytesNeverCome));
  ASSERT_NE(Attacker, nullptr);
  uint32_t Echo = element(Sender.Calls, "echo");
  constexpr size_t Connections = MaxPendingCode / MaxPendingCodePerPeer;
  // Connected first: connecting progresses the attacker's worker, which
  // would send the bytes of offers already made.
  ClosedAtEnd Evil;
  for (size_t I = 0; I < Connections; ++I) {
    tc_peer_t *E = nullptr;
    ASSERT_EQ(tc_connect(Attacker->Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &E), TC_OK);
    Evil.Peers.push_back(E);
  }
  for (tc_peer_t *E : Evil.Peers)
    for (size_t I = 0; I < MaxPendingCodePerPeer; ++I)
      ASSERT_NO_FATAL_FAILURE(offerCode(E, Attacker->Calls, Echo));
  ASSERT_NO_FATAL_FAILURE(offerCode(Evil.Peers.back(), Attacker->Calls, Echo, /*Malformed=*/true));
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).messages_refused == 1; },
                            "the receiver saw the attacker's last offer"));
  uint64_t Question = 0x5eed;
  // Every place is taken: the receiver refuses the good sender's shipment,
  // which the sender offers again (until its time limit) while its frames
  // wait in the queue; they take no sequence of the ring (one no frame
  // filled would have stalled it for good).
  for (int I = 0; I < 2; ++I)
    ASSERT_EQ(tc_send(Peer, Sender.Calls, Echo, TC_SEND_INJECTED, &Question, sizeof Question),
              TC_OK)
        << "queued behind the shipment\n"
        << describe();
  ASSERT_TRUE(progressUntil(
      [&] { return loggedCount("already " + std::to_string(MaxPendingCode) + " images") > 0; },
      "the receiver refused the good sender's shipment"));
  EXPECT_EQ(stats(Sender).frames_sent, 0u) << "its frames wait for the code";

  setRendezvousTimeout(Receiver.Ctx, 100 * NsPerMs);
  ASSERT_TRUE(
      progressUntil([&] { return stats(Receiver).rendezvous_cancelled == Connections; },
                    "the receiver cancelled the offers and cut off the attacker's connections"));
  EXPECT_TRUE(logged("did not come in 100 ms"));
  // The places are freed as UCX completes the receives, which the forced
  // close of each endpoint ends as it progresses; the shipment is offered
  // again while refused, and the call's frame waits behind the two sent.
  uint64_t Answer = 0;
  size_t Size = 0;
  EXPECT_EQ(tc_call(Peer, Sender.Calls, Echo, TC_SEND_INJECTED, &Question, sizeof Question, &Answer,
                    sizeof Answer, &Size, FreedWithinMs),
            TC_OK)
      << describe();
  EXPECT_EQ(Answer, Question);
  EXPECT_EQ(stats(Receiver).code_transfers_received, 1u);
  EXPECT_EQ(stats(Receiver).frames_executed_injected, 3u) << "the two frames and the call's";

  // The attacker's process, on a new connection, offering as senders do
  // (its worker progressed while its flush waits for the answer): taken.
  tc_peer_t *Again = nullptr;
  ASSERT_EQ(tc_connect(Attacker->Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Again), TC_OK);
  Evil.Peers.push_back(Again);
  EXPECT_EQ(tc_send(Again, Attacker->Calls, Echo, TC_SEND_INJECTED, &Question, sizeof Question),
            TC_OK)
      << describe();
  EXPECT_EQ(tc_flush(Again, FreedWithinMs), TC_OK) << describe();
  EXPECT_EQ(stats(Receiver).code_transfers_received, 2u);
}

//===----------------------------------------------------------------------===//
// answers to calls
//===----------------------------------------------------------------------===//

/// What a hostile receiver answers with: the largest answers a call may
/// have, whose bytes never come. Lives as long as the process: UCX reads
/// it until the hostile side's endpoints close, at teardown.
const std::vector<uint8_t> &largestAnswer() {
  static const std::vector<uint8_t> Bytes(TC_CALL_MAX_REPLY, 0xa5);
  return Bytes;
}

/// A hostile receiver: listens, answers the sender's handshakes (Peers
/// connections), then is never progressed again. Each connection has sent
/// it a frame (sequence 0), which its answers then name.
struct Hostile {
  TwoContexts::Side *Side = nullptr;
  uint16_t Port = 0;
  ClosedAtEnd FromSender; // the sender's peers of it
};

/// Answers, from the hostile side's peer Number (its connections in
/// order, from 1), Count answers of the largest size to frame 0, by
/// rendezvous, then a malformed one that the caller refuses at once.
void floodAnswers(TwoContexts::Side &From, unsigned Number, size_t Count) {
  tc_peer_t *P = nullptr;
  ASSERT_EQ(tc_context_peer(From.Ctx, Number, &P), TC_OK);
  const std::vector<uint8_t> &Bytes = largestAnswer();
  CallReply H = {ReplyMagic, TC_OK, 0, uint32_t(Bytes.size()), 0};
  for (size_t I = 0; I < Count; ++I)
    ASSERT_NO_FATAL_FAILURE(sendByRendezvous(P, AmReply, &H, sizeof H, Bytes.data(), Bytes.size()));
}
void sendMalformedAnswer(TwoContexts::Side &From, unsigned Number) {
  tc_peer_t *P = nullptr;
  ASSERT_EQ(tc_context_peer(From.Ctx, Number, &P), TC_OK);
  CallReply H = {0, TC_OK, 0, 0, 0};
  sendByRendezvous(P, AmReply, &H, sizeof H, nullptr, 0);
}

/// A call to the good receiver whose answer (1000 bytes, larger than the
/// sender's 256-byte slots) comes as a message.
tc_status_t callWithLargeAnswer(TwoContexts &T, int TimeoutMs) {
  std::vector<uint8_t> Question(1000), Reply(1000);
  for (size_t I = 0; I < Question.size(); ++I)
    Question[I] = uint8_t(I * 13 + 1);
  size_t Size = 0;
  tc_status_t St = tc_call(T.Peer, T.Sender.Calls, T.element(T.Sender.Calls, "echo"), TC_SEND_LOCAL,
                           Question.data(), Question.size(), Reply.data(), Reply.size(), &Size,
                           TimeoutMs);
  if (St == TC_OK && (Size != Question.size() || Reply != Question))
    return TC_ERR_IO;
  return St;
}

/// Connects the sender to a hostile receiver Connections times (each
/// connection's first frame sent, so that answers may name it).
void connectHostile(TwoContexts &T, Hostile &H, size_t Connections) {
  ASSERT_NO_FATAL_FAILURE(H.Side = T.createExtraSide("hostile receiver", BytesNeverCome));
  ASSERT_NE(H.Side, nullptr);
  for (size_t I = 0; I < Connections; ++I) {
    tc_peer_t *P = nullptr;
    ASSERT_EQ(T.connectSides(T.Sender, *H.Side, H.Port, &P), TC_OK);
    H.FromSender.Peers.push_back(P);
    uint64_t Nothing = 0;
    ASSERT_EQ(tc_send(P, T.Sender.Stdlib, T.element(T.Sender.Stdlib, "server_side_sum"),
                      TC_SEND_LOCAL, &Nothing, sizeof Nothing),
              TC_OK);
  }
}

/// A hostile receiver answers 300 times with 1 MiB whose bytes never come:
/// it takes only its share of the caller's room for answers, and the
/// caller's calls to the good receiver, whose answers come as messages,
/// are still answered.
TEST_F(TwoContexts, AnswerFloodLeavesTheOtherPeersRoom) {
  Drive = Driver::Executor;
  Sender.Params.slot_size = 256;
  ASSERT_NO_FATAL_FAILURE(start());
  setRendezvousTimeout(Sender.Ctx, Hour); // the share alone keeps the room here
  Hostile H;
  ASSERT_NO_FATAL_FAILURE(connectHostile(*this, H, 1));
  ASSERT_NO_FATAL_FAILURE(floodAnswers(*H.Side, 1, 300));
  ASSERT_NO_FATAL_FAILURE(sendMalformedAnswer(*H.Side, 1));
  ASSERT_TRUE(progressUntil([&] { return stats(Sender).messages_refused == 1; },
                            "the caller saw the hostile receiver's last answer"));
  EXPECT_EQ(stats(Sender).shares_full, 300u - MaxArrivedAnswerBytesPerPeer / TC_CALL_MAX_REPLY)
      << "answers past the hostile receiver's share are refused";
  for (int I = 0; I < 8; ++I)
    EXPECT_EQ(callWithLargeAnswer(*this, WaitMs), TC_OK) << "call " << I << "\n" << describe();
  EXPECT_TRUE(logged("its share is"));
}

/// Answers whose bytes never come are cancelled after the caller's
/// rendezvous timeout, the hostile receiver cut off, and their room freed:
/// four connections to it fill all the room for answers, so that a call to
/// the good receiver ends at once with TC_ERR_NO_CREDIT; once they are
/// cancelled, calls are answered again.
TEST_F(TwoContexts, OverdueAnswersAreCancelledAndTheirRoomFreed) {
  Drive = Driver::Executor;
  Sender.Params.slot_size = 256;
  ASSERT_NO_FATAL_FAILURE(start());
  setRendezvousTimeout(Sender.Ctx, Hour);
  Hostile H;
  constexpr unsigned Connections = 4;
  ASSERT_NO_FATAL_FAILURE(connectHostile(*this, H, Connections));
  for (unsigned N = 1; N <= Connections; ++N)
    ASSERT_NO_FATAL_FAILURE(floodAnswers(*H.Side, N, 8));
  ASSERT_NO_FATAL_FAILURE(sendMalformedAnswer(*H.Side, Connections));
  ASSERT_TRUE(progressUntil([&] { return stats(Sender).messages_refused == 1; },
                            "the caller saw the hostile receiver's last answer"));
  EXPECT_EQ(callWithLargeAnswer(*this, WaitMs), TC_ERR_NO_CREDIT)
      << "no room is left: the call ends at once, and says why\n"
      << describe();

  setRendezvousTimeout(Sender.Ctx, 100 * NsPerMs);
  ASSERT_TRUE(progressUntil([&] { return stats(Sender).rendezvous_cancelled == Connections; },
                            "the caller cancelled the answers and cut off the hostile receiver"));
  // The room is freed as UCX completes the receives, which the forced
  // close of each endpoint ends as the caller progresses: until then
  // calls end at once, refused.
  ASSERT_TRUE(progressUntil([&] { return callWithLargeAnswer(*this, WaitMs) == TC_OK; },
                            "a call was answered again", FreedWithinMs));
  for (int I = 0; I < 8; ++I)
    EXPECT_EQ(callWithLargeAnswer(*this, WaitMs), TC_OK) << "call " << I << "\n" << describe();
  uint64_t Nothing = 0;
  EXPECT_EQ(tc_send(H.FromSender.Peers[0], Sender.Stdlib, element(Sender.Stdlib, "server_side_sum"),
                    TC_SEND_LOCAL, &Nothing, sizeof Nothing),
            TC_ERR_IO)
      << "the hostile receiver was cut off";
}

//===----------------------------------------------------------------------===//
// events
//===----------------------------------------------------------------------===//

/// A peer whose every frame is rejected (a package the receiver lacks)
/// posts an event per frame: past its share they are counted as lost,
/// and another peer's going is still an event the application sees.
TEST_F(TwoContexts, RejectedFramesLeaveRoomForOtherPeersEvents) {
  Drive = Driver::Executor;
  tc_package_t *Missing = nullptr;
  ASSERT_NO_FATAL_FAILURE(connectWithSenderOnlyPackage(Missing));
  Side *Second = nullptr;
  ASSERT_NO_FATAL_FAILURE(Second = createExtraSide("second sender"));
  ASSERT_NE(Second, nullptr);
  tc_peer_t *Other = nullptr;
  ASSERT_EQ(connectSides(*Second, Receiver, Port, &Other), TC_OK);
  ClosedAtEnd Close{{Other}};

  uint32_t Lonely = element(Missing, "lonely"), Payload = 5;
  constexpr uint64_t Frames = MaxEvents + 100;
  for (uint64_t I = 0; I < Frames; ++I)
    ASSERT_EQ(sendRetrying(Missing, Lonely, TC_SEND_LOCAL, &Payload, sizeof Payload), TC_OK);
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_rejected == Frames; },
                            "the receiver rejected every frame", 60000));
  Close.Peers.clear();
  tc_peer_close(Other);
  tc_peer_t *Still = nullptr;
  // UCX ends the second sender's transports as its worker progresses.
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_progress(Second->Ctx, nullptr);
        return tc_context_peer(Receiver.Ctx, 2, &Still) != TC_OK;
      },
      "the receiver saw the second sender go"));

  std::vector<tc_event_t> Events = takeEvents(Receiver);
  size_t Rejected = std::count_if(Events.begin(), Events.end(), [](const tc_event_t &E) {
    return E.kind == TC_EVENT_FRAME_REJECTED && E.peer == 1;
  });
  EXPECT_EQ(Rejected, MaxEventsPerPeer);
  EXPECT_EQ(stats(Receiver).events_lost, Frames - MaxEventsPerPeer);
  EXPECT_TRUE(std::any_of(Events.begin(), Events.end(), [](const tc_event_t &E) {
    return E.kind == TC_EVENT_PEER_GONE && E.peer == 2;
  })) << "the second sender's going was kept";
}

//===----------------------------------------------------------------------===//
// frames forwarded to a route
//===----------------------------------------------------------------------===//

/// The standard package's chain: forwards Element with Payload to
/// 127.0.0.1:Port (tc_jam_forward).
std::vector<uint8_t> chainPayload(uint16_t Port, const char *Element,
                                  const std::vector<uint8_t> &Payload) {
  struct {
    char Address[40];
    uint16_t Port, Reserved;
    char Element[32];
    uint32_t Length;
  } H = {};
  std::snprintf(H.Address, sizeof H.Address, "127.0.0.1");
  H.Port = Port;
  std::snprintf(H.Element, sizeof H.Element, "%s", Element);
  H.Length = uint32_t(Payload.size());
  std::vector<uint8_t> P(sizeof H + Payload.size());
  std::memcpy(P.data(), &H, sizeof H);
  if (!Payload.empty())
    std::memcpy(P.data() + sizeof H, Payload.data(), Payload.size());
  return P;
}

/// The standard package's put: Bytes at Offset of tc_stdlib_memory.
std::vector<uint8_t> putPayload(uint64_t Offset, const std::string &Bytes) {
  struct {
    uint64_t Offset;
    uint32_t Length, Reserved;
  } H = {Offset, uint32_t(Bytes.size()), 0};
  std::vector<uint8_t> P(sizeof H + Bytes.size());
  std::memcpy(P.data(), &H, sizeof H);
  std::memcpy(P.data() + sizeof H, Bytes.data(), Bytes.size());
  return P;
}

/// Runs Far (tc_progress) on a thread of its own while it lives.
class Running {
public:
  explicit Running(tc_context_t *Ctx)
      : Thread([this, Ctx] {
          for (unsigned Turn = 1; !Stop.load(std::memory_order_relaxed); ++Turn) {
            tc_progress(Ctx, nullptr);
            if (Turn % 64 == 0)
              std::this_thread::yield();
          }
        }) {}
  ~Running() {
    Stop = true;
    Thread.join();
  }

private:
  std::atomic<bool> Stop{false};
  std::thread Thread;
};

/// One sender's jams forward frame after frame to a route whose far end
/// stopped taking them: they queue on the receiver, up to that sender's
/// share of the route's queue, and a second sender's forward there is
/// still queued, and runs once the far end takes frames again.
TEST_F(TwoContexts, ForwardFloodLeavesOtherPeersAShareOfTheRoute) {
  // A forward past its share is flow control (the jam hears
  // TC_ERR_NO_CREDIT), said at debug level only.
  struct DebugLog {
    DebugLog() { tc_set_log_level(TC_LOG_DEBUG); }
    ~DebugLog() { tc_set_log_level(TC_LOG_WARN); }
  } Debug;
  Drive = Driver::Executor;
  Side *Far = nullptr;
  ASSERT_NO_FATAL_FAILURE(Far = createExtraSide("far receiver"));
  ASSERT_NE(Far, nullptr);
  uint16_t FarPort = 0;
  ASSERT_EQ(tc_listen(Far->Ctx, "127.0.0.1", 0), TC_OK);
  ASSERT_EQ(tc_listen_port(Far->Ctx, &FarPort), TC_OK);
  std::string Allow = "127.0.0.1:" + std::to_string(FarPort);
  Receiver.Params.forward_allow = Allow.c_str();
  ASSERT_NO_FATAL_FAILURE(start());
  Side *Second = nullptr;
  ASSERT_NO_FATAL_FAILURE(Second = createExtraSide("second sender"));
  ASSERT_NE(Second, nullptr);
  tc_peer_t *Other = nullptr;
  ASSERT_EQ(connectSides(*Second, Receiver, Port, &Other), TC_OK);
  ClosedAtEnd Close{{Other}};
  auto *Memory = receiverSymbol<uint8_t>("tc_stdlib_memory");
  ASSERT_NE(Memory, nullptr);
  constexpr uint64_t GoodRegion = 20480, FloodRegion = 24576;
  std::memset(Memory + GoodRegion, 0, 32);
  uint32_t Chain = element(Sender.Stdlib, "chain");
  auto Flood = chainPayload(FarPort, "put", putPayload(FloodRegion, "flood"));

  // The route is made by the first forward, while the far end runs.
  {
    Running FarRuns(Far->Ctx);
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Chain, TC_SEND_LOCAL, Flood.data(), Flood.size()), TC_OK);
    ASSERT_TRUE(progressUntil([&] { return stats(*Far).frames_executed_local == 1; },
                              "the far end ran the first forwarded frame"));
  }
  // Then it takes no more: its ring fills, then the route's queue, of
  // which the first sender may fill a quarter.
  constexpr uint64_t Frames = 4096 + 200;
  for (uint64_t I = 0; I < Frames; ++I)
    ASSERT_EQ(sendRetrying(Sender.Stdlib, Chain, TC_SEND_LOCAL, Flood.data(), Flood.size()), TC_OK);
  ASSERT_EQ(flush(), TC_OK) << "the receiver ran every frame of the first sender";
  EXPECT_GT(stats(Receiver).shares_full, 0u) << "forwards past its share were refused";

  auto Good = chainPayload(FarPort, "put", putPayload(GoodRegion, "forwarded"));
  ASSERT_EQ(tc_send(Other, Second->Stdlib, Chain, TC_SEND_LOCAL, Good.data(), Good.size()), TC_OK);
  ASSERT_EQ(tc_flush(Other, WaitMs), TC_OK) << describe();
  Running FarRuns(Far->Ctx);
  EXPECT_TRUE(progressUntil(
      [&] {
        return std::strcmp(reinterpret_cast<const char *>(Memory + GoodRegion), "forwarded") == 0;
      },
      "the second sender's forward ran at the far end"))
      << "far end ran " << stats(*Far).frames_executed_local << " frames";
  EXPECT_TRUE(logged("are its share of the queue"));
}

//===----------------------------------------------------------------------===//
// rieds pushed
//===----------------------------------------------------------------------===//

/// An attacker's pushes whose bytes never come take one place (its
/// share) of the few a receiver holds for pushes on their way: the good
/// sender's push is still taken (its file is no library: taken, and then
/// not loaded, TC_ERR_IO, rather than refused for want of room).
TEST_F(TwoContexts, RiedPushFloodLeavesTheOtherPeersPlaces) {
  Drive = Driver::Executor;
  Receiver.Params.flags = TC_CONTEXT_ACCEPT_RIEDS;
  ASSERT_NO_FATAL_FAILURE(start());
  setRendezvousTimeout(Receiver.Ctx, Hour);
  Side *Attacker = nullptr;
  ASSERT_NO_FATAL_FAILURE(Attacker = createExtraSide("attacker", BytesNeverCome));
  ASSERT_NE(Attacker, nullptr);
  tc_peer_t *Evil = nullptr;
  ASSERT_EQ(tc_connect(Attacker->Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Evil), TC_OK);
  ClosedAtEnd Close{{Evil}};
  static const std::vector<uint8_t> Body(64 << 10, 0x7f); // "x", a NUL, then the library
  RiedHeader H = {RiedMagic, 2, Body.size() - 2};
  for (size_t I = 0; I <= MaxRiedsArriving; ++I)
    ASSERT_NO_FATAL_FAILURE(sendByRendezvous(Evil, AmRied, &H, sizeof H, Body.data(), Body.size()));
  RiedHeader Malformed = {0, 2, Body.size() - 2};
  ASSERT_NO_FATAL_FAILURE(
      sendByRendezvous(Evil, AmRied, &Malformed, sizeof Malformed, Body.data(), Body.size()));
  ASSERT_TRUE(progressUntil([&] { return stats(Receiver).messages_refused == 1; },
                            "the receiver saw the attacker's last push"));
  EXPECT_EQ(stats(Receiver).shares_full, MaxRiedsArriving + 1 - MaxRiedsArrivingPerPeer);

  std::string Path = ::testing::TempDir() + "queue-shares-not-a-library.so";
  FILE *F = std::fopen(Path.c_str(), "w");
  ASSERT_NE(F, nullptr);
  std::fputs("not a library\n", F);
  std::fclose(F);
  // (It cannot load a file that is no library, and says so: TC_ERR_BAD_IMAGE.)
  EXPECT_EQ(tc_ried_push(Peer, Path.c_str(), WaitMs), TC_ERR_BAD_IMAGE) << describe();
  EXPECT_TRUE(logged("cannot load pushed ried")) << "the good sender's push was taken";
  std::remove(Path.c_str());
}

/// Answers to pushes and shipments that were never made are not queued
/// (they stayed in the sender's queues for ever, and crowded out real
/// answers): a receiver repeating them changes nothing but a counter.
TEST_F(TwoContexts, AnswersNobodyAskedForAreNotQueued) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer_t *Back = nullptr;
  ASSERT_EQ(tc_context_peer(Receiver.Ctx, 1, &Back), TC_OK);
  constexpr uint64_t Each = 100;
  RiedAck R = {RiedAckMagic, TC_OK};
  CodeAck C = {CodeAckMagic, TC_OK, Sender.Calls->Tag, 0, 0};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  for (uint64_t I = 0; I < Each; ++I)
    for (auto [Id, Header, Size] :
         {std::tuple<unsigned, const void *, size_t>{AmRiedAck, &R, sizeof R},
          {AmCodeAck, &C, sizeof C}}) {
      ucs_status_ptr_t Q = ucp_am_send_nbx(Back->Ep, Id, Header, Size, nullptr, 0, &P);
      ASSERT_FALSE(UCS_PTR_IS_ERR(Q));
      ASSERT_TRUE(progressUntil([&] { return !Q || ucp_request_check_status(Q) != UCS_INPROGRESS; },
                                "the answer left"));
      if (Q)
        ucp_request_free(Q);
    }
  ASSERT_TRUE(progressUntil([&] { return stats(Sender).messages_refused == 2 * Each; },
                            "the sender refused every answer"));
  EXPECT_TRUE(coreOf(Sender.Ctx)->Package->RiedAcks.empty());
  EXPECT_TRUE(coreOf(Sender.Ctx)->Code->CodeAcks.empty());
}

} // namespace

namespace {

//===----------------------------------------------------------------------===//
// deployment places
//===----------------------------------------------------------------------===//

/// Issue 41, item 6: a deployer's connections whose offers' bytes never
/// come hold one place between them, not every place: another deployer (a
/// job rank, proved) deploys meanwhile. Before, the four places were
/// taken per connection and a good peer's tc_deploy got TC_ERR_NO_CREDIT
/// until the held ones timed out (60 s then).
TEST_F(TwoContexts, ADeployerWhoseBytesNeverComeHoldsOnePlace) {
  Drive = Driver::Executor;
  Receiver.Params.code_trust = TC_CODE_TRUST_JOB;
  ASSERT_NO_FATAL_FAILURE(startUnconnected());
  setRendezvousTimeout(Receiver.Ctx, Hour); // the places alone decide here
  using namespace twochains::rt::test;
  std::vector<RankKey> Keys = keysOf({Receiver.Ctx, Sender.Ctx});
  makeRank(Receiver.Ctx, 0, Keys);
  makeRank(Sender.Ctx, 1, Keys);
  Side *Attacker = nullptr;
  ASSERT_NO_FATAL_FAILURE(Attacker = createExtraSide("attacker", BytesNeverCome));
  ASSERT_NE(Attacker, nullptr);
  ClosedAtEnd Close;
  // Offers of a manifest large enough to go by rendezvous, never sent.
  std::vector<uint8_t> Manifest(64 << 10, 'm');
  // Connected first: a connect progresses the attacker, which would send
  // the bytes of an offer made before it.
  for (size_t I = 0; I < MaxDeploymentsArriving; ++I) {
    tc_peer_t *Evil = nullptr;
    ASSERT_EQ(tc_connect(Attacker->Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Evil), TC_OK)
        << describe();
    Close.Peers.push_back(Evil);
  }
  for (size_t I = 0; I < MaxDeploymentsArriving; ++I) {
    DeployHeader H = {DeployOfferMagic, 1, I + 1, uint32_t(Manifest.size()), 0, Manifest.size()};
    ASSERT_NO_FATAL_FAILURE(sendByRendezvous(Close.Peers[I], AmDeploy, &H, sizeof H,
                                             Manifest.data(), Manifest.size()));
  }
  auto *Code = coreOf(Receiver.Ctx);
  auto Holding = [&] {
    std::lock_guard<std::recursive_mutex> G(Code->Lock);
    return Code->Code->Deployments.size();
  };
  ASSERT_TRUE(progressUntil(
      [&] { return Holding() + stats(Receiver).shares_full == MaxDeploymentsArriving; },
      "the receiver took or refused every offer of the attacker"))
      << describe();
  EXPECT_EQ(Holding(), MaxDeploymentsPerPeer) << "places the attacker holds";

  // The rank offers a deployment of its own (a manifest that does not
  // check out: nothing is loaded into this process, which other tests
  // share). It must get a place and be judged on what it offers, not be
  // told the receiver is busy.
  tc_peer_t *Good = nullptr;
  ASSERT_EQ(tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Good), TC_OK)
      << describe();
  Close.Peers.push_back(Good);
  const uint64_t Busy = stats(Receiver).shares_full;
  const char Junk[16] = "not a manifest";
  DeployHeader H = {DeployOfferMagic, 1, 99, sizeof Junk, 0, sizeof Junk};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t R = ucp_am_send_nbx(Good->Ep, AmDeploy, &H, sizeof H, Junk, sizeof Junk, &P);
  ASSERT_FALSE(UCS_PTR_IS_ERR(R));
  ASSERT_TRUE(progressUntil(
      [&] {
        if (R && ucp_request_check_status(R) != UCS_INPROGRESS) {
          ucp_request_free(R);
          R = nullptr;
        }
        tc_progress(Sender.Ctx, nullptr);
        return stats(Receiver).deployments_refused >= 1 || stats(Receiver).shares_full > Busy;
      },
      "the receiver judged the rank's offer"))
      << describe();
  EXPECT_EQ(stats(Receiver).shares_full, Busy)
      << "the rank's offer was refused as busy beside the attacker's held offers\n"
      << describe();
  EXPECT_EQ(stats(Receiver).deployments_refused, 1u) << "judged on its manifest";
}

//===----------------------------------------------------------------------===//
// answers sent: no copy outlives its send
//===----------------------------------------------------------------------===//

/// Sends, eager, a DEPLOY offer the receiver's default policy (package)
/// refuses from its header, and answers.
void offerDeployment(tc_peer_t *From, uint64_t Id) {
  DeployHeader H = {DeployOfferMagic, 0, Id, 0, 0, 0};
  sendRawMessage(From, AmDeploy, &H, sizeof H);
}

/// Sends, eager, a RIED push the receiver (which accepts no rieds by
/// default) refuses from its header, and answers.
void pushRied(tc_peer_t *From, uint64_t) {
  RiedHeader H = {RiedMagic, 4, 4};
  const char Body[8] = {'r', 'i', 'e', 'd', 0, 0, 0, 0};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t R = ucp_am_send_nbx(From->Ep, AmRied, &H, sizeof H, Body, sizeof Body, &P);
  ASSERT_FALSE(UCS_PTR_IS_ERR(R));
  while (R && ucp_request_check_status(R) == UCS_INPROGRESS)
    ucp_worker_progress(From->Ctx->Worker);
  if (R)
    ucp_request_free(R);
}

/// A peer that floods the receiver with control messages it refuses and
/// answers leaves the receiver no copy of its answers once they are sent
/// (issue 41, item 1: before, every answer's bytes were kept until the
/// connection closed, 22 -> 646 MB in 40 s). The bound: the answers still
/// in flight, at most a few dozen, during the flood and after.
class AnswerFlood : public TwoContexts,
                    public ::testing::WithParamInterface<std::tuple<const char *, int>> {};

TEST_P(AnswerFlood, KeepsNoCopiesOfTheAnswers) {
  const bool Ried = std::get<1>(GetParam()) == 1;
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  auto *R = reinterpret_cast<tc_context *>(Receiver.Ctx);
  constexpr unsigned Messages = 3000;
  constexpr size_t MaxKept = 64;
  auto Refused = [&] {
    return Ried ? stats(Receiver).messages_refused : stats(Receiver).deployments_refused;
  };
  auto MostKept = [&] {
    std::lock_guard<std::recursive_mutex> G(R->Lock);
    size_t Most = 0;
    for (auto &P : R->Accepted)
      Most = std::max(Most, P->Control->Sent.size());
    return Most;
  };
  size_t Most = 0;
  for (unsigned I = 0; I < Messages; ++I) {
    if (Ried)
      ASSERT_NO_FATAL_FAILURE(pushRied(Peer, I + 1));
    else
      ASSERT_NO_FATAL_FAILURE(offerDeployment(Peer, I + 1));
    if (I % 64 == 63) {
      // Both sides turn: the answers leave, the sender reads them.
      for (int T = 0; T < 16; ++T)
        tc_progress(Receiver.Ctx, nullptr), tc_progress(Sender.Ctx, nullptr);
      Most = std::max(Most, MostKept());
    }
  }
  ASSERT_TRUE(progressUntil(
      [&] {
        tc_progress(Sender.Ctx, nullptr);
        return Refused() >= Messages;
      },
      "the receiver refused and answered every message"))
      << describe();
  EXPECT_LE(Most, MaxKept) << "copies of answers kept while the flood went on";
  EXPECT_LE(MostKept(), MaxKept);
}

INSTANTIATE_TEST_SUITE_P(TwoContexts, AnswerFlood,
                         ::testing::Values(std::make_tuple("Deploy", 0),
                                           std::make_tuple("Ried", 1)),
                         [](const auto &Info) { return std::string(std::get<0>(Info.param)); });

} // namespace
