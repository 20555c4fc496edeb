//===- tc_containment.cpp - Peers and jams that misbehave -----------------===//
//
//   tc-containment receiver PREFIX PKG PORT FRAMES   (test_receiver.h)
//   tc-containment crash PREFIX PORT KIND MODE N   N crash frames of KIND
//       (jam_crash.amc) in MODE (local, injected); prints what tc_flush and
//       tc_peer_last_fault say
//   tc-containment count PREFIX PORT N             N count frames, both modes
//   tc-containment stall PREFIX PORT N SECONDS     N echo frames, then never
//       progresses (its replies pile up), then exits without closing
//   tc-containment cycles PREFIX PORT N            N times: connect, one
//       count frame, flush, close
//   tc-containment stuck PORT SECONDS              listens and never progresses
//   tc-containment connect PORT TIMEOUT_MS         times one tc_connect
//   tc-containment bouncer STDLIB PORT             a receiver of the standard
//       package: after its first frame, sends the peer that connected a
//       chain frame that forwards back to this very receiver, and dies
//   tc-containment caller PREFIX ADDRESS PORT N STOPFILE [RATE]   a good
//       peer: calls 'answer' at ADDRESS one at a time (each within 5 s),
//       at most RATE a second if given (a call waits for the one before, and
//       a late one is not made up for), until it made N calls and STOPFILE
//       exists; prints how many were answered and failed, the rate, and the
//       fewest answers in one second
//   tc-containment loopers PREFIX ADDRESS PORT CONNECTIONS FRAMES [WAIT_MS]
//       an attacker with the key: CONNECTIONS times, one after the other,
//       connects to ADDRESS, sends FRAMES frames whose jam loops for ever,
//       flushes and closes; given WAIT_MS, then waits that long and sends
//       one count frame over a new connection
//
//===----------------------------------------------------------------------===//
#include "test_receiver.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>

/// The name of a fault's signal: tc_jam_fault_t and tc_event_t name one of
/// these four (twochains.h), and the script matches the name.
static const char *signalName(int Signal) {
  switch (Signal) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGBUS:
    return "SIGBUS";
  case SIGILL:
    return "SIGILL";
  case SIGFPE:
    return "SIGFPE";
  default:
    return "a signal";
  }
}

static const tc_package *containment(const char *Prefix, uint32_t Roles = TC_PACKAGE_SENDER) {
  return load(Prefix, "containment", Roles);
}

static uint32_t element(const tc_package *Pkg, const char *Name) {
  uint32_t ID = 0;
  tc_package_find(Pkg, Name, &ID);
  return ID;
}

/// Connects to the receiver at Address (loopback unless given).
static tc_peer_t *connectTo(tc_context_t *Ctx, const char *Port, const char *Address = nullptr,
                            tc_status_t *Status = nullptr) {
  tc_peer_t *Peer = nullptr;
  tc_status_t St = tc_connect(Ctx, Address ? Address : "127.0.0.1", uint16_t(std::atoi(Port)), 5000,
                              &Peer);
  if (Status)
    *Status = St;
  return St == TC_OK ? Peer : nullptr;
}

static tc_status_t send(tc_context_t *Ctx, tc_peer_t *Peer, const tc_package *Pkg, uint32_t E,
                        tc_send_mode_t Mode, const void *P, size_t N) {
  tc_status_t St;
  while ((St = tc_send(Peer, Pkg, E, Mode, P, N)) == TC_ERR_NO_CREDIT)
    tc_progress(Ctx, nullptr);
  return St;
}

static int crash(char **Argv) {
  const tc_package *Pkg = containment(Argv[2]);
  tc_context_t *Ctx = Pkg ? context(const_cast<tc_package *>(Pkg)) : nullptr;
  tc_peer_t *Peer = Ctx ? connectTo(Ctx, Argv[3]) : nullptr;
  if (!Peer)
    return fail("crash: cannot connect");
  uint64_t Payload[2] = {std::strtoull(Argv[4], nullptr, 0), 8};
  tc_send_mode_t Mode = std::strcmp(Argv[5], "local") ? TC_SEND_INJECTED : TC_SEND_LOCAL;
  unsigned N = unsigned(std::atoi(Argv[6]));
  for (unsigned I = 0; I < N; ++I)
    if (send(Ctx, Peer, Pkg, element(Pkg, "crash"), Mode, Payload, sizeof Payload) != TC_OK)
      return fail("crash: send failed");
  tc_status_t St = tc_flush(Peer, 20000);
  std::printf("crash: flush: %s\n", tc_status_string(St));
  tc_jam_fault_t F;
  if (tc_peer_last_fault(Peer, &F) == TC_OK)
    std::printf("crash: last fault: sequence %llu, element %u, kind %u, signal %s, %u reported\n",
                (unsigned long long)F.sequence, F.element, F.kind,
                F.signal ? signalName(F.signal) : "none", F.count);
  tc_event_t E;
  while (tc_poll_event(Ctx, &E) == 1)
    if (E.kind == TC_EVENT_FAULT_REPORTED)
      std::printf("crash: event: fault reported: element %u, sequence %llu, %s, signal %s\n",
                  E.element, (unsigned long long)E.sequence, tc_status_string(E.status),
                  E.signal ? signalName(E.signal) : "none");
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  return 0;
}

