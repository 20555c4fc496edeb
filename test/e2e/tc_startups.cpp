//===- tc_startups.cpp - Connections that never authenticate, and a peer ---===//
//
//   tc-startups flood HOST PORT COUNT SECONDS hold|reopen FROM
//       a UCX client that knows nothing of Two-Chains and has no key: opens
//       COUNT connections to the listener from FROM (an address of one of
//       this host's interfaces), and never sends a byte of the handshake.
//       hold: keeps what it opened; reopen: opens again each connection
//       the receiver closes, at once. Ends after SECONDS, printing each
//       second what it opened and what was closed on it.
//   tc-startups steady PREFIX PORT FRAMES PAUSE_MS [HOST]
//       a good peer (TC_KEY decides the key): connects to HOST (127.0.0.1
//       unless given; this host's own address to come from it) with
//       tc_connect's usual timeout (5 s), then sends FRAMES stdlib frames one at a time,
//       each flushed (its round trip), PAUSE_MS apart; prints how long the
//       connect took, the rate and the slowest round trip.
//
//===----------------------------------------------------------------------===//
#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <twochains/packages/stdlib.h>
#include <twochains/twochains.h>
#include <ucp/api/ucp.h>
#include <vector>

using Clock = std::chrono::steady_clock;

static double msSince(Clock::time_point T) {
  return std::chrono::duration<double, std::milli>(Clock::now() - T).count();
}

static int fail(const std::string &What) {
  std::fprintf(stderr, "%s\n", What.c_str());
  return 1;
}

namespace {
/// One of the flood's connections.
struct Attempt {
  ucp_ep_h Ep = nullptr;
  bool Failed = false;
};
} // namespace

static void onFlood(void *Arg, ucp_ep_h, ucs_status_t) {
  static_cast<Attempt *>(Arg)->Failed = true;
}

/// A UCX client of its own, as the runtime's control context is made (a
/// client with more rendezvous lanes fails its own wire-up before the
/// receiver sees it).
static bool rawUcx(ucp_context_h &Ucp, ucp_worker_h &Worker) {
  ucp_config_t *Config;
  if (ucp_config_read(nullptr, nullptr, &Config) != UCS_OK)
    return false;
  ucp_config_modify(Config, "MAX_RNDV_LANES", "1");
  ucp_params_t P = {};
  P.field_mask = UCP_PARAM_FIELD_FEATURES;
  P.features = UCP_FEATURE_AM;
  ucp_worker_params_t W = {};
  bool Made = ucp_init(&P, Config, &Ucp) == UCS_OK && ucp_worker_create(Ucp, &W, &Worker) == UCS_OK;
  ucp_config_release(Config);
  // What the receiver says (CHALLENGE, REFUSED) is dropped: UCX 1.13 crashes
  // on a message with a reply endpoint and no handler for it.
  for (unsigned Id = TC_AM_ID_FIRST; Made && Id <= TC_AM_ID_LAST; ++Id) {
    ucp_am_handler_param_t H = {};
    H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
    H.id = Id;
    H.cb = [](void *, const void *, size_t, void *, size_t, const ucp_am_recv_param_t *) {
      return UCS_OK;
    };
    Made = ucp_worker_set_am_recv_handler(Worker, &H) == UCS_OK;
  }
  return Made;
}

/// A client-server endpoint to Host:Port from the address From.
static ucp_ep_h rawConnect(ucp_worker_h Worker, const char *Host, uint16_t Port, in_addr From,
                           ucp_err_handler_cb_t OnError, void *Arg) {
  sockaddr_in To = {}, Local = {};
  To.sin_family = Local.sin_family = AF_INET;
  To.sin_port = htons(Port);
  inet_pton(AF_INET, Host, &To.sin_addr);
  Local.sin_addr = From;
  ucp_ep_params_t E = {};
  E.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                 UCP_EP_PARAM_FIELD_LOCAL_SOCK_ADDR | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  E.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  E.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  E.sockaddr.addr = reinterpret_cast<sockaddr *>(&To);
  E.sockaddr.addrlen = sizeof To;
  E.local_sockaddr.addr = reinterpret_cast<sockaddr *>(&Local);
  E.local_sockaddr.addrlen = sizeof Local;
  E.err_handler.cb = OnError;
  E.err_handler.arg = Arg;
  ucp_ep_h Ep = nullptr;
  return ucp_ep_create(Worker, &E, &Ep) == UCS_OK ? Ep : nullptr;
}

