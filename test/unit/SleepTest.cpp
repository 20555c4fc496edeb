//===- SleepTest.cpp - Sleeping waits, woken by peers' stores -------------===//
//
// A side asleep in tc_wait or tc_flush is woken by what a peer stores
// straight into its memory (shared memory), by the AmWake the peer sends
// when it finds the side's flag in its credit line. Each sleep here is
// long (60 s): a wake that does not come leaves the waiting thread asleep,
// which the test sees (it then wakes the thread itself and fails); nothing
// is asserted on time.
//
//===----------------------------------------------------------------------===//
#include "BareClient.h"
#include "RawMessage.h"
#include "TwoContexts.h"

#include "base/Clock.h"
#include "context/Context.h"
#include "core/Peer.h"
#include "core/Polled.h"
#include "core/Sleep.h"
#include "wire/Wire.h"

#include <atomic>
#include <cstring>
#include <functional>
#include <netinet/in.h>
#include <string>
#include <thread>
#include <ucp/api/ucp.h>
#include <unistd.h>
#include <vector>

using namespace twochains::rt;

namespace {

/// The standard package's put: bytes at an offset of tc_stdlib_memory.
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

constexpr uint64_t SleepRegion = 20480;
constexpr int LongSleepMs = 60000;
/// How long the test waits for a sleeper that should have been woken
/// before it wakes it itself and fails.
constexpr auto WokenWithin = std::chrono::seconds(20);

/// Waits for Cond, for WokenWithin at most.
bool waitFor(const std::function<bool()> &Cond) {
  auto Deadline = std::chrono::steady_clock::now() + WokenWithin;
  while (!Cond()) {
    if (std::chrono::steady_clock::now() > Deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

/// A context run by a thread of its own that sleeps in tc_wait between
/// passes until Enough() holds.
class SleepingThread {
public:
  SleepingThread(tc_context_t *Ctx, std::function<bool()> Enough)
      : Ctx(Ctx), Thread([this, Enough] {
          while (!Enough()) {
            tc_progress(this->Ctx, nullptr);
            if (Enough())
              break;
            tc_wait(this->Ctx, LongSleepMs);
          }
          Done = true;
        }) {}
  ~SleepingThread() { stop(); }
  /// Waits for it to end; if it does not (no wake came), wakes it until it
  /// does. False in that case.
  bool join() {
    bool Woken = waitFor([&] { return Done.load(); });
    stop();
    return Woken;
  }

  std::atomic<bool> Done{false};

private:
  void stop() {
    while (!Done)
      wakeContext(Ctx), std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (Thread.joinable())
      Thread.join();
  }
  tc_context_t *Ctx;
  std::thread Thread;
};

} // namespace

class Sleeping : public TwoContexts {
protected:
  /// Both contexts, the receiver run by the test, connected by shared
  /// memory with direct stores (skipped where UCX maps nothing).
  void startDirect() {
    Drive = Driver::TestThread;
    ASSERT_NO_FATAL_FAILURE(start());
    if (stats(Sender).peers_direct != 1)
      GTEST_SKIP() << "no direct stores between the two contexts (no shared memory)";
    Memory = receiverSymbol<uint8_t>("tc_stdlib_memory");
    ASSERT_NE(Memory, nullptr);
    std::memset(Memory + SleepRegion, 0, 64);
    Put = element(Sender.Stdlib, "put");
  }
  tc_stats_t statsOf(tc_context_t *Ctx) const {
    tc_stats_t Out = {};
    tc_context_stats(Ctx, &Out);
    return Out;
  }
  /// Until Ctx's thread has gone to sleep (at least Sleeps times).
  bool asleep(tc_context_t *Ctx, uint64_t Sleeps = 1) {
    return waitFor([&] { return statsOf(Ctx).sleeps >= Sleeps; });
  }
  uint8_t *Memory = nullptr;
  uint32_t Put = 0;
};

/// (a) A receiver asleep in tc_wait for 60 s is woken by a frame the
/// sender stores into its ring, and runs it.
TEST_F(Sleeping, AFrameStoredIntoTheRingWakesTheReceiver) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  tc_context_t *R = Receiver.Ctx;
  SleepingThread Thread(R, [&] { return statsOf(R).frames_executed_local >= 1; });
  ASSERT_TRUE(asleep(R)) << "the receiver never went to sleep\n" << describe();
  auto Payload = putPayload(SleepRegion, "woken by a store");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
            TC_OK);
  EXPECT_TRUE(Thread.join()) << "the receiver slept on after the frame landed\n" << describe();
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SleepRegion), "woken by a store");
  EXPECT_GE(stats(Sender).wakes_sent, 1u);
  EXPECT_GE(stats(Receiver).wakes_received, 1u);
}

