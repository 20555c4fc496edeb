//===- TwoContexts.h - A receiver and a sender in one process, over UCX ---===//
//
// A GoogleTest fixture in the spirit of UCX's gtest "entities": two
// Two-Chains contexts in this one process, a receiver listening on
// 127.0.0.1 (port 0: any free port) and a sender connected to it over UCX,
// each with the standard package and the unit tests' calls package loaded
// (both roles). Handshakes, sends, flushes and calls are then unit-tested
// without starting processes.
//
//   TEST_F(TwoContexts, Example) {
//     Receiver.Params.slot_size = 256;           // anything, before start()
//     ASSERT_NO_FATAL_FAILURE(start());          // create, load, listen, connect
//     uint32_t Put = element(Sender.Stdlib, "put");
//     ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Put, TC_SEND_LOCAL, P, N), TC_OK);
//     ASSERT_TRUE(progressUntil([&] { return stats(Receiver).frames_executed_local == 1; },
//                               "the receiver ran the Local frame"));
//     EXPECT_EQ(flush(), TC_OK);
//   }
//
// Who runs the receiver (Driver, chosen before start()):
//   Executor    its executor thread, started before the sender connects (it
//               answers the handshake) and stopped at teardown;
//   TestThread  the test's own thread, through progressUntil(); a helper
//               thread progresses it while something waits for it
//               (whileReceiverRuns: connecting, tc_flush, tc_call), as
//               bench/frame-cost.c answers its handshake.
// The sender is only ever called from the test's thread.
//
// Every wait is bounded (WaitMs, ConnectTimeoutMs) and fails with what it
// waited for and both sides' counters; nothing asserts on time. What the
// runtime logs is collected (the log handler) and printed if the test fails.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_TEST_UNIT_TWOCONTEXTS_H
#define TWOCHAINS_TEST_UNIT_TWOCONTEXTS_H

#include "twochains/twochains.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <list>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

/// The standard package's server_side_sum: adds the int32s to tc_stdlib_total.
inline std::vector<int32_t> sumPayload(size_t Count, int32_t First) {
  std::vector<int32_t> V(Count);
  for (size_t I = 0; I < Count; ++I)
    V[I] = First + int32_t(I);
  return V;
}

/// An environment variable set while it lives (UCX and the runtime read
/// theirs when a context is made).
class ScopedEnv {
public:
  ScopedEnv(const char *Name, const char *Value) : Name(Name) {
    if (const char *V = std::getenv(Name))
      Old = V;
    setenv(Name, Value, 1);
  }
  ~ScopedEnv() {
    if (Old)
      setenv(Name, Old->c_str(), 1);
    else
      unsetenv(Name);
  }

private:
  const char *Name;
  std::optional<std::string> Old;
};

class TwoContexts : public ::testing::Test {
public:
  enum class Driver { Executor, TestThread };

  /// One context and the packages loaded for it.
  struct Side {
    explicit Side(const char *Name) : Name(Name) {
      Params.version = TC_CONTEXT_PARAMS_VERSION;
      // Not TC_MAILBOX_DEFAULT, which the environment could change.
      Params.mailbox_mode = TC_MAILBOX_CODE_CACHE;
    }
    const char *Name;
    /// Set before start() / createContexts(); key fields are filled from Key.
    tc_context_params_t Params = {};
    /// The job's key (16 to 4096 bytes); empty: none.
    std::string Key;
    tc_context_t *Ctx = nullptr;
    tc_package_t *Stdlib = nullptr; ///< the standard package, both roles
    tc_package_t *Calls = nullptr;  ///< unitcalls (jam echo answers calls), both roles
  };

  Side Receiver{"receiver"}, Sender{"sender"};
  Driver Drive = Driver::Executor;
  /// The sender's connection to the receiver, once connect() succeeded.
  tc_peer_t *Peer = nullptr;
  /// Where the receiver listens (127.0.0.1), once it does.
  uint16_t Port = 0;
  int ConnectTimeoutMs = 10000;
  /// The bound of every other wait: generous, since the machine may be
  /// busy; a working runtime takes milliseconds.
  int WaitMs = 5000;