static int count(char **Argv) {
  const tc_package *Pkg = containment(Argv[2]);
  tc_context_t *Ctx = Pkg ? context(const_cast<tc_package *>(Pkg)) : nullptr;
  tc_peer_t *Peer = Ctx ? connectTo(Ctx, Argv[3]) : nullptr;
  if (!Peer)
    return fail("count: cannot connect");
  unsigned N = unsigned(std::atoi(Argv[4]));
  auto Start = std::chrono::steady_clock::now();
  tc_status_t St = TC_OK;
  for (unsigned I = 0; I < N && St == TC_OK; ++I)
    St = send(Ctx, Peer, Pkg, element(Pkg, "count"), I % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL,
              nullptr, 0);
  if (St == TC_OK)
    St = tc_flush(Peer, 30000);
  double Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
                  .count();
  std::printf("count: sent %u: %s in %.0f ms\n", N, tc_status_string(St), Ms);
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  return St == TC_OK ? 0 : 1;
}

static int stall(char **Argv) {
  const tc_package *Pkg = containment(Argv[2], TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  tc_context_t *Ctx = Pkg ? context(const_cast<tc_package *>(Pkg)) : nullptr;
  tc_peer_t *Peer = Ctx ? connectTo(Ctx, Argv[3]) : nullptr;
  if (!Peer)
    return fail("stall: cannot connect");
  unsigned N = unsigned(std::atoi(Argv[4]));
  uint64_t Word = 1;
  unsigned Sent = 0;
  // It never calls tc_progress, so the replies are never drained: past its
  // ring's 16 they have nowhere to go. tc_send only waits for credit.
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (Sent < N && std::chrono::steady_clock::now() < Deadline) {
    tc_status_t St = tc_send(Peer, Pkg, element(Pkg, "echo"), TC_SEND_LOCAL, &Word, sizeof Word);
    if (St == TC_OK)
      ++Sent;
    else if (St != TC_ERR_NO_CREDIT)
      break;
  }
  std::printf("stall: sent %u echo frames; now not progressing\n", Sent);
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(std::atoi(Argv[5])));
  std::fflush(stdout);
  std::_Exit(0);
}

static int cycles(char **Argv) {
  const tc_package *Pkg = containment(Argv[2]);
  tc_context_t *Ctx = Pkg ? context(const_cast<tc_package *>(Pkg)) : nullptr;
  if (!Ctx)
    return fail("cycles: no context");
  unsigned N = unsigned(std::atoi(Argv[4])), Done = 0;
  long FirstMappings = -1, FirstDescriptors = -1;
  for (; Done < N; ++Done) {
    tc_peer_t *Peer = connectTo(Ctx, Argv[3]);
    tc_status_t St = TC_OK;
    const char *Step = !Peer ? "connect"
                       : (St = send(Ctx, Peer, Pkg, element(Pkg, "count"), TC_SEND_LOCAL, nullptr,
                                    0)) != TC_OK
                           ? "send"
                       : (St = tc_flush(Peer, 10000)) != TC_OK ? "flush"
                                                               : nullptr;
    if (Step)
      return fail("cycles: cycle " + std::to_string(Done) + " failed: " + Step + ": " +
                  tc_status_string(St));
    tc_peer_close(Peer);
    if (Done == 0)
      FirstMappings = mappings(), FirstDescriptors = descriptors();
  }
  std::printf("cycles: %u connect/close cycles, sender resident %ld kB\n", Done, residentKb());
  std::printf("cycles: sender mappings after the first cycle %ld, at the end %ld\n", FirstMappings,
              mappings());
  std::printf("cycles: sender descriptors after the first cycle %ld, at the end %ld\n",
              FirstDescriptors, descriptors());
  tc_context_destroy(Ctx);
  return 0;
}

