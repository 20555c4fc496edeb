//===- Client.cpp - tc-perf's client: drives the whole sweep ---------------===//
//
// The client connects to one server and, test by test, tells it what comes
// next, runs its side, and collects the server's costs. The variants of one
// workload and size take turns in rounds, so their ratios are measured at
// the same moments (on this VM the two vCPUs' placement drifts, and
// latencies change 2-4x over minutes).
//===----------------------------------------------------------------------===//
#include "Protocol.h"
#include "Report.h"
#include "Session.h"
#include "Spin.h"
#include "Workload.h"

#include <algorithm>
#include <cstdio>

namespace tcperf {

namespace {

constexpr unsigned StallSeconds = 30;

// What the server told us about itself.
struct ServerInfo {
  std::string Transport, Mailbox, OwnWait, ExecutorWait, Cycles;
  uint32_t Stress = 0;
  uint32_t JobPort = 0; // the server's job context (tc-local-job), or 0
};

// Waits until the channel has run at least one message (the client always
// spins: only the server's wait is under test).
bool awaitReply(Channel &Ch, Watchdog &Dog) {
  for (;;) {
    int N = Ch.poll();
    if (N > 0)
      return true;
    if (N < 0)
      return false;
    if (Dog.expired())
      return fprintf(stderr, "tc-perf: the server stopped answering\n"), false;
  }
}

// Ping-pong; every timed iteration's round trip, halved, added to Half.
bool runLatency(const Control &Ctl, Channel &Ch, const RunCommand &C, std::vector<double> &Half) {
  Watchdog Dog(StallSeconds, Ctl);
  for (uint64_t K = 0; K < C.Warmup + C.Iters; ++K) {
    uint64_t T0 = Clock::ticks();
    if (!Ch.send() || !awaitReply(Ch, Dog))
      return false;
    uint64_t T1 = Clock::ticks();
    Dog.alive();
    if (K >= C.Warmup)
      Half.push_back(Clock::toNs(T1 - T0) / 2);
  }
  return true;
}

// Streaming: warm-up messages and a drain, then the timed messages and a
// drain; the rate counts the timed ones over the time to drain them.
// Two-Chains' sends are corked (tc_peer_cork): over TCP its frames then
// share messages, which UCX's active messages cannot; elsewhere corking
// changes nothing.
bool runRate(Channel &Ch, const RunCommand &C, double *Rate) {
  if (!Ch.cork(true))
    return false;
  for (uint64_t K = 0; K < C.Warmup; ++K)
    if (!Ch.send())
      return false;
  if (!Ch.drain())
    return false;
  uint64_t T0 = Clock::monotonicNs();
  for (uint64_t K = 0; K < C.Iters; ++K)
    if (!Ch.send())
      return false;
  if (!Ch.drain() || !Ch.cork(false))
    return false;
  *Rate = double(C.Iters) * 1e9 / double(Clock::monotonicNs() - T0);
  return true;
}

// Paced messages, one every GapNs, so the server spends its time waiting.
bool runPaced(Channel &Ch, const RunCommand &C, double *Rate) {
  uint64_t T0 = Clock::monotonicNs(), Next = T0;
  for (uint64_t K = 0; K < C.Iters; ++K) {
    while (Clock::monotonicNs() < Next)
      ;
    Next += C.GapNs;
    if (!Ch.send())
      return false;
  }
  if (!Ch.drain())
    return false;
  *Rate = double(C.Iters) * 1e9 / double(Clock::monotonicNs() - T0);
  return true;
}

// One round of a test: tell the server, run this side, collect the
// server's costs. Latency samples go to Half; the rate to R->Rate.
bool runTest(Session &S, const ServerInfo &Info, const RunCommand &C, Row *R,
             std::vector<double> &Half) {
  std::unique_ptr<Channel> Ch = S.channel(C.V);
  if (!Ch->prepare(C.W, makePayload(C.W, C.PayloadBytes)))
    return false;
  tc_stats_t Before = S.endpoint(C.V).stats();
  std::vector<uint8_t> Body;
  if (!S.Ctl.send(MsgType::Run, Writer().put(C).bytes()) || !S.Ctl.expect(MsgType::Ready, &Body))
    return false;
  bool Ok = C.T == Test::Latency ? runLatency(S.Ctl, *Ch, C, Half)
            : C.T == Test::Rate  ? runRate(*Ch, C, &R->Rate)
                                 : runPaced(*Ch, C, &R->Rate);
  if (!Ok) {
    if (S.Ctl.readable()) // the server gave up first: say why
      S.Ctl.expect(MsgType::Result, &Body);
    S.Ctl.send(MsgType::Failed, Writer().str("the client's side of the test failed").bytes());
    return false;
  }
  if (C.T != Test::Latency && !S.Ctl.send(MsgType::Done))
    return false;
  if (!S.Ctl.expect(MsgType::Result, &Body) || !Reader(Body).get(&R->Server).ok())
    return false;
  tc_stats_t After = S.endpoint(C.V).stats();
  R->T = C.T;
  R->W = C.W;
  R->V = C.V;
  R->Transport = Info.Transport;
  R->Mailbox = Info.Mailbox;
  R->Wait = C.T == Test::Wait ? Info.ExecutorWait : Info.OwnWait;
  R->Bytes = C.PayloadBytes;
  R->Ints = payloadInts(C.W, C.PayloadBytes);
  R->Iters = C.Iters;
  R->SentWithCode = After.frames_sent_with_code - Before.frames_sent_with_code;
  R->SentCached = After.frames_sent_cached - Before.frames_sent_cached;
  return true;
}

// Adds one round's row into the test's total: counts and costs add up,
// rates are kept to take the median of at the end.
void accumulate(Row &Total, const Row &Round, std::vector<double> &Rates) {
  if (Rates.empty() && Total.Iters == 0) {
    Total = Round;
  } else {
    Total.Iters += Round.Iters;
    Total.SentWithCode += Round.SentWithCode;
    Total.SentCached += Round.SentCached;
    Total.Server.Messages += Round.Server.Messages;
    Total.Server.Polls += Round.Server.Polls;
    Total.Server.WallNs += Round.Server.WallNs;
    Total.Server.CpuNs += Round.Server.CpuNs;
    Total.Server.Cycles += Round.Server.Cycles;
    Total.Server.CyclesValid &= Round.Server.CyclesValid;
    Total.Server.Rendezvous += Round.Server.Rendezvous;
  }
  Rates.push_back(Round.Rate);
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N == 0 ? 0 : N % 2 ? V[N / 2] : (V[N / 2 - 1] + V[N / 2]) / 2;
}

// The tests in order: per test and workload, each size; within it, every
// variant, taking turns in rounds.
struct Group {
  std::vector<RunCommand> Variants; // Iters: the whole test's
};

std::vector<Group> plan(const Options &O) {
  std::vector<Group> Plan;
  for (Test T : O.Tests)
    for (Workload W : O.Workloads) {
      std::vector<size_t> Sizes = payloadSizes(O, W);
      if (T == Test::Wait && !Sizes.empty())
        Sizes.resize(1); // waiting costs the same whatever the payload
      for (size_t B : Sizes) {
        Group G;
        for (Variant V : O.Variants) {
          if (T == Test::Wait && !isTwoChains(V))
            continue; // the executor thread is the runtime's
          uint64_t Iters = T == Test::Rate ? O.RateIters : O.Iters;
          uint64_t Warmup = T == Test::Wait ? 0 : O.Warmup;
          G.Variants.push_back({T, W, V, uint32_t(B), Iters, Warmup, O.GapNs});
        }
        if (!G.Variants.empty())
          Plan.push_back(G);
      }
    }
  return Plan;
}

bool wantsJob(const Options &O) {
  return std::find(O.Variants.begin(), O.Variants.end(), Variant::TcLocalJob) != O.Variants.end();
}

bool greet(Session &S, ServerInfo *Info) {
  Writer Out;
  Out.put(ProtocolVersion).str(transportName()).put(uint32_t(wantsJob(S.Opts)));
  S.Ucx.describe(Out);
  std::vector<uint8_t> Body;
  if (!S.Ctl.send(MsgType::Hello, Out.bytes()) || !S.Ctl.expect(MsgType::Hello, &Body))
    return false;
  Reader In(Body);
  uint32_t Version = 0;
  In.get(&Version).str(&Info->Transport).str(&Info->Mailbox).str(&Info->OwnWait);
  In.str(&Info->ExecutorWait).str(&Info->Cycles).get(&Info->Stress).get(&Info->JobPort);
  if (!In.ok() || Version != ProtocolVersion)
    return fprintf(stderr, "tc-perf: the server is another version of tc-perf\n"), false;
  if (Info->Transport != transportName()) {
    fprintf(stderr, "tc-perf: server UCX_TLS=%s but ours is %s: set it alike for both\n",
            Info->Transport.c_str(), transportName());
    return false;
  }
  return S.Ucx.connect(In);
}

void printPreamble(const Options &O, const ServerInfo &I, const std::vector<Group> &Plan) {
  size_t Tests = 0;
  for (const Group &G : Plan)
    Tests += G.Variants.size();
  printf("tc-perf: %zu tests in %u rounds each against %s; UCX_TLS=%s; server mailbox %s, own "
         "loop waits with %s, executor with %s, %u stress threads\n",
         Tests, O.Rounds, O.Host.c_str(), I.Transport.c_str(), I.Mailbox.c_str(),
         I.OwnWait.c_str(), I.ExecutorWait.c_str(), I.Stress);
  printf("tc-perf: clock %s; server cycles %s; latency is half the round trip, in ns; "
         "srv_cpu/msg is the server's thread CPU time per message\n",
         Clock::source(), I.Cycles.empty() ? "counted" : I.Cycles.c_str());
}

} // namespace

int runClient(const Options &O) {
  Session S;
  S.Opts = O;
  ServerInfo Info;
  if (!S.Ucx.init() || !S.Ctl.connectTo(O.Host, O.Port + 1, 30000) || !greet(S, &Info))
    return 1;
  uint32_t Mailbox = O.Mailbox;
  if (!Mailbox && !mailboxFromName(Info.Mailbox, &Mailbox))
    return fprintf(stderr, "tc-perf: the server has an unknown mailbox mode '%s'\n",
                   Info.Mailbox.c_str()), 1;
  uint32_t Flags = O.Ordered ? TC_CONTEXT_ORDERED_PLACEMENT : 0;
  if (!S.Tc.create(O.Prefix, Mailbox, TC_WAIT_POLL, 0, Flags, O.CodeTrust) ||
      !S.Tc.connect(O.Host, O.Port, 30000))
    return 1;
  // tc-local-job: both sides' second contexts are job (the ping-pong's
  // answers run here).
  if (wantsJob(O) &&
      (!Info.JobPort ||
       !S.TcJob.create(O.Prefix, Mailbox, TC_WAIT_POLL, 0, Flags, TC_CODE_TRUST_JOB) ||
       !S.TcJob.connect(O.Host, uint16_t(Info.JobPort), 30000)))
    return fprintf(stderr, "tc-perf: cannot connect to the server's job context\n"), 1;
  std::vector<Group> Plan = plan(O);
  printPreamble(O, Info, Plan);
  printTableHeader();
  std::vector<Row> Rows;
  bool UsedUcx = false;
  for (const Group &G : Plan) {
    size_t N = G.Variants.size();
    std::vector<Row> Totals(N);
    std::vector<std::vector<double>> Samples(N), Rates(N);
    for (unsigned Round = 0; Round < O.Rounds; ++Round)
      for (size_t I = 0; I < N; ++I) {
        RunCommand C = G.Variants[I];
        // Each round takes its share of the iterations; warm-up before
        // every round, as the other variants ran in between.
        C.Iters = std::max<uint64_t>(1, C.Iters / O.Rounds);
        if (Round > 0)
          C.Warmup = std::min<uint64_t>(C.Warmup, std::max<uint64_t>(C.Iters / 10, 10));
        Row R;
        size_t Before = Samples[I].size();
        if (!runTest(S, Info, C, &R, Samples[I])) {
          fprintf(stderr, "tc-perf: %s %s %s %u B failed\n", testName(C.T), workloadName(C.W),
                  variantName(C.V), C.PayloadBytes);
          if (!O.Csv.empty() && !Rows.empty())
            writeCsv(O.Csv, Rows); // keep what was measured
          return 1;
        }
        accumulate(Totals[I], R, Rates[I]);
        if (C.T == Test::Latency) {
          std::vector<double> This(Samples[I].begin() + long(Before), Samples[I].end());
          Totals[I].Rounds.push_back(summarize(This).P50);
        } else {
          Totals[I].Rounds.push_back(R.Rate);
        }
      }
    for (size_t I = 0; I < N; ++I) {
      Row &R = Totals[I];
      if (R.T == Test::Latency)
        R.Latency = summarize(Samples[I]);
      else
        R.Rate = median(Rates[I]);
      UsedUcx |= !isTwoChains(R.V);
      printRow(R);
      Rows.push_back(R);
    }
  }
  std::vector<uint8_t> Body;
  tc_stats_t ServerStats = {};
  if (!S.Ctl.send(MsgType::Quit) || !S.Ctl.expect(MsgType::Bye, &Body) ||
      !Reader(Body).get(&ServerStats).ok())
    return 1;
  printRatios(Rows);
  printf("\n");
  printStats("client", S.Tc.stats());
  printStats("server", ServerStats);
  if (UsedUcx)
    printf("UCX baseline endpoint lanes:\n%s", S.Ucx.lanes().c_str());
  if (!O.Csv.empty()) {
    if (!writeCsv(O.Csv, Rows))
      return 1;
    printf("wrote %s\n", O.Csv.c_str());
  }
  return 0;
}

} // namespace tcperf