  // Per-test parameters, for both sides at once (before start()).
  void setKey(const std::string &Key) { Receiver.Key = Sender.Key = Key; }
  void setSlotSize(uint32_t Bytes) { Receiver.Params.slot_size = Sender.Params.slot_size = Bytes; }
  void setSlots(uint32_t Slots) { Receiver.Params.slots = Sender.Params.slots = Slots; }
  void setMailboxMode(tc_mailbox_mode_t Mode) {
    Receiver.Params.mailbox_mode = Sender.Params.mailbox_mode = Mode;
  }

  /// Creates both contexts and loads and adds the packages. Fatal failures:
  /// call it under ASSERT_NO_FATAL_FAILURE.
  void createContexts() {
    ASSERT_EQ(Receiver.Ctx, nullptr) << "createContexts() twice";
    ASSERT_NO_FATAL_FAILURE(createSide(Receiver));
    ASSERT_NO_FATAL_FAILURE(createSide(Sender));
  }

  /// Listens (the first time), then connects the sender to the receiver
  /// while the receiver answers the handshake (its executor, or a helper
  /// thread). Returns tc_connect's status; Peer is set on TC_OK.
  tc_status_t connect() {
    if (!Receiver.Ctx || !Sender.Ctx) {
      ADD_FAILURE() << "connect() before createContexts()";
      return TC_ERR_INVALID_PARAM;
    }
    if (!Port) {
      if (tc_status_t St = tc_listen(Receiver.Ctx, "127.0.0.1", 0); St != TC_OK) {
        ADD_FAILURE() << "the receiver cannot listen on 127.0.0.1: " << tc_status_string(St);
        return St;
      }
      if (tc_listen_port(Receiver.Ctx, &Port) != TC_OK || !Port) {
        ADD_FAILURE() << "tc_listen_port gave no port after tc_listen";
        return TC_ERR_IO;
      }
    }
    if (Drive == Driver::Executor && !ExecutorStarted) {
      if (tc_status_t St = tc_executor_start(Receiver.Ctx); St != TC_OK) {
        ADD_FAILURE() << "tc_executor_start(receiver): " << tc_status_string(St);
        return St;
      }
      ExecutorStarted = true;
    }
    tc_peer_t *Connected = nullptr;
    tc_status_t St = whileReceiverRuns(
        [&] { return tc_connect(Sender.Ctx, "127.0.0.1", Port, ConnectTimeoutMs, &Connected); });
    if (St == TC_OK)
      Peer = Connected;
    return St;
  }

  /// createContexts() and a connect() that must succeed.
  void start() {
    ASSERT_NO_FATAL_FAILURE(createContexts());
    tc_status_t St = connect();
    ASSERT_EQ(St, TC_OK) << "tc_connect: " << tc_status_string(St) << "\n" << describe();
    ASSERT_NE(Peer, nullptr);
  }

  /// Another package, loaded for the test and unloaded at teardown, after
  /// the contexts (null, and a failure, if it does not load).
  /// Both contexts, and the package "unitmissing" loaded on the sender only
  /// (the receiver could not: its jam imports a symbol nothing defines),
  /// then connected.
  void connectWithSenderOnlyPackage(tc_package_t *&Missing) {
    ASSERT_NO_FATAL_FAILURE(createContexts());
    Missing = loadPackage(TC_TEST_MISSING_PREFIX, "unitmissing", TC_PACKAGE_SENDER);
    ASSERT_NE(Missing, nullptr);
    ASSERT_EQ(tc_context_add_package(Sender.Ctx, Missing), TC_OK);
    ASSERT_EQ(connect(), TC_OK) << describe();
  }

  /// Both contexts as start() makes them, without the connection between
  /// them (closed): a test that connects its own way.
  void startUnconnected() {
    ASSERT_NO_FATAL_FAILURE(start());
    tc_peer_close(Peer);
    Peer = nullptr;
  }

