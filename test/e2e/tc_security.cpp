//===- tc_security.cpp - A receiver and the peers that attack it ----------===//
//
//   tc-security receiver PREFIX PKG PORT FRAMES [ADDRESS]
//       loads package PKG, listens, runs FRAMES frames (or 60 s), and
//       prints its statistics and whether its canary (heap memory no peer
//       may reach) is intact
//   tc-security listen ADDRESS [insecure]     tries tc_listen, prints the status
//   tc-security connect PREFIX PORT FRAMES    connects (TC_KEY decides the
//       key), sends FRAMES server_side_sum frames, prints the status
//   tc-security sockets MODE [ARG]            a context that listens on
//       ARG (MODE listen), connects to port ARG on 127.0.0.1 (connect) or
//       neither (none), then prints the TCP sockets it listens on
//   tc-security attack HOST PORT ADDRESS      a raw UCX client over TCP:
//       connects to the listener and puts to / gets from ADDRESS
//
// Built as an application is, on the installed headers and libtwochains
// (and UCX's own API for the raw client). Peers that forge the runtime's
// messages (offers, WELCOMEs, rieds, batches, slots rewritten) need its
// wire formats: they are the unit tests HostileOffers.*, HostileSender.*
// and GoneKey.* (test/unit).
//
//===----------------------------------------------------------------------===//
#include "test_receiver.h"

#include <arpa/inet.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>
#include <algorithm>
#include <string>
#include <twochains/packages/stdlib.h>
#include <ucp/api/ucp.h>
#include <vector>


static int listenOnly(int Argc, char **Argv) {
  tc_context_t *Ctx =
      context(nullptr, Argc > 3 && !std::strcmp(Argv[3], "insecure") ? TC_CONTEXT_INSECURE : 0);
  if (!Ctx)
    return fail("cannot create a context");
  std::printf("listen %s: %s\n", Argv[2], tc_status_string(tc_listen(Ctx, Argv[2], 0)));
  tc_context_destroy(Ctx);
  return 0;
}

static int connectAndSend(char **Argv) {
  tc_package_t *Pkg = load(Argv[2], "stdlib", TC_PACKAGE_SENDER);
  tc_context_t *Ctx = Pkg ? context(Pkg) : nullptr;
  if (!Ctx)
    return fail("cannot set up the sender");
  tc_peer_t *Peer = nullptr;
  tc_status_t St = tc_connect(Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[3])), 5000, &Peer);
  std::printf("connect: %s\n", tc_status_string(St));
  if (St != TC_OK)
    return 1;
  int32_t Sum[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  unsigned Frames = unsigned(std::atoi(Argv[4]));
  for (unsigned I = 0; I < Frames && St == TC_OK; ++I)
    while ((St = tc_send(Peer, Pkg, STDLIB_SERVER_SIDE_SUM, I % 2 ? TC_SEND_INJECTED : TC_SEND_LOCAL,
                         Sum, sizeof Sum)) == TC_ERR_NO_CREDIT)
      tc_progress(Ctx, nullptr);
  if (St == TC_OK)
    St = tc_flush(Peer, 10000);
  std::printf("connect: sent %u frames: %s\n", Frames, tc_status_string(St));
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  return St == TC_OK ? 0 : 1;
}

/// A packed key of 4096 bytes of this process's own memory, mapped in Ucp.
static bool packOwnKey(ucp_context_h Ucp, void **Packed, size_t *Size) {
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.length = 4096;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h Mem;
  return ucp_mem_map(Ucp, &M, &Mem) == UCS_OK && ucp_rkey_pack(Ucp, Mem, Packed, Size) == UCS_OK;
}

/// A status's name, without libucs: linked directly, it would come before
/// libtwochains-ucx in the lookup order, and UCX's async calls would no
/// longer reach the runtime's guard of them (runtime/ucx/UcxAsyncGuard.cpp).
static std::string statusName(ucs_status_t St) {
  switch (St) {
  case UCS_OK:
    return "Success";
  case UCS_ERR_TIMED_OUT:
    return "Operation timed out";
  default:
    return "status " + std::to_string(int(St));
  }
}