/// (b) A sender asleep in tc_flush is woken by the credit report the
/// receiver stores into its credit line.
TEST_F(Sleeping, ACreditReportWakesAFlushingSender) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  auto Payload = putPayload(SleepRegion, "flushed");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
            TC_OK);
  std::atomic<bool> Flushed{false}, SenderSlept{false}, Woken{false};
  std::thread Helper([&] {
    // The receiver takes the frame only once the sender sleeps.
    SenderSlept = asleep(Sender.Ctx);
    Woken = waitFor([&] {
      tc_progress(Receiver.Ctx, nullptr);
      return Flushed.load();
    });
    while (!Flushed)
      wakeContext(Sender.Ctx), std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  tc_status_t St = tc_flush(Peer, LongSleepMs);
  Flushed = true;
  Helper.join();
  EXPECT_EQ(St, TC_OK);
  EXPECT_TRUE(SenderSlept) << "the sender never slept in tc_flush\n" << describe();
  EXPECT_TRUE(Woken) << "the credit report did not wake the sender\n" << describe();
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SleepRegion), "flushed");
  EXPECT_GE(stats(Receiver).wakes_sent, 1u);
  // The wake made the fd readable; its handler runs at the next progress.
  EXPECT_TRUE(progressUntil([&] { return stats(Sender).wakes_received >= 1; },
                            "the sender took the receiver's wake"));
}

/// A receiver that sleeps in tc_wait right after running a frame reports
/// its credits first: a sender flushing to it is not left waiting.
TEST_F(Sleeping, AReceiverReportsItsCreditsBeforeItSleeps) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  std::atomic<bool> Flushed{false};
  tc_context_t *R = Receiver.Ctx;
  SleepingThread Thread(R, [&] { return Flushed.load(); });
  ASSERT_TRUE(asleep(R)) << describe();
  auto Payload = putPayload(SleepRegion, "reported");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
            TC_OK);
  std::thread Waker([&] {
    // Bounds the test where no report comes: the flush is woken to fail.
    if (!waitFor([&] { return Flushed.load(); }))
      while (!Flushed)
        wakeContext(Sender.Ctx), std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  auto Start = std::chrono::steady_clock::now();
  tc_status_t St = tc_flush(Peer, int(std::chrono::duration_cast<std::chrono::milliseconds>(
                                          WokenWithin)
                                          .count()));
  Flushed = true;
  Waker.join();
  wakeContext(R);
  EXPECT_TRUE(Thread.join());
  EXPECT_EQ(St, TC_OK) << "the flush never saw the receiver's credits ("
                       << std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - Start)
                              .count()
                       << " ms)\n"
                       << describe();
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SleepRegion), "reported");
}

/// A connection just made and quiet stays warm for QuietBeforeColdNs,
/// however many control turns pass meanwhile: the sender's first frames,
/// sent as its tc_connect returns, do not meet a closed ring. (With eight
/// turns alone, 8 ms, a loaded host's sender found the ring closed after
/// its first frame.) Once that time has passed it goes cold, as the test
/// below shows.
TEST_F(Sleeping, AQuietRingStaysWarmForItsFirstTenthOfASecond) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  tc_context_t *R = Receiver.Ctx;
  CoreContext *Core = coreOf(R);
  ASSERT_EQ(Core->Accepted.size(), 1u);
  tc_peer *Quiet = Core->Accepted[0].get();
  // Twice the turns that once made it cold; a cold ring counts no more.
  ASSERT_TRUE(progressUntil([&] { return Quiet->QuietTurns >= 2 * QuietTurnsBeforeCold; },
                            "the receiver's turns while the ring is quiet"))
      << "rings cooled: " << statsOf(R).rings_cooled;
  uint64_t QuietNs = nowNs() - Quiet->QuietSinceNs;
  if (QuietNs >= QuietBeforeColdNs)
    GTEST_SKIP() << "the host held the test " << QuietNs / 1'000'000
                 << " ms: the ring may go cold by now";
  EXPECT_EQ(statsOf(R).rings_cooled, 0u);
  EXPECT_FALSE(Quiet->Cold);
}