  /// A third context (an attacker, a hostile receiver, a second good
  /// peer), owned here, created with its packages like the two and
  /// destroyed at teardown before them. Its UCX configuration may differ:
  /// Environment's variables are set while it is created (UCX reads its
  /// configuration then) and restored after. Key: the job's key it holds
  /// (none if empty). Call under ASSERT_NO_FATAL_FAILURE; null if it failed.
  Side *createExtraSide(
      const char *Name,
      const std::vector<std::pair<const char *, const char *>> &Environment = {},
      const std::string &Key = "") {
    ExtraSides.emplace_back(Name);
    Side &S = ExtraSides.back();
    S.Key = Key;
    std::vector<std::pair<const char *, std::optional<std::string>>> Saved;
    for (auto &[Variable, Value] : Environment) {
      const char *Old = std::getenv(Variable);
      Saved.push_back({Variable, Old ? std::optional<std::string>(Old) : std::nullopt});
      setenv(Variable, Value, 1);
    }
    createSide(S);
    for (auto &[Variable, Value] : Saved)
      if (Value)
        setenv(Variable, Value->c_str(), 1);
      else
        unsetenv(Variable);
    return S.Ctx ? &S : nullptr;
  }

  /// Connects From to To (listening on 127.0.0.1 first, if it does not
  /// yet), To answering the handshake on a helper thread that progresses
  /// it until tc_connect returns; after that To is progressed only by
  /// whoever calls tc_progress on it. Returns tc_connect's status.
  tc_status_t connectSides(Side &From, Side &To, uint16_t &ToPort, tc_peer_t **Out) {
    if (!ToPort) {
      if (tc_status_t St = tc_listen(To.Ctx, "127.0.0.1", 0); St != TC_OK)
        return St;
      if (tc_listen_port(To.Ctx, &ToPort) != TC_OK || !ToPort)
        return TC_ERR_IO;
    }
    std::atomic<bool> Stop{false};
    std::thread Helper([&] {
      for (unsigned Turn = 1; !Stop.load(std::memory_order_relaxed); ++Turn) {
        tc_progress(To.Ctx, nullptr);
        if (Turn % 64 == 0)
          std::this_thread::yield();
      }
    });
    tc_status_t St = tc_connect(From.Ctx, "127.0.0.1", ToPort, ConnectTimeoutMs, Out);
    Stop = true;
    Helper.join();
    return St;
  }

  tc_package_t *loadPackage(const char *Prefix, const char *Name, uint32_t Roles) {
    tc_package_t *Pkg = loadOne(Prefix, Name, Roles);
    if (Pkg)
      ExtraPackages.push_back(Pkg);
    return Pkg;
  }

  /// The ID of a named element of Pkg (a failure if there is none).
  uint32_t element(const tc_package_t *Pkg, const char *Name) {
    uint32_t Id = UINT32_MAX;
    EXPECT_EQ(tc_package_find(Pkg, Name, &Id), TC_OK) << "no element '" << Name << "'";
    return Id;
  }

  /// A variable the receiver's rieds define (the receiver's package).
  /// In one process both sides share the rieds' memory: what the receiver's
  /// jams write is read here, and only a jam that ran can have written it.
  template <typename T> T *receiverSymbol(const char *Name, tc_package_t *Pkg = nullptr) {
    void *P = tc_package_symbol(Pkg ? Pkg : Receiver.Stdlib, Name);
    EXPECT_NE(P, nullptr) << "no symbol '" << Name << "' in the receiver's rieds";
    return static_cast<T *>(P);
  }

  tc_stats_t stats(const Side &S) const {
    tc_stats_t Out = {};
    EXPECT_EQ(tc_context_stats(S.Ctx, &Out), TC_OK);
    return Out;
  }
  tc_peer_stats_t peerStats(const tc_peer_t *P) const {
    tc_peer_stats_t Out = {};
    EXPECT_EQ(tc_peer_stats(P, &Out), TC_OK);
    return Out;
  }