static int stuck(char **Argv) {
  tc_context_t *Ctx = context(nullptr);
  if (!Ctx || tc_listen(Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[2]))) != TC_OK)
    return fail("stuck: cannot listen");
  std::printf("stuck: listening\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(std::atoi(Argv[3])));
  std::_Exit(0);
}

static int connectTimed(char **Argv) {
  tc_context_t *Ctx = context(nullptr);
  tc_peer_t *Peer = nullptr;
  int Timeout = std::atoi(Argv[3]);
  auto Start = std::chrono::steady_clock::now();
  tc_status_t St = tc_connect(Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[2])), Timeout, &Peer);
  double Ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
                  .count();
  std::printf("connect: %s after %.0f ms (timeout %d ms)\n", tc_status_string(St), Ms, Timeout);
  std::fflush(stdout);
  std::_Exit(0);
}

/// The standard package's chain payload (stdlib-jams/src/replies/jam_chain.amc).
struct ChainFrame {
  char Address[40];
  uint16_t Port, Reserved;
  char Element[32];
  uint32_t Length;
  int32_t Values[8];
};

static int bouncer(char **Argv) {
  tc_package_t *Pkg = load(Argv[2], "stdlib", TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  tc_context_t *Ctx = Pkg ? context(Pkg) : nullptr;
  uint16_t Port = uint16_t(std::atoi(Argv[3]));
  if (!Ctx || tc_listen(Ctx, "127.0.0.1", Port) != TC_OK)
    return fail("bouncer: cannot listen");
  std::printf("bouncer: listening\n");
  std::fflush(stdout);
  unsigned Ran = 0;
  for (auto End = std::chrono::steady_clock::now() + std::chrono::seconds(30);
       !Ran && std::chrono::steady_clock::now() < End;)
    tc_progress(Ctx, &Ran);
  tc_peer_t *Back = nullptr;
  uint32_t Chain = 0;
  if (!Ran || tc_context_peer(Ctx, 1, &Back) != TC_OK || tc_package_find(Pkg, "chain", &Chain))
    return fail("bouncer: no frame, or no peer to answer");
  ChainFrame C = {};
  std::strcpy(C.Address, "127.0.0.1");
  C.Port = Port; // back here, where nobody will listen any more
  std::strcpy(C.Element, "server_side_sum");
  C.Length = sizeof C.Values;
  tc_status_t St = tc_send(Back, Pkg, Chain, TC_SEND_LOCAL, &C, sizeof C);
  // Its bytes may still wait in UCX's TCP buffer: they leave as the
  // worker turns, for a tenth of a second (B, pausing for a second after
  // its first frame, has not run it yet), then the process dies.
  for (auto End = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
       std::chrono::steady_clock::now() < End;)
    tc_progress(Ctx, nullptr);
  std::printf("bouncer: sent a chain frame back: %s; dying\n", tc_status_string(St));
  std::fflush(stdout);
  std::_Exit(0); // no close: the route on the other side fails
}

static double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

static int caller(int Argc, char **Argv) {
  const tc_package *Pkg = containment(Argv[2]);
  tc_context_t *Ctx = Pkg ? context(const_cast<tc_package *>(Pkg)) : nullptr;
  tc_status_t St = TC_OK;
  tc_peer_t *Peer = Ctx ? connectTo(Ctx, Argv[4], Argv[3], &St) : nullptr;
  if (!Peer)
    return fail(std::string("caller: cannot connect: ") + tc_status_string(St));
  std::printf("caller: connected\n");
  std::fflush(stdout);
  unsigned N = unsigned(std::atoi(Argv[5])), Answered = 0, Failed = 0;
  auto Start = std::chrono::steady_clock::now();
  std::vector<unsigned> PerSecond;
  uint64_t Word = 0;
  double Rate = Argc > 7 ? std::atof(Argv[7]) : 0;
  auto Interval = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(Rate > 0 ? 1 / Rate : 0));
  auto Next = Start;
  while (Answered + Failed < N || access(Argv[6], F_OK) != 0) {
    if (Rate > 0) {
      std::this_thread::sleep_until(Next);
      Next = std::max(Next + Interval, std::chrono::steady_clock::now());
    }
    uint64_t Reply = 0;
    size_t Size = 0;
    ++Word;
    St = tc_call(Peer, Pkg, element(Pkg, "answer"), TC_SEND_LOCAL, &Word, sizeof Word, &Reply,
                 sizeof Reply, &Size, 5000);
    if (St != TC_OK || Reply != Word) {
      if (!Failed++)
        std::printf("caller: call %u failed: %s\n", Answered + Failed, tc_status_string(St));
      continue;
    }
    ++Answered;
    size_t Second = size_t(msSince(Start) / 1000);
    if (PerSecond.size() <= Second)
      PerSecond.resize(Second + 1);
    ++PerSecond[Second];
  }
  double Ms = msSince(Start);
  unsigned Fewest = PerSecond.empty() ? 0 : PerSecond[0];
  for (size_t I = 0; I + 1 < PerSecond.size(); ++I) // the last second is cut short
    Fewest = std::min(Fewest, PerSecond[I]);
  std::printf("caller: %u calls answered, %u failed, in %.0f ms: %.0f answers a second; "
              "fewest in one second %u\n",
              Answered, Failed, Ms, Answered * 1000.0 / Ms, Fewest);
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  return Failed ? 1 : 0;
}