/// A sender asleep in tc_send_wait because the receiver closed its cold
/// ring is woken when the receiver opens it again: the opening stores into
/// the sender's credit line, which must look at its sleep flag as a credit
/// report does.
TEST_F(Sleeping, AReopenedRingWakesTheSenderWaitingForIt) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  tc_context_t *R = Receiver.Ctx;
  // Quiet a while: the receiver makes the ring cold and closes it past
  // the next frame.
  ASSERT_TRUE(progressUntil([&] { return statsOf(R).rings_cooled >= 1; },
                            "the receiver made the quiet ring cold"));
  auto First = putPayload(SleepRegion, "first");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, First.data(), First.size()), TC_OK);
  uint64_t WakesBefore = statsOf(R).wakes_sent;
  // The second frame is past the limit: the sender asks for the ring to be
  // opened and waits, asleep, until it is.
  std::atomic<bool> Sent{false};
  std::atomic<tc_status_t> St{TC_ERR_INCOMPLETE};
  std::thread SenderThread([&] {
    auto Second = putPayload(SleepRegion + 32, "second");
    St = tc_send_wait(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Second.data(), Second.size(),
                      LongSleepMs);
    Sent = true;
  });
  bool Slept = asleep(Sender.Ctx);
  // The receiver answers the doorbell and opens the ring; it then runs
  // both frames.
  bool Woken = waitFor([&] {
    tc_progress(R, nullptr);
    return Sent.load() && statsOf(R).frames_executed_local >= 2;
  });
  while (!Sent)
    wakeContext(Sender.Ctx), std::this_thread::sleep_for(std::chrono::milliseconds(1));
  SenderThread.join();
  EXPECT_TRUE(Slept) << "the sender never slept waiting for the ring\n" << describe();
  EXPECT_EQ(St.load(), TC_OK);
  EXPECT_TRUE(Woken) << "the frames did not run\n" << describe();
  EXPECT_GE(statsOf(R).wakes_sent, WakesBefore + 1)
      << "opening the ring did not wake the sender\n" << describe();
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SleepRegion + 32), "second");
}

/// (c) A peer that takes its flag and stores without waking delays only
/// its own frame: an honest peer's frame still wakes the receiver, which
/// then runs both.
TEST_F(Sleeping, APeerThatNeverWakesDelaysOnlyItself) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  Side *Liar = createExtraSide("liar");
  ASSERT_NE(Liar, nullptr);
  tc_peer_t *LiarPeer = nullptr;
  ASSERT_EQ(connectSides(*Liar, Receiver, Port, &LiarPeer), TC_OK) << describe();
  if (statsOf(Liar->Ctx).peers_direct != 1)
    GTEST_SKIP() << "no direct stores from the third context";
  tc_context_t *R = Receiver.Ctx;
  SleepingThread Thread(R, [&] { return statsOf(R).frames_executed_local >= 2; });
  ASSERT_TRUE(asleep(R)) << describe();
  // The liar clears the flag the receiver set in its line, then stores.
  __atomic_store_n(const_cast<uint64_t *>(&LiarPeer->Tx->CreditWord[CreditWordSleep]), 0,
                   __ATOMIC_RELAXED);
  auto Lie = putPayload(SleepRegion + 32, "liar");
  ASSERT_EQ(tc_send(LiarPeer, Liar->Stdlib, Put, TC_SEND_LOCAL, Lie.data(), Lie.size()), TC_OK);
  auto Honest = putPayload(SleepRegion, "honest");
  ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Honest.data(), Honest.size()), TC_OK);
  EXPECT_TRUE(Thread.join()) << "the honest peer's frame did not wake the receiver\n" << describe();
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SleepRegion), "honest");
  EXPECT_STREQ(reinterpret_cast<const char *>(Memory + SleepRegion + 32), "liar");
  EXPECT_EQ(statsOf(Liar->Ctx).wakes_sent, 0u);
  EXPECT_GE(stats(Sender).wakes_sent, 1u);
  tc_peer_close(LiarPeer);
}