  /// Progresses the sender (and the receiver, when the test drives it)
  /// until Done() holds, for WaitMs (or TimeoutMs) at most. Use as
  ///   ASSERT_TRUE(progressUntil([&] { ... }, "what it waits for"));
  template <typename Condition>
  ::testing::AssertionResult progressUntil(Condition Done, const std::string &What,
                                           int TimeoutMs = 0) {
    int Ms = TimeoutMs > 0 ? TimeoutMs : WaitMs;
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(Ms);
    for (unsigned Turn = 1;; ++Turn) {
      if (Done())
        return ::testing::AssertionSuccess();
      if (std::chrono::steady_clock::now() > Deadline)
        return ::testing::AssertionFailure()
               << "waited " << Ms << " ms, in vain, until " << What << "\n"
               << describe();
      progressOnce();
      if (Turn % 64 == 0)
        std::this_thread::yield(); // the machine's other threads, and ours
    }
  }

  /// Fn() while the receiver runs: its executor, or (TestThread) a helper
  /// thread progressing it until Fn returns. For whatever waits on the
  /// receiver from this thread: tc_connect, tc_flush, tc_call, tc_call_wait.
  /// Fn must not call the receiver's context itself.
  template <typename Fn> auto whileReceiverRuns(Fn F) -> decltype(F()) {
    if (Drive == Driver::Executor || Lent)
      return F();
    std::atomic<bool> Stop{false};
    Lent = true;
    std::thread Helper([&] {
      for (unsigned Turn = 1; !Stop.load(std::memory_order_relaxed); ++Turn) {
        tc_progress(Receiver.Ctx, nullptr);
        if (Turn % 64 == 0)
          std::this_thread::yield();
      }
    });
    struct Join {
      std::atomic<bool> &Stop;
      std::thread &Helper;
      bool &Lent;
      ~Join() {
        Stop = true;
        Helper.join();
        Lent = false;
      }
    } Joined{Stop, Helper, Lent};
    return F();
  }

  /// tc_flush of Peer while the receiver runs.
  tc_status_t flush(int TimeoutMs = 0) {
    return whileReceiverRuns([&] { return tc_flush(Peer, TimeoutMs > 0 ? TimeoutMs : WaitMs); });
  }

  /// tc_send, progressing both sides and trying again while the receiver's
  /// ring is full (TC_ERR_NO_CREDIT), for WaitMs at most.
  tc_status_t sendRetrying(const tc_package_t *Pkg, uint32_t Element, tc_send_mode_t Mode,
                           const void *Payload, size_t Size) {
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(WaitMs);
    for (;;) {
      tc_status_t St = tc_send(Peer, Pkg, Element, Mode, Payload, Size);
      if (St != TC_ERR_NO_CREDIT || std::chrono::steady_clock::now() > Deadline)
        return St;
      progressOnce();
    }
  }

  /// Starts both sides, the test's thread driving them, and sends one Local
  /// frame of server_side_sum (12 bytes), nothing run yet. Call under
  /// ASSERT_NO_FATAL_FAILURE.
  void startWithOneFrame() {
    Drive = Driver::TestThread;
    ASSERT_NO_FATAL_FAILURE(start());
    uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
    auto V = sumPayload(3, 7);
    ASSERT_EQ(tc_send(Peer, Sender.Stdlib, Sum, TC_SEND_LOCAL, V.data(), V.size() * sizeof V[0]),
              TC_OK);
  }

  /// A good peer's Frames frames of server_side_sum, Local and Injected in
  /// turn, each sent as sendRetrying does, then flushed: each must be
  /// taken, and the flush end with TC_OK. Call under
  /// ASSERT_NO_FATAL_FAILURE.
  void sendGoodFrames(unsigned Frames) {
    uint32_t Sum = element(Sender.Stdlib, "server_side_sum");
    std::vector<int32_t> Payload = sumPayload(8, 1);
    for (unsigned I = 0; I < Frames; ++I)
      ASSERT_EQ(sendRetrying(Sender.Stdlib, Sum, I % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL,
                             Payload.data(), Payload.size() * sizeof(int32_t)),
                TC_OK);
    ASSERT_EQ(flush(), TC_OK) << describe();
  }

