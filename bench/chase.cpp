//===- chase.cpp - Pointer chase: a jam walking H hops against H round trips -===//
//
//   tc-chase server PORT INFO     a receiver with the chase package, and a raw
//       UCX worker of its own; the table (a random cycle of 2^16 entries) is
//       allocated by UCX, and the jam walks the same memory. Writes the UCX
//       worker address, the table's address and its packed key to INFO.
//   tc-chase client PORT INFO [REPS]
//       for H = 1, 4, 16, ..., 4096, the median time of a walk of H hops:
//         tc-walk   one tc_call: the walk jam runs on the server, answers once
//         ucx-get   H ucp_get_nbx of one entry each, each waited for
//         ucx-am    one active message whose handler walks, and one back
//       and their ratios, in one run (bench/run-chase.sh). Every walk's end
//       is checked against the client's own copy of the table.
//
// Three-Chains' pointer-chase benchmark, on Two-Chains (docs/performance.md,
// "Pointer chase").
//
//===----------------------------------------------------------------------===//
#include <twochains/packages/chase.h>
#include <twochains/twochains.h>
#include <ucp/api/ucp.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr uint64_t Entries = 1u << 16;
constexpr unsigned AmWalk = 21, AmWalked = 22;

struct Request {
  uint64_t Start, Hops;
};

/// The table: a single random cycle through every entry (Sattolo), the
/// same on both sides from one seed.
std::vector<uint64_t> makeTable() {
  std::vector<uint64_t> T(Entries);
  for (uint64_t I = 0; I < Entries; ++I)
    T[I] = I;
  std::mt19937_64 R(42);
  for (uint64_t I = Entries - 1; I > 0; --I)
    std::swap(T[I], T[R() % I]);
  return T;
}

uint64_t walkLocally(const std::vector<uint64_t> &T, uint64_t At, uint64_t Hops) {
  for (uint64_t H = 0; H < Hops; ++H)
    At = T[At];
  return At;
}

double nowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int fail(const char *What, const char *Why) {
  std::fprintf(stderr, "chase: %s: %s\n", What, Why);
  return 1;
}

ucs_status_t waitFor(ucp_worker_h W, ucs_status_ptr_t R) {
  if (!UCS_PTR_IS_PTR(R))
    return UCS_PTR_STATUS(R);
  ucs_status_t St;
  while ((St = ucp_request_check_status(R)) == UCS_INPROGRESS)
    ucp_worker_progress(W);
  ucp_request_free(R);
  return St;
}

struct Ucx {
  ucp_context_h Ctx = nullptr;
  ucp_worker_h Worker = nullptr;
  bool init() {
    ucp_params_t P = {};
    P.field_mask = UCP_PARAM_FIELD_FEATURES;
    P.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
    ucp_worker_params_t W = {};
    W.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    W.thread_mode = UCS_THREAD_MODE_SINGLE;
    return ucp_init(&P, nullptr, &Ctx) == UCS_OK &&
           ucp_worker_create(Ctx, &W, &Worker) == UCS_OK;
  }
};

// Server side.
uint64_t *ServerTable;
volatile sig_atomic_t Stop;

ucs_status_t onWalk(void *Arg, const void *Header, size_t HeaderLength, void *, size_t,
                    const ucp_am_recv_param_t *Param) {
  Request R;
  if (HeaderLength != sizeof R || !(Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP))
    return UCS_OK;
  std::memcpy(&R, Header, sizeof R);
  uint64_t At = R.Start % Entries;
  for (uint64_t H = 0; H < R.Hops; ++H)
    At = ServerTable[At] % Entries;
  static uint64_t Answer;
  Answer = At;
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_EAGER;
  ucs_status_ptr_t S = ucp_am_send_nbx(Param->reply_ep, AmWalked, &Answer, sizeof Answer,
                                       nullptr, 0, &P);
  waitFor(static_cast<ucp_worker_h>(Arg), S);
  return UCS_OK;
}