/// Progresses until the request completes or the time is up; a request
/// still pending is left behind (the process exits right after).
static ucs_status_t within(ucp_worker_h Worker, ucs_status_ptr_t R, uint64_t Ms) {
  if (!UCS_PTR_IS_PTR(R))
    return UCS_PTR_STATUS(R);
  uint64_t End = monotonicNs() + Ms * 1'000'000;
  ucs_status_t St;
  while ((St = ucp_request_check_status(R)) == UCS_INPROGRESS && monotonicNs() < End)
    ucp_worker_progress(Worker);
  return St == UCS_INPROGRESS ? UCS_ERR_TIMED_OUT : St;
}

/// A UCX client that knows nothing of Two-Chains: it asks UCX's RMA over
/// TCP for memory at Address in the receiver.
static int attack(char **Argv) {
  ucp_config_t *Config;
  ucp_config_read(nullptr, nullptr, &Config);
  ucp_params_t P = {};
  P.field_mask = UCP_PARAM_FIELD_FEATURES;
  P.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
  ucp_context_h Ucp;
  ucp_worker_h Worker;
  ucp_worker_params_t W = {};
  if (ucp_init(&P, Config, &Ucp) != UCS_OK || ucp_worker_create(Ucp, &W, &Worker) != UCS_OK)
    return fail("ucp_init");
  sockaddr_in SA = {};
  SA.sin_family = AF_INET;
  SA.sin_port = htons(uint16_t(std::atoi(Argv[3])));
  inet_pton(AF_INET, Argv[2], &SA.sin_addr);
  ucp_ep_params_t E = {};
  E.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  E.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  E.err_mode = UCP_ERR_HANDLING_MODE_PEER; // as the listener's endpoints have it
  E.sockaddr.addr = reinterpret_cast<sockaddr *>(&SA);
  E.sockaddr.addrlen = sizeof SA;
  ucp_ep_h Ep;
  if (ucp_ep_create(Worker, &E, &Ep) != UCS_OK)
    return fail("ucp_ep_create");
  // Any key will do for emulated RMA, which checks none: one of our own.
  void *Packed;
  size_t PackedSize;
  ucp_rkey_h Key;
  if (!packOwnKey(Ucp, &Packed, &PackedSize))
    return fail("cannot make a key");
  // Let the connection come up first.
  ucp_request_param_t F = {};
  within(Worker, ucp_ep_flush_nbx(Ep, &F), 1000);
  ucs_status_t St = ucp_ep_rkey_unpack(Ep, Packed, &Key);
  if (St != UCS_OK) {
    std::printf("attack: no key usable on this endpoint (%s)\n", statusName(St).c_str());
    return 0;
  }
  uint64_t Address = std::strtoull(Argv[4], nullptr, 0);
  uint64_t Evil[8];
  std::memset(Evil, 0x41, sizeof Evil);
  uint64_t Read[8] = {};
  ucp_request_param_t R = {};
  ucs_status_t Put = within(Worker, ucp_put_nbx(Ep, Evil, sizeof Evil, Address, Key, &R), 1000);
  ucs_status_t Flush = within(Worker, ucp_ep_flush_nbx(Ep, &R), 1000);
  ucs_status_t Get = within(Worker, ucp_get_nbx(Ep, Read, sizeof Read, Address, Key, &R), 1000);
  bool SawCanary = Get == UCS_OK && Read[0] == 0xc5c5c5c5c5c5c5c5ull;
  std::printf("attack: put %s, flush %s, get %s%s\n", statusName(Put).c_str(),
              statusName(Flush).c_str(), statusName(Get).c_str(),
              SawCanary ? ": READ THE CANARY" : "");
  std::fflush(stdout);
  std::_Exit(0);
}