  /// The events a side has queued, oldest first (taken).
  std::vector<tc_event_t> takeEvents(const Side &S) {
    std::vector<tc_event_t> Out;
    tc_event_t E;
    while (tc_poll_event(S.Ctx, &E) == 1)
      Out.push_back(E);
    return Out;
  }

  /// How many lines either side logged that contain Text.
  size_t loggedCount(const std::string &Text) const {
    std::lock_guard<std::mutex> G(Log.Lock);
    size_t N = 0;
    for (const std::string &L : Log.Lines)
      N += L.find(Text) != std::string::npos;
    return N;
  }

  /// How many lines either side logged that match Pattern somewhere (an
  /// ECMAScript regex): for lines whose form says which side wrote them.
  size_t loggedMatching(const std::string &Pattern) const {
    std::regex R(Pattern);
    std::lock_guard<std::mutex> G(Log.Lock);
    size_t N = 0;
    for (const std::string &L : Log.Lines)
      N += std::regex_search(L, R);
    return N;
  }

  /// Whether either side logged a message containing Text.
  bool logged(const std::string &Text) const {
    std::lock_guard<std::mutex> G(Log.Lock);
    for (const std::string &L : Log.Lines)
      if (L.find(Text) != std::string::npos)
        return true;
    return false;
  }

  /// Both sides' counters and the log's last lines, for failure messages.
  std::string describe() const {
    std::ostringstream S;
    for (const Side *Sd : {&Receiver, &Sender}) {
      tc_stats_t T = {};
      if (!Sd->Ctx || tc_context_stats(Sd->Ctx, &T) != TC_OK) {
        S << "  " << Sd->Name << ": no context\n";
        continue;
      }
      S << "  " << Sd->Name << ": peers " << T.peers << " (rma " << T.peers_rma << ", am "
        << T.peers_am << ", direct " << T.peers_direct << "), sent " << T.frames_sent
        << " (with code " << T.frames_sent_with_code << ", cached " << T.frames_sent_cached
        << "), executed local " << T.frames_executed_local << " injected "
        << T.frames_executed_injected << " cached " << T.frames_executed_cached
        << ", rejected " << T.frames_rejected << ", auth failures " << T.auth_failures
        << ", calls answered " << T.calls_answered << " failed " << T.calls_failed
        << ", replies sent " << T.replies_sent << "\n";
    }
    std::lock_guard<std::mutex> G(Log.Lock);
    size_t From = Log.Lines.size() > 8 ? Log.Lines.size() - 8 : 0;
    for (size_t I = From; I < Log.Lines.size(); ++I)
      S << "  log: " << Log.Lines[I] << "\n";
    return S.str();
  }

protected:
  void SetUp() override {
    // The key comes from the parameters alone: the environment's would
    // give an unkeyed side a key.
    for (const char *Name : {"TC_KEY", "TC_KEY_FILE"}) {
      const char *V = std::getenv(Name);
      SavedEnvironment.push_back({Name, V ? std::optional<std::string>(V) : std::nullopt});
      unsetenv(Name);
    }
    tc_set_log_handler(&TwoContexts::collectLog, &Log);
  }