int server(uint16_t Port, const char *Info) {
  Ucx U;
  if (!U.init())
    return fail("server", "cannot create a UCX worker");
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.length = Entries * sizeof(uint64_t);
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h Mem;
  ucp_mem_attr_t A = {};
  A.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  void *Key;
  size_t KeySize;
  if (ucp_mem_map(U.Ctx, &M, &Mem) != UCS_OK || ucp_mem_query(Mem, &A) != UCS_OK ||
      ucp_rkey_pack(U.Ctx, Mem, &Key, &KeySize) != UCS_OK)
    return fail("server", "cannot allocate the table");
  ServerTable = static_cast<uint64_t *>(A.address);
  std::vector<uint64_t> T = makeTable();
  std::memcpy(ServerTable, T.data(), M.length);
  ucp_am_handler_param_t H = {};
  H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                 UCP_AM_HANDLER_PARAM_FIELD_ARG;
  H.id = AmWalk;
  H.cb = onWalk;
  H.arg = U.Worker;
  ucp_worker_set_am_recv_handler(U.Worker, &H);

  tc_package_t *Pkg;
  tc_status_t St = chase_package_load(TC_CHASE_PREFIX, TC_PACKAGE_RECEIVER, &Pkg);
  if (St != TC_OK)
    return fail("server", tc_status_string(St));
  *static_cast<uint64_t **>(tc_package_symbol(Pkg, "chase_table")) = ServerTable;
  *static_cast<uint64_t *>(tc_package_symbol(Pkg, "chase_size")) = Entries;
  tc_context_params_t CP = {};
  CP.version = TC_CONTEXT_PARAMS_VERSION;
  tc_context_t *Ctx;
  if ((St = tc_context_create(&CP, &Ctx)) != TC_OK || (St = tc_context_add_package(Ctx, Pkg)) ||
      (St = tc_listen(Ctx, "127.0.0.1", Port)) != TC_OK)
    return fail("server", tc_status_string(St));

  ucp_address_t *Address;
  size_t AddressSize;
  ucp_worker_get_address(U.Worker, &Address, &AddressSize);
  std::ofstream Out(Info, std::ios::binary);
  uint64_t Sizes[3] = {AddressSize, KeySize, reinterpret_cast<uint64_t>(ServerTable)};
  Out.write(reinterpret_cast<const char *>(Sizes), sizeof Sizes);
  Out.write(reinterpret_cast<const char *>(Address), std::streamsize(AddressSize));
  Out.write(static_cast<const char *>(Key), std::streamsize(KeySize));
  Out.close();
  std::printf("chase: listening\n");
  std::fflush(stdout);
  std::signal(SIGTERM, [](int) { Stop = 1; });
  while (!Stop) {
    tc_progress(Ctx, nullptr);
    ucp_worker_progress(U.Worker);
  }
  tc_context_destroy(Ctx);
  return 0;
}

// Client side.
volatile bool Answered;
uint64_t AmAnswer;