/// (d) AmWake is taken from a welcomed peer only: from an endpoint that
/// never authenticated it is refused and counted.
TEST_F(Sleeping, AWakeFromAnUnauthenticatedEndpointIsRefused) {
  ASSERT_NO_FATAL_FAILURE(start()); // the receiver's executor answers
  // A bare UCX endpoint to the receiver's port, no handshake.
  BareClient Client;
  ASSERT_NO_FATAL_FAILURE(Client.connect(Port));
  uint64_t RefusedBefore = stats(Receiver).messages_refused;
  constexpr unsigned Wakes = 8;
  for (unsigned I = 0; I < Wakes; ++I) {
    ASSERT_NO_FATAL_FAILURE(Client.send(0, AmWake, nullptr, 0));
    Client.flush();
  }
  EXPECT_TRUE(progressUntil(
      [&] {
        Client.progress();
        return stats(Receiver).messages_refused >= RefusedBefore + Wakes;
      },
      "the receiver refused every wake from the bare endpoint"));
  EXPECT_EQ(stats(Receiver).wakes_received, 0u);

  // The same message from the welcomed sender is taken (and only counted).
  ucp_request_param_t Q = {};
  Q.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  Q.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t R = ucp_am_send_nbx(Peer->Ep, AmWake, nullptr, 0, nullptr, 0, &Q);
  ASSERT_FALSE(UCS_PTR_IS_ERR(R));
  if (R)
    ucp_request_free(R);
  EXPECT_TRUE(progressUntil(
      [&] {
        ucp_worker_progress(Sender.Ctx->Worker);
        return stats(Receiver).wakes_received == 1;
      },
      "the receiver took the welcomed peer's wake"));
  EXPECT_EQ(stats(Receiver).messages_refused, RefusedBefore + Wakes);

}

namespace {
/// When the test's feature has work on the clock (NoDueTime: none).
std::atomic<uint64_t> TestDueNs{NoDueTime};
uint64_t testDue(CoreContext *) { return TestDueNs.load(); }
} // namespace

/// A side asleep in tc_wait for 60 s, with nothing coming, wakes when a
/// feature of its context has work on the clock (a retry, a time limit),
/// which no message announces.
TEST_F(Sleeping, ASleepWakesWhenWorkOnTheClockIsDue) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  tc_context_t *S = Sender.Ctx;
  addDueTime(S, testDue);
  std::atomic<bool> Returned{false};
  uint64_t SleepsBefore = statsOf(S).sleeps;
  // Until it has slept once (a look may find something and not sleep).
  std::thread Sleeper([&] {
    while (statsOf(S).sleeps == SleepsBefore) {
      tc_progress(S, nullptr);
      TestDueNs = nowNs() + 50'000'000;
      tc_wait(S, LongSleepMs);
    }
    Returned = true;
  });
  bool Woken = waitFor([&] { return Returned.load(); });
  TestDueNs = NoDueTime;
  while (!Returned)
    wakeContext(S), std::this_thread::sleep_for(std::chrono::milliseconds(1));
  Sleeper.join();
  EXPECT_TRUE(Woken) << "the sleep did not end at the due time\n" << describe();
  // Due already: arming for an event loop says "not now".
  TestDueNs = nowNs();
  int MaxMs = 0;
  EXPECT_EQ(tc_context_arm(S, &MaxMs), 0);
  TestDueNs = nowNs() + 5'000'000'000ull;
  ASSERT_EQ(tc_context_arm(S, &MaxMs), 1);
  EXPECT_GT(MaxMs, 0);
  EXPECT_LE(MaxMs, 5000);
  TestDueNs = NoDueTime;
}

/// A flush that waits for a receiver slow to run (it starts DelayMs late):
/// the sleeps the sender took.
class SleepingFlush : public Sleeping {
protected:
  uint64_t sleepsOfASlowFlush(tc_wait_mode_t Mode, unsigned DelayMs = 20) {
    Sender.Params.wait_mode = Mode;
    startDirect();
    if (HasFatalFailure() || IsSkipped())
      return 0;
    auto Payload = putPayload(SleepRegion, "slow");
    EXPECT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
              TC_OK);
    std::atomic<bool> Flushed{false};
    std::thread Helper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(DelayMs));
      while (!Flushed)
        tc_progress(Receiver.Ctx, nullptr);
    });
    EXPECT_EQ(tc_flush(Peer, LongSleepMs), TC_OK);
    Flushed = true;
    Helper.join();
    return stats(Sender).sleeps;
  }
};

/// With TC_WAIT_POLL the runtime's waits never sleep (dedicated cores).
TEST_F(SleepingFlush, PollModeNeverSleeps) { EXPECT_EQ(sleepsOfASlowFlush(TC_WAIT_POLL), 0u); }

