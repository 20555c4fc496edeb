//===- Server.cpp - tc-perf's server: follows the client's commands --------===//
//
// The server listens (Two-Chains on --port, the bootstrap socket on
// --port + 1), accepts one client, and then runs each test the client asks
// for: it answers ping-pongs with the same message, runs streams, and
// reports what each test cost it. It exits when the client quits.
//===----------------------------------------------------------------------===//
#include "CpuCost.h"
#include "Protocol.h"
#include "Report.h"
#include "Session.h"
#include "Spin.h"
#include "Stress.h"
#include "Workload.h"

#include <cstdio>
#include <cstdlib>

namespace tcperf {

namespace {

constexpr unsigned StallSeconds = 30;

tc_wait_mode_t executorWait(WaitKind K) {
  switch (K) {
  case WaitKind::Poll: return TC_WAIT_POLL;
  case WaitKind::Pause: return TC_WAIT_PAUSE;
  case WaitKind::Auto: return TC_WAIT_AUTO;
  }
  return TC_WAIT_AUTO;
}

bool fail(Session &S, const std::string &Why) {
  fprintf(stderr, "tc-perf server: %s\n", Why.c_str());
  S.Ctl.send(MsgType::Failed, Writer().str(Why).bytes());
  return false;
}

void fill(ServerResult *R, const CpuSample &C) {
  R->WallNs = C.WallNs;
  R->CpuNs = C.CpuNs;
  R->Cycles = C.Cycles;
  R->CyclesValid = C.CyclesValid;
}

// Waits, the server's way, until the channel has run at least one message.
// Counts the empty polls; false on failure or silence.
int awaitMessages(Channel &Ch, WaitKind Wait, Watchdog &Dog, uint64_t *Polls) {
  for (;;) {
    int N = Ch.poll();
    if (N != 0)
      return N;
    ++*Polls;
    relax(Wait);
    if (Dog.expired())
      return -1;
  }
}

// Ping-pong: every message that runs here is answered with the same one.
bool serveLatency(Session &S, Channel &Ch, const RunCommand &C, ServerResult *R) {
  CpuMeter Meter;
  Watchdog Dog(StallSeconds, S.Ctl);
  uint64_t Polls = 0;
  for (uint64_t K = 0; K < C.Warmup + C.Iters; ++K) {
    if (K == C.Warmup) { // only the timed iterations are metered
      Meter.start();
      Polls = 0;
    }
    if (awaitMessages(Ch, S.Opts.Wait, Dog, &Polls) < 0)
      return fail(S, "no ping from the client (or a failed poll)");
    Dog.alive();
    if (!Ch.send())
      return fail(S, "cannot send the pong");
  }
  fill(R, Meter.stop());
  R->Messages = C.Iters;
  R->Polls = Polls;
  return true;
}

// A stream the server can count: run until warm-up plus timed messages
// have run, acknowledging the end of each (the ucx-am client waits for it).
bool serveCountedStream(Session &S, Channel &Ch, const RunCommand &C, ServerResult *R) {
  CpuMeter Meter;
  Watchdog Dog(StallSeconds, S.Ctl);
  uint64_t Ran = 0, Polls = 0;
  bool Timed = false;
  for (;;) {
    if (!Timed && Ran >= C.Warmup) {
      if (!Ch.acknowledge())
        return fail(S, "cannot acknowledge the warm-up");
      Meter.start();
      Polls = 0;
      Timed = true;
    }
    if (Ran >= C.Warmup + C.Iters)
      break;
    int N = awaitMessages(Ch, S.Opts.Wait, Dog, &Polls);
    if (N < 0)
      return fail(S, "the stream stopped (or a poll failed)");
    Dog.alive();
    Ran += uint64_t(N);
  }
  CpuSample Cost = Meter.stop();
  if (!Ch.acknowledge())
    return fail(S, "cannot acknowledge the stream");
  fill(R, Cost);
  R->Messages = C.Iters;
  R->Polls = Polls;
  return true;
}

// A ucx-put stream lands without the server knowing how much: progress
// (emulated puts need it) until the client says it is done.
bool serveUncountedStream(Session &S, Channel &Ch, const RunCommand &C, ServerResult *R) {
  CpuMeter Meter;
  Meter.start();
  uint64_t Polls = 0;
  do {
    for (int I = 0; I < 1024; ++I, ++Polls) {
      Ch.progress();
      relax(S.Opts.Wait);
    }
  } while (!S.Ctl.readable());
  fill(R, Meter.stop());
  R->Messages = C.Warmup + C.Iters;
  R->Polls = Polls;
  return true;
}

// The runtime's executor thread runs the frames, waiting with the
// context's wait_mode, while this thread sleeps in recv for the client's
// Done: the executor's CPU time per message is what waiting costs.
bool serveWithExecutor(Session &S, const RunCommand &C, ServerResult *R) {
  std::string Before = threadIds();
  TcEndpoint &Tc = S.endpoint(C.V);
  tc_status_t St = tc_executor_start(Tc.context());
  if (St != TC_OK)
    return fail(S, std::string("tc_executor_start: ") + tc_status_string(St));
  pid_t Executor = newestThreadSince(Before);
  if (!Executor)
    fprintf(stderr, "tc-perf server: cannot find the executor thread; metering the process\n");
  CpuMeter Meter(Executor ? Executor : -1);
  tc_stats_t S0 = Tc.stats();
  bool Ok = S.Ctl.send(MsgType::Ready);
  Meter.start();
  std::vector<uint8_t> Body;
  Ok = Ok && S.Ctl.expect(MsgType::Done, &Body);
  CpuSample Cost = Meter.stop();
  tc_executor_stop(Tc.context());
  tc_stats_t S1 = Tc.stats();
  if (!Ok)
    return false;
  fill(R, Cost);
  R->Messages = C.Iters;
  uint64_t Ran = (S1.frames_executed_local + S1.frames_executed_injected) -
                 (S0.frames_executed_local + S0.frames_executed_injected);
  if (Ran != C.Iters)
    fprintf(stderr, "tc-perf server: warning: the executor ran %llu frames, the client sent %llu\n",
            (unsigned long long)Ran, (unsigned long long)C.Iters);
  return true;
}

// One test: set up, say Ready, serve, report.
bool serveTest(Session &S, const RunCommand &C) {
  ServerResult R;
  if (C.T == Test::Wait) {
    if (!isTwoChains(C.V))
      return fail(S, "the wait test is for the Two-Chains variants");
    if (!serveWithExecutor(S, C, &R))
      return false;
    return S.Ctl.send(MsgType::Result, Writer().put(R).bytes());
  }
  std::unique_ptr<Channel> Ch = S.channel(C.V);
  if (!Ch || !Ch->prepare(C.W, makePayload(C.W, C.PayloadBytes)))
    return fail(S, "cannot prepare the variant");
  if (!S.Ctl.send(MsgType::Ready))
    return false;
  uint64_t Rendezvous = S.Ucx.inbox().Rendezvous;
  bool Ok = C.T == Test::Latency      ? serveLatency(S, *Ch, C, &R)
            : Ch->countsStream()      ? serveCountedStream(S, *Ch, C, &R)
                                      : serveUncountedStream(S, *Ch, C, &R);
  if (!Ok)
    return false;
  std::vector<uint8_t> Body;
  if (C.T != Test::Latency) {
    // The client drains now (tc_flush waits for this side's last credit
    // report, which the runtime makes once idle for a few polls): keep
    // progressing until it says Done.
    while (!S.Ctl.readable())
      for (int I = 0; I < 1024; ++I)
        Ch->progress();
    if (!S.Ctl.expect(MsgType::Done, &Body))
      return false;
  }
  R.Rendezvous = S.Ucx.inbox().Rendezvous - Rendezvous;
  return S.Ctl.send(MsgType::Result, Writer().put(R).bytes());
}

// The bootstrap: UCX descriptions both ways, and what the client should
// know about this side; then the client's tc_connect.
bool greet(Session &S) {
  std::vector<uint8_t> Body;
  if (!S.Ctl.expect(MsgType::Hello, &Body))
    return false;
  Reader In(Body);
  uint32_t Version = 0, WantJob = 0;
  std::string ClientTls;
  In.get(&Version).str(&ClientTls).get(&WantJob);
  if (!In.ok() || Version != ProtocolVersion)
    return fail(S, "the client is another version of tc-perf");
  // tc-local-job: a second context, as the first but under the job
  // policy, on a port of its own.
  uint16_t JobPort = 0;
  if (WantJob) {
    if (!S.TcJob.create(S.Opts.Prefix, S.Opts.Mailbox, executorWait(S.Opts.Wait),
                        S.Opts.CodeCacheSize, S.Opts.Ordered ? TC_CONTEXT_ORDERED_PLACEMENT : 0,
                        TC_CODE_TRUST_JOB) ||
        !S.TcJob.listen(0) || !(JobPort = S.TcJob.listenPort()))
      return fail(S, "cannot set up the job context (tc-local-job)");
    printf("tc-perf server: tc-local-job's context (code trust job) on port %u\n", JobPort);
  }
  if (ClientTls != transportName())
    fprintf(stderr, "tc-perf server: warning: client UCX_TLS=%s, server UCX_TLS=%s\n",
            ClientTls.c_str(), transportName());
  if (!S.Ucx.connect(In))
    return fail(S, "cannot connect the UCX baselines");
  CpuMeter Probe;
  Writer Out;
  Out.put(ProtocolVersion).str(transportName()).str(tc_mailbox_mode_name(S.Tc.context()));
  Out.str(waitName(S.Opts.Wait)).str(tc_wait_mode_name(S.Tc.context()));
  Out.str(Probe.cyclesUnavailable()).put(uint32_t(S.Opts.Stress)).put(uint32_t(JobPort));
  S.Ucx.describe(Out);
  if (!S.Ctl.send(MsgType::Hello, Out.bytes()))
    return false;
  if (!S.Tc.awaitPeer(30000))
    return fail(S, "the client did not tc_connect");
  return !WantJob || S.TcJob.awaitPeer(30000) ||
         fail(S, "the client did not tc_connect to the job context");
}

} // namespace

int runServer(const Options &O) {
  Session S;
  S.Opts = O;
  MemoryStress Stress;
  if (O.Stress && !Stress.start(O.Stress))
    return 1;
  if (!S.Tc.create(O.Prefix, O.Mailbox, executorWait(O.Wait), O.CodeCacheSize,
                   O.Ordered ? TC_CONTEXT_ORDERED_PLACEMENT : 0, O.CodeTrust) ||
      !S.Tc.listen(O.Port) ||
      !S.Ucx.init())
    return 1;
  printf("tc-perf server: Two-Chains on port %u, bootstrap on %u; UCX_TLS=%s\n", O.Port,
         O.Port + 1, transportName());
  printf("tc-perf server: mailbox %s, own loop waits with %s, executor with %s, "
         "%u stress threads\n",
         tc_mailbox_mode_name(S.Tc.context()), waitName(O.Wait), tc_wait_mode_name(S.Tc.context()),
         O.Stress);
  fflush(stdout);
  if (!S.Ctl.acceptOne(O.Port + 1, 600000) || !greet(S))
    return 1;
  for (;;) {
    MsgType T;
    std::vector<uint8_t> Body;
    if (!S.Ctl.recv(&T, &Body)) {
      fprintf(stderr, "tc-perf server: the client went away without saying quit\n");
      return 1;
    }
    if (T == MsgType::Quit)
      break;
    RunCommand C;
    if (T != MsgType::Run || !Reader(Body).get(&C).ok())
      return fail(S, "protocol error: expected a command"), 1;
    if (!serveTest(S, C))
      return 1;
  }
  tc_stats_t Stats = S.Tc.stats();
  printStats("tc-perf server:", Stats);
  S.Ctl.send(MsgType::Bye, Writer().put(Stats).bytes());
  return 0;
}

} // namespace tcperf