ucs_status_t onWalked(void *, const void *Header, size_t HeaderLength, void *, size_t,
                      const ucp_am_recv_param_t *) {
  if (HeaderLength == sizeof AmAnswer)
    std::memcpy(&AmAnswer, Header, sizeof AmAnswer);
  Answered = true;
  return UCS_OK;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

int client(uint16_t Port, const char *Info, unsigned Reps) {
  std::ifstream In(Info, std::ios::binary);
  uint64_t Sizes[3];
  if (!In.read(reinterpret_cast<char *>(Sizes), sizeof Sizes))
    return fail("client", "cannot read the server's description");
  std::vector<char> Address(Sizes[0]), Key(Sizes[1]);
  In.read(Address.data(), std::streamsize(Address.size()));
  In.read(Key.data(), std::streamsize(Key.size()));
  uint64_t Remote = Sizes[2];

  Ucx U;
  if (!U.init())
    return fail("client", "cannot create a UCX worker");
  ucp_ep_params_t EP = {};
  EP.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  EP.address = reinterpret_cast<const ucp_address_t *>(Address.data());
  ucp_ep_h Ep;
  ucp_rkey_h RKey;
  if (ucp_ep_create(U.Worker, &EP, &Ep) != UCS_OK ||
      ucp_ep_rkey_unpack(Ep, Key.data(), &RKey) != UCS_OK)
    return fail("client", "cannot reach the server's UCX worker");
  ucp_am_handler_param_t H = {};
  H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  H.id = AmWalked;
  H.cb = onWalked;
  ucp_worker_set_am_recv_handler(U.Worker, &H);

  tc_package_t *Pkg;
  tc_status_t St = chase_package_load(TC_CHASE_PREFIX, TC_PACKAGE_SENDER, &Pkg);
  tc_context_params_t CP = {};
  CP.version = TC_CONTEXT_PARAMS_VERSION;
  tc_context_t *Ctx = nullptr;
  tc_peer_t *Peer = nullptr;
  if (St != TC_OK || (St = tc_context_create(&CP, &Ctx)) != TC_OK ||
      (St = tc_context_add_package(Ctx, Pkg)) != TC_OK ||
      (St = tc_connect(Ctx, "127.0.0.1", Port, 10000, &Peer)) != TC_OK)
    return fail("client", tc_status_string(St));

  std::vector<uint64_t> T = makeTable();
  std::printf("| hops | tc-walk (µs) | ucx-get per hop (µs) | ucx-am walk (µs) | get / tc-walk | "
              "am / tc-walk |\n|---|---|---|---|---|---|\n");
  int Wrong = 0;
  for (uint64_t Hops = 1; Hops <= 4096; Hops *= 4) {
    std::vector<double> Tc, Get, Am;
    for (unsigned R = 0; R < Reps + 3; ++R) {
      uint64_t Start = (R * 7919 + Hops) % Entries, Want = walkLocally(T, Start, Hops);
      Request Q = {Start, Hops};
      // Two-Chains: one call.
      uint64_t Got = ~0ull;
      size_t N = 0;
      double T0 = nowUs();
      St = chase_call_walk(Peer, Pkg, TC_SEND_INJECTED, &Q, sizeof Q, &Got, sizeof Got, &N,
                           10000);
      double T1 = nowUs();
      Wrong += St != TC_OK || Got != Want;
      // UCX: one get per hop, each waited for.
      uint64_t At = Start, Word = 0;
      ucp_request_param_t P = {};
      for (uint64_t I = 0; I < Hops; ++I) {
        waitFor(U.Worker, ucp_get_nbx(Ep, &Word, sizeof Word, Remote + At * 8, RKey, &P));
        At = Word;
      }
      double T2 = nowUs();
      Wrong += At != Want;
      // UCX: an active message whose handler walks, and one back.
      Answered = false;
      ucp_request_param_t AP = {};
      AP.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      AP.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
      waitFor(U.Worker, ucp_am_send_nbx(Ep, AmWalk, &Q, sizeof Q, nullptr, 0, &AP));
      while (!Answered)
        ucp_worker_progress(U.Worker);
      double T3 = nowUs();
      Wrong += AmAnswer != Want;
      if (R >= 3) { // the first few warm caches and connections up
        Tc.push_back(T1 - T0);
        Get.push_back(T2 - T1);
        Am.push_back(T3 - T2);
      }
    }
    double MTc = median(Tc), MGet = median(Get), MAm = median(Am);
    std::printf("| %llu | %.2f | %.2f | %.2f | %.1f | %.2f |\n", (unsigned long long)Hops, MTc,
                MGet, MAm, MGet / MTc, MAm / MTc);
  }
  std::printf("chase: %s\n", Wrong ? "WRONG ANSWERS" : "every walk ended where it should");
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  return Wrong != 0;
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc >= 4 && !std::strcmp(Argv[1], "server"))
    return server(uint16_t(std::atoi(Argv[2])), Argv[3]);
  if (Argc >= 4 && !std::strcmp(Argv[1], "client"))
    return client(uint16_t(std::atoi(Argv[2])), Argv[3],
                  Argc > 4 ? unsigned(std::atoi(Argv[4])) : 200);
  std::fprintf(stderr, "usage: tc-chase server PORT INFO | tc-chase client PORT INFO [REPS]\n");
  return 2;
}