/// By default the same flush sleeps once it has polled a while.
TEST_F(SleepingFlush, DefaultModeSleeps) { EXPECT_GE(sleepsOfASlowFlush(TC_WAIT_AUTO), 1u); }

/// A welcomed peer that floods this side with wakes (each makes its fd
/// readable, a wake-up and a handler call) sends more than one a sleep:
/// past a small slack it is ended, the rest refused (issue 41, item 9).
TEST_F(Sleeping, AWakeFloodEndsThePeer) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  constexpr unsigned Wakes = 2000;
  for (unsigned I = 0; I < Wakes; ++I)
    ASSERT_NO_FATAL_FAILURE(sendRawMessage(Peer, AmWake, nullptr, 0));
  // Every wake is taken or refused, or the rest go with the connection:
  // the receiver ends the peer (its housekeeping closes the endpoint, and
  // UCX drops what is still unread on it), which the sender sees.
  ASSERT_TRUE(progressUntil(
      [&] {
        ucp_worker_progress(Sender.Ctx->Worker);
        return stats(Receiver).wakes_received + stats(Receiver).messages_refused >= Wakes ||
               Peer->Failed;
      },
      "the receiver took every wake, or ended the peer"))
      << describe();
  EXPECT_LE(stats(Receiver).wakes_received, 300u) << "the flood was taken as wakes";
  EXPECT_GE(stats(Receiver).messages_refused, 1u);
  EXPECT_TRUE(stats(Receiver).messages_refused >= Wakes - 300 || Peer->Failed)
      << "wakes past the slack were neither refused nor ended with the peer";
  EXPECT_TRUE(logged("wakes; this side slept"));
}

/// A look before a sleep raises the flags whether or not the sleep
/// follows (work found first): a good peer that takes each flag and wakes
/// this side once for it is no flood. Counted by sleeps, 300 such looks
/// (past the slack of 256) cut the good peer off.
TEST_F(Sleeping, WakesForLooksThatFoundWorkAreNoFlood) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  constexpr unsigned Looks = 300;
  auto *R = coreOf(Receiver.Ctx);
  uint64_t SleptBefore = statsOf(Receiver.Ctx).sleeps;
  for (unsigned I = 0, Tries = 0; stats(Sender).wakes_sent < Looks; ++I) {
    ASSERT_LT(++Tries, 4 * Looks) << "looks raised no flag for the sender to take\n" << describe();
    uint64_t MaxSleepNs = 0;
    armSleep(R, MaxSleepNs); // the flags raised, unless it found work first; no sleep follows
    uint64_t Sent = stats(Sender).wakes_sent, Woken = stats(Receiver).wakes_received;
    auto Payload = putPayload(SleepRegion, "look " + std::to_string(I));
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size()),
              TC_OK);
    if (stats(Sender).wakes_sent == Sent)
      continue; // that look found work before raising the flags
    ASSERT_TRUE(
        progressUntil([&] { return stats(Receiver).wakes_received > Woken || Peer->Failed; },
                      "the receiver took the wake"));
    ASSERT_FALSE(Peer->Failed) << "the good peer was cut off after " << stats(Sender).wakes_sent
                               << " wakes\n"
                               << describe();
  }
  EXPECT_EQ(statsOf(Receiver.Ctx).sleeps, SleptBefore) << "a look slept";
  EXPECT_EQ(stats(Receiver).messages_refused, 0u);
  EXPECT_FALSE(logged("wakes; this side slept"));
  ASSERT_EQ(flush(), TC_OK);
}

namespace {
/// The sender's turn, wrapped: the first turn after the flush has slept
/// connects the handle (as a background connect's housekeeping binds a
/// job handle) and leaves nothing behind that would wake a sleep. The
/// first sleep ends at a due time (no event).
struct HandleBinding {
  unsigned (*RealTurn)(CoreContext *) = nullptr;
  tc_peer *Handle = nullptr, *Connection = nullptr;
  std::atomic<uint64_t> DueNs{NoDueTime};
  std::atomic<uint64_t> SleepsAtBind{~0ull};
} Binding;

uint64_t sleepsOf(CoreContext *Ctx) {
  tc_stats_t S = {};
  tc_context_stats(static_cast<tc_context_t *>(Ctx), &S);
  return S.sleeps;
}

unsigned turnThatConnects(CoreContext *Ctx) {
  unsigned Ran = Binding.RealTurn(Ctx);
  if (!Binding.Handle->Bound && sleepsOf(Ctx) >= 1) {
    Binding.SleepsAtBind = sleepsOf(Ctx);
    Binding.DueNs = NoDueTime;
    __atomic_store_n(&Binding.Handle->Bound, Binding.Connection, __ATOMIC_RELEASE);
  }
  return Ran;
}

uint64_t bindingDue(CoreContext *) { return Binding.DueNs; }
} // namespace