/// The TCP sockets this process listens on, as "address:port" (IPv4 and
/// IPv6), from its descriptors and the kernel's socket tables.
static std::vector<std::string> listeningSockets() {
  std::vector<std::string> Inodes, Out;
  if (DIR *D = opendir("/proc/self/fd")) {
    while (dirent *E = readdir(D)) {
      char Link[64] = {};
      std::string Path = std::string("/proc/self/fd/") + E->d_name;
      if (readlink(Path.c_str(), Link, sizeof Link - 1) > 0 && !std::strncmp(Link, "socket:[", 8))
        Inodes.push_back(std::string(Link + 8, std::strlen(Link) - 9));
    }
    closedir(D);
  }
  for (const char *Table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::FILE *F = std::fopen(Table, "re");
    char Line[512];
    while (F && std::fgets(Line, sizeof Line, F)) {
      char Local[64], Remote[64], State[8], Inode[32];
      if (std::sscanf(Line, "%*s %63s %63s %7s %*s %*s %*s %*s %*s %31s", Local, Remote, State,
                      Inode) != 4 ||
          std::strcmp(State, "0A") ||
          std::find(Inodes.begin(), Inodes.end(), Inode) == Inodes.end())
        continue;
      std::string Hex(Local);
      size_t Colon = Hex.find(':');
      unsigned Port = unsigned(std::strtoul(Hex.c_str() + Colon + 1, nullptr, 16));
      char Text[INET6_ADDRSTRLEN] = "?";
      if (Colon == 8) {
        in_addr A;
        A.s_addr = uint32_t(std::strtoul(Hex.substr(0, 8).c_str(), nullptr, 16));
        inet_ntop(AF_INET, &A, Text, sizeof Text);
      } else if (Colon == 32) {
        in6_addr A;
        for (int W = 0; W < 4; ++W) {
          uint32_t Word = uint32_t(std::strtoul(Hex.substr(W * 8, 8).c_str(), nullptr, 16));
          std::memcpy(&A.s6_addr[W * 4], &Word, 4);
        }
        inet_ntop(AF_INET6, &A, Text, sizeof Text);
      }
      Out.push_back(std::string(Text) + ":" + std::to_string(Port));
    }
    if (F)
      std::fclose(F);
  }
  return Out;
}

static int sockets(int Argc, char **Argv) {
  std::string Mode = Argv[2];
  tc_package_t *Pkg = load(std::getenv("TC_SECURITY_STDLIB"), "stdlib",
                           TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER);
  tc_context_t *Ctx = Pkg ? context(Pkg) : nullptr;
  if (!Ctx)
    return fail("cannot create a context");
  tc_peer_t *Peer = nullptr;
  if (Mode == "listen" && Argc > 3)
    std::printf("sockets: listen: %s\n", tc_status_string(tc_listen(Ctx, Argv[3], 0)));
  else if (Mode == "connect" && Argc > 3)
    std::printf(
        "sockets: connect: %s\n",
        tc_status_string(tc_connect(Ctx, "127.0.0.1", uint16_t(std::atoi(Argv[3])), 5000, &Peer)));
  for (int I = 0; I < 100; ++I)
    tc_progress(Ctx, nullptr);
  std::vector<std::string> Listening = listeningSockets();
  for (const std::string &L : Listening)
    std::printf("sockets: listening on %s\n", L.c_str());
  std::printf("sockets: %zu listening\n", Listening.size());
  std::fflush(stdout);
  std::_Exit(0);
}

int main(int Argc, char **Argv) {
  std::string Verb = Argc > 1 ? Argv[1] : "";
  if (Verb == "receiver" && Argc >= 6)
    return receiver(Argc, Argv);
  if (Verb == "listen" && Argc >= 3)
    return listenOnly(Argc, Argv);
  if (Verb == "connect" && Argc == 5)
    return connectAndSend(Argv);
  if (Verb == "sockets" && Argc >= 3)
    return sockets(Argc, Argv);
  if (Verb == "attack" && Argc == 5)
    return attack(Argv);
  std::fprintf(stderr, "usage: see the comment at the top of tc_security.cpp\n");
  return 2;
}