static int flood(char **Argv) {
  const char *Host = Argv[2];
  uint16_t Port = uint16_t(std::atoi(Argv[3]));
  unsigned Count = unsigned(std::atoi(Argv[4]));
  double Seconds = std::atof(Argv[5]);
  bool Reopen = !std::strcmp(Argv[6], "reopen");
  in_addr From;
  if (inet_pton(AF_INET, Argv[7], &From) != 1)
    return fail("flood: not an IPv4 address: " + std::string(Argv[7]));
  ucp_context_h Ucp;
  ucp_worker_h Worker;
  if (!rawUcx(Ucp, Worker))
    return fail("flood: ucp_init");
  std::vector<Attempt> Conns(Count);
  unsigned long Opened = 0, Closed = 0, OpenFailed = 0;
  auto Open = [&](unsigned I) {
    Conns[I].Failed = false;
    Conns[I].Ep = rawConnect(Worker, Host, Port, From, onFlood, &Conns[I]);
    ++(Conns[I].Ep ? Opened : OpenFailed);
  };
  auto Close = [&](Attempt &A) {
    ucp_request_param_t C = {};
    C.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    C.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t R = ucp_ep_close_nbx(A.Ep, &C);
    if (UCS_PTR_IS_PTR(R))
      ucp_request_free(R);
    A.Ep = nullptr;
  };
  Clock::time_point Start = Clock::now(), Report = Start;
  for (unsigned I = 0; I < Count; ++I) {
    Open(I);
    ucp_worker_progress(Worker);
  }
  while (msSince(Start) < Seconds * 1000) {
    ucp_worker_progress(Worker);
    for (unsigned I = 0; I < Count; ++I) {
      if (Conns[I].Ep && Conns[I].Failed) {
        Close(Conns[I]);
        ++Closed;
      }
      if (!Conns[I].Ep && Reopen)
        Open(I);
    }
    if (msSince(Report) >= 1000) {
      Report = Clock::now();
      unsigned Live = 0;
      for (Attempt &A : Conns)
        Live += A.Ep != nullptr;
      std::printf("flood: %.0f ms: %u open, %lu opened, %lu closed on it\n", msSince(Start), Live,
                  Opened, Closed);
      std::fflush(stdout);
    }
  }
  std::printf("flood: done: %lu opened, %lu closed on it, %lu could not open\n", Opened, Closed,
              OpenFailed);
  std::fflush(stdout);
  std::_Exit(0); // what is still open closes with the process
}

static int steady(char **Argv) {
  tc_package_params_t PP = {TC_PACKAGE_PARAMS_VERSION, TC_PACKAGE_SENDER, Argv[2], "stdlib",
                            nullptr};
  tc_package_t *Pkg = nullptr;
  tc_context_t *Ctx = nullptr;
  tc_context_params_t CP = {};
  CP.version = TC_CONTEXT_PARAMS_VERSION;
  CP.slots = 16;
  CP.slot_size = 1024;
  CP.credit_batch = 4;
  if (tc_package_load(&PP, &Pkg) != TC_OK || tc_context_create(&CP, &Ctx) != TC_OK ||
      tc_context_add_package(Ctx, Pkg) != TC_OK)
    return fail("steady: cannot set up the sender");
  tc_peer_t *Peer = nullptr;
  Clock::time_point Start = Clock::now();
  const char *Host = Argv[6] ? Argv[6] : "127.0.0.1";
  tc_status_t St = tc_connect(Ctx, Host, uint16_t(std::atoi(Argv[3])), 5000, &Peer);
  std::printf("steady: connect: %s in %.0f ms\n", tc_status_string(St), msSince(Start));
  std::fflush(stdout);
  if (St != TC_OK)
    return 1;
  unsigned Frames = unsigned(std::atoi(Argv[4])), Pause = unsigned(std::atoi(Argv[5])), Sent = 0;
  int32_t Sum[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  double Slowest = 0, Busy = 0;
  Start = Clock::now();
  for (; Sent < Frames && St == TC_OK; ++Sent) {
    Clock::time_point One = Clock::now();
    while ((St = tc_send(Peer, Pkg, STDLIB_SERVER_SIDE_SUM, TC_SEND_LOCAL, Sum, sizeof Sum)) ==
           TC_ERR_NO_CREDIT)
      tc_progress(Ctx, nullptr);
    if (St == TC_OK)
      St = tc_flush(Peer, 10000);
    double Ms = msSince(One);
    Slowest = std::max(Slowest, Ms);
    Busy += Ms;
    if (Pause)
      std::this_thread::sleep_for(std::chrono::milliseconds(Pause));
  }
  if (St != TC_OK)
    --Sent;
  std::printf("steady: %u of %u frames: %s in %.0f ms; round trips %.2f ms on average, %.1f ms "
              "the slowest\n",
              Sent, Frames, tc_status_string(St), msSince(Start), Sent ? Busy / Sent : 0.0,
              Slowest);
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  return St == TC_OK ? 0 : 1;
}

int main(int Argc, char **Argv) {
  std::string Verb = Argc > 1 ? Argv[1] : "";
  if (Verb == "flood" && Argc == 8)
    return flood(Argv);
  if (Verb == "steady" && (Argc == 6 || Argc == 7))
    return steady(Argv);
  std::fprintf(stderr, "usage: see the comment at the top of tc_startups.cpp\n");
  return 2;
}