/// tc_flush on a handle (a job rank's) waits for its connection. The turn
/// that makes it may leave nothing to wake a sleep: the flush looks at the
/// handle after each turn, before it sleeps, rather than sleeping until
/// its deadline on a connection already made (examples/graph at 64 ranks
/// stalled a minute in most runs that way without the 10 ms cap).
TEST_F(Sleeping, AHandleConnectedByATurnIsSeenBeforeTheSleep) {
  Drive = Driver::TestThread;
  ASSERT_NO_FATAL_FAILURE(start());
  tc_peer Handle;
  Handle.Proxy = true;
  Handle.Ctx = Sender.Ctx;
  Handle.Name = "a handle";
  Binding.RealTurn = Sender.Ctx->Progress;
  Binding.Handle = &Handle;
  Binding.Connection = Peer;
  Binding.DueNs = nowNs() + 20'000'000;
  Sender.Ctx->Progress = turnThatConnects;
  addDueTime(Sender.Ctx, bindingDue);
  std::atomic<bool> Flushed{false};
  std::thread Helper([&] {
    // A flush that sleeps again is woken after a while, to fail.
    if (!waitFor([&] { return Flushed.load(); }))
      while (!Flushed)
        wakeContext(Sender.Ctx), std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  tc_status_t St = tc_flush(&Handle, LongSleepMs);
  Flushed = true;
  Helper.join();
  Sender.Ctx->Progress = Binding.RealTurn;
  EXPECT_EQ(St, TC_OK);
  ASSERT_NE(Binding.SleepsAtBind.load(), ~0ull) << "the flush never slept\n" << describe();
  EXPECT_EQ(statsOf(Sender.Ctx).sleeps, Binding.SleepsAtBind.load())
      << "the flush slept after its turn had connected the handle\n"
      << describe();
}

/// A ring that goes cold gives back the pages of every slot its frames
/// used since it last went cold, and keeps only its next slot's: also when
/// those frames wrapped past the ring's end, and when most of its slots
/// were given back before (only the slots since are given back again).
TEST_F(Sleeping, AColdRingKeepsOnlyItsNextSlotAcrossItsWrap) {
  ASSERT_NO_FATAL_FAILURE(startDirect());
  tc_context_t *R = Receiver.Ctx;
  ASSERT_EQ(tc_peer_aggregate(Peer, 0), TC_OK); // a frame a slot
  uint32_t Slots = coreOf(R)->Slots;
  uint64_t Page = uint64_t(sysconf(_SC_PAGESIZE));
  uint64_t Stride = slotStride(coreOf(R)->SlotSize);
  // The next slot's pages, and the ring's first and last part pages.
  uint64_t Kept = ((Stride + Page - 1) / Page + 1) * Page + 2 * Page;
  uint64_t Sent = 0;
  for (uint64_t Cooled = 1; Cooled <= 3; ++Cooled) {
    // Three quarters of the ring each time: the second round wraps.
    for (uint32_t I = 0; I < Slots * 3 / 4; ++I) {
      auto Payload = putPayload(SleepRegion, "frame");
      tc_status_t St;
      ASSERT_TRUE(progressUntil(
          [&] {
            St = tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, Payload.data(), Payload.size());
            return St != TC_ERR_NO_CREDIT;
          },
          "credit for frame " + std::to_string(I)));
      ASSERT_EQ(St, TC_OK);
      ++Sent;
    }
    ASSERT_TRUE(progressUntil([&] { return statsOf(R).frames_executed_local == Sent; },
                              "the receiver ran the frames"));
    EXPECT_GT(statsOf(R).ring_bytes_resident, Kept) << "the frames touched no pages";
    ASSERT_TRUE(progressUntil([&] { return statsOf(R).rings_cooled >= Cooled; },
                              "the receiver made the quiet ring cold"));
    EXPECT_LE(statsOf(R).ring_bytes_resident, Kept)
        << "round " << Cooled << ": the cold ring kept pages of slots its frames used";
  }
}