static int loopers(int Argc, char **Argv) {
  const tc_package *Pkg = containment(Argv[2]);
  tc_context_t *Ctx = Pkg ? context(const_cast<tc_package *>(Pkg)) : nullptr;
  if (!Ctx)
    return fail("loopers: no context");
  unsigned Connections = unsigned(std::atoi(Argv[5])), Frames = unsigned(std::atoi(Argv[6]));
  uint64_t Loop[2] = {5, 8}; // jam_crash.amc: loops for ever
  auto Start = std::chrono::steady_clock::now();
  for (unsigned C = 1; C <= Connections; ++C) {
    tc_status_t St = TC_OK;
    tc_peer_t *Peer = connectTo(Ctx, Argv[4], Argv[3], &St);
    if (!Peer) {
      std::printf("loopers: connection %u: refused: %s\n", C, tc_status_string(St));
      continue;
    }
    for (unsigned I = 0; I < Frames && St == TC_OK; ++I)
      St = send(Ctx, Peer, Pkg, element(Pkg, "crash"), TC_SEND_INJECTED, Loop, sizeof Loop);
    if (St == TC_OK)
      St = tc_flush(Peer, 30000);
    tc_jam_fault_t F = {};
    tc_peer_last_fault(Peer, &F);
    std::printf("loopers: connection %u: sent %u looping frames: %s; last fault kind %u\n", C,
                Frames, tc_status_string(St), F.kind);
    tc_peer_close(Peer);
  }
  std::printf("loopers: %u connections in %.0f ms\n", Connections, msSince(Start));
  if (Argc > 7) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(Argv[7])));
    tc_status_t St = TC_OK;
    tc_peer_t *Peer = connectTo(Ctx, Argv[4], Argv[3], &St);
    if (Peer) {
      St = send(Ctx, Peer, Pkg, element(Pkg, "count"), TC_SEND_LOCAL, nullptr, 0);
      if (St == TC_OK)
        St = tc_flush(Peer, 30000);
      tc_peer_close(Peer);
    }
    std::printf("loopers: after waiting: %s a count frame: %s\n",
                Peer ? "connected, sent" : "could not connect for", tc_status_string(St));
  }
  std::fflush(stdout);
  tc_context_destroy(Ctx);
  return 0;
}

int main(int Argc, char **Argv) {
  std::string Verb = Argc > 1 ? Argv[1] : "";
  if (Verb == "receiver" && Argc >= 6) {
    // Resident memory, mappings and descriptors before its context exists,
    // for the connect/close cycles (test_receiver.h prints them again just
    // before the context is destroyed); and after.
    std::printf("receiver: resident at start %ld kB, mappings %ld, descriptors %ld\n", residentKb(),
                mappings(), descriptors());
    int R = receiver(Argc, Argv);
    std::printf("receiver: resident at end %ld kB, mappings %ld\n", residentKb(), mappings());
    return R;
  }
  if (Verb == "crash" && Argc == 7)
    return crash(Argv);
  if (Verb == "count" && Argc == 5)
    return count(Argv);
  if (Verb == "stall" && Argc == 6)
    return stall(Argv);
  if (Verb == "cycles" && Argc == 5)
    return cycles(Argv);
  if (Verb == "stuck" && Argc == 4)
    return stuck(Argv);
  if (Verb == "connect" && Argc == 4)
    return connectTimed(Argv);
  if (Verb == "bouncer" && Argc == 4)
    return bouncer(Argv);
  if (Verb == "caller" && (Argc == 7 || Argc == 8))
    return caller(Argc, Argv);
  if (Verb == "loopers" && (Argc == 7 || Argc == 8))
    return loopers(Argc, Argv);
  std::fprintf(stderr, "usage: see the comment at the top of tc_containment.cpp\n");
  return 2;
}