  void TearDown() override {
    if (Peer) {
      tc_peer_t *Closing = Peer;
      Peer = nullptr;
      whileReceiverRuns([&] { tc_peer_close(Closing); });
      // Let the receiver see it go, so that it releases the peer as gone
      // rather than waiting to flush to it (not a failure if it does not).
      tc_peer_t *Still = nullptr;
      (void)progressUntil([&] { return tc_context_peer(Receiver.Ctx, 1, &Still) != TC_OK; },
                    "the receiver saw the sender go", 1000);
    }
    if (ExecutorStarted) {
      EXPECT_EQ(tc_executor_stop(Receiver.Ctx), TC_OK);
      ExecutorStarted = false;
    }
    for (Side &S : ExtraSides) {
      if (S.Ctx)
        tc_context_destroy(S.Ctx);
      S.Ctx = nullptr;
      for (tc_package_t **P : {&S.Stdlib, &S.Calls})
        if (*P) {
          tc_package_unload(*P);
          *P = nullptr;
        }
    }
    ExtraSides.clear();
    for (Side *S : {&Sender, &Receiver})
      if (S->Ctx) {
        tc_context_destroy(S->Ctx);
        S->Ctx = nullptr;
      }
    for (Side *S : {&Sender, &Receiver})
      for (tc_package_t **P : {&S->Stdlib, &S->Calls})
        if (*P) {
          tc_package_unload(*P);
          *P = nullptr;
        }
    for (tc_package_t *P : ExtraPackages)
      tc_package_unload(P);
    ExtraPackages.clear();
    tc_set_log_handler(nullptr, nullptr);
    if (HasFailure()) {
      std::lock_guard<std::mutex> G(Log.Lock);
      for (const std::string &L : Log.Lines)
        std::cerr << "twochains (collected): " << L << "\n";
    }
    for (auto &[Name, Value] : SavedEnvironment)
      if (Value)
        setenv(Name, Value->c_str(), 1);
    SavedEnvironment.clear();
  }

private:
  struct LogLines {
    mutable std::mutex Lock;
    std::vector<std::string> Lines;
  } Log;
  bool ExecutorStarted = false;
  /// A helper thread is progressing the receiver (whileReceiverRuns).
  bool Lent = false;
  std::vector<std::pair<const char *, std::optional<std::string>>> SavedEnvironment;
  std::vector<tc_package_t *> ExtraPackages;
  std::list<Side> ExtraSides;

  static void collectLog(tc_log_level_t Level, const char *Message, void *Arg) {
    auto *L = static_cast<LogLines *>(Arg);
    static const char *const Names[] = {"error", "warn", "info", "debug"};
    std::lock_guard<std::mutex> G(L->Lock);
    L->Lines.push_back(std::string(unsigned(Level) < 4 ? Names[Level] : "?") + ": " + Message);
  }

  void progressOnce() {
    tc_progress(Sender.Ctx, nullptr);
    if (Drive == Driver::TestThread && !Lent)
      tc_progress(Receiver.Ctx, nullptr);
  }

  static tc_package_t *loadOne(const char *Prefix, const char *Name,
                              uint32_t Roles = TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER) {
    tc_package_params_t P = {};
    P.version = TC_PACKAGE_PARAMS_VERSION;
    P.roles = Roles;
    P.prefix = Prefix;
    P.name = Name;
    tc_package_t *Pkg = nullptr;
    tc_status_t St = tc_package_load(&P, &Pkg);
    EXPECT_EQ(St, TC_OK) << "loading package " << Name << " from " << Prefix << ": "
                         << tc_status_string(St);
    return St == TC_OK ? Pkg : nullptr;
  }

  void createSide(Side &S) {
    // Both roles on both sides: replies (tc_jam_reply's deliver) run on the
    // sender, and either side may be the other's receiver.
    ASSERT_NE(S.Stdlib = loadOne(TC_TEST_STDLIB_PREFIX, "stdlib"), nullptr);
    ASSERT_NE(S.Calls = loadOne(TC_TEST_CALLS_PREFIX, "unitcalls"), nullptr);
    tc_context_params_t P = S.Params;
    P.key = S.Key.empty() ? nullptr : S.Key.data();
    P.key_size = uint32_t(S.Key.size());
    tc_status_t St = tc_context_create(&P, &S.Ctx);
    ASSERT_EQ(St, TC_OK) << "creating the " << S.Name << "'s context: " << tc_status_string(St)
                         << "\n" << describe();
    ASSERT_EQ(tc_context_add_package(S.Ctx, S.Stdlib), TC_OK);
    ASSERT_EQ(tc_context_add_package(S.Ctx, S.Calls), TC_OK);
  }
};

inline int64_t sumOf(const std::vector<int32_t> &V) {
  int64_t S = 0;
  for (int32_t X : V)
    S += X;
  return S;
}

inline int64_t readTotal(const int64_t *P) { return __atomic_load_n(P, __ATOMIC_ACQUIRE); }

#endif // TWOCHAINS_TEST_UNIT_TWOCONTEXTS_H
