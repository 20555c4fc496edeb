//===- tc_security.cpp - A receiver and the peers that attack it ----------===//
//
//   tc-security receiver PREFIX PKG PORT FRAMES [ADDRESS]
//       loads package PKG, listens, runs FRAMES frames (or 60 s), and
//       prints its statistics, whether its canary (heap memory no peer may
//       reach) is intact, and what the probe ried saw
//   tc-security listen ADDRESS [insecure]     tries tc_listen, prints the status
//   tc-security connect PREFIX PORT FRAMES    connects (TC_KEY decides the
//       key), sends FRAMES server_side_sum frames, prints the status
//   tc-security offer PREFIX PORT KIND        authenticates, then sends a
//       HELLO whose offer is broken as KIND says (good: not broken)
//   tc-security sockets MODE [ARG]            a context that listens on
//       ARG (MODE listen), connects to port ARG on 127.0.0.1 (connect) or
//       neither (none), then prints the TCP sockets it listens on
//   tc-security attack HOST PORT ADDRESS      a raw UCX client over TCP:
//       connects to the listener and puts to / gets from ADDRESS
//
//===----------------------------------------------------------------------===//
#include "wire/Frame.h"
#include "calls/Calls.h"
#include "code/InjectedCode.h"
#include "context/Context.h"
#include "control/ControlMessage.h"
#include "control/ControlWorker.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Peers.h"
#include "core/Stats.h"
#include "receive/Receive.h"
#include "path/FramePath.h"
#include "send/Send.h"
#include "ucx/Request.h"
#include "wireup/Mailbox.h"
#include "wireup/Wireup.h"
#include "wire/Wire.h"
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
#include <vector>

using namespace twochains::rt;


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

/// A peer that speaks the handshake itself, through the runtime's handlers.
struct RawPeer {
  tc_context *Ctx;
  tc_peer *Peer;
};

static bool rawConnect(tc_context *Ctx, uint16_t Port, RawPeer &Out) {
  tc_peer *Peer = newPeer(Ctx).release();
  Peer->Name = "receiver";
  sockaddr_in SA = {};
  SA.sin_family = AF_INET;
  SA.sin_port = htons(Port);
  SA.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                 UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  P.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  P.sockaddr.addr = reinterpret_cast<sockaddr *>(&SA);
  P.sockaddr.addrlen = sizeof SA;
  P.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  P.err_handler.cb = [](void *Arg, ucp_ep_h, ucs_status_t) {
    static_cast<tc_peer *>(Arg)->Failed = true;
  };
  P.err_handler.arg = Peer;
  if (useTcpInterface(Ctx, "lo", "a raw connect") != TC_OK ||
      ucp_ep_create(Ctx->Worker, &P, &Peer->Ep) != UCS_OK)
    return false;
  Ctx->Connecting.push_back(Peer);
  Out = {Ctx, Peer};
  return true;
}

static ucs_status_t rawSend(RawPeer &R, unsigned Id, const void *H, size_t HS, const void *B,
                            size_t BS) {
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_EAGER;
  return waitRequestUntil(R.Ctx->Worker, ucp_am_send_nbx(R.Peer->Ep, Id, H, HS, B, BS, &P),
                          nowNs() + 2'000'000'000ull);
}

/// Waits for message Id; false on failure or after 2 s.
static bool rawAwait(RawPeer &R, unsigned Id, WireupContext::PendingMessage &Out) {
  uint64_t Deadline = nowNs() + 2'000'000'000ull;
  while (nowNs() < Deadline && !R.Peer->Failed) {
    ucp_worker_progress(R.Ctx->Worker);
    for (size_t I = 0; I < R.Ctx->Wireup->Handshakes.size(); ++I)
      if (R.Ctx->Wireup->Handshakes[I].Id == Id && R.Ctx->Wireup->Handshakes[I].Ep == R.Peer->Ep) {
        Out = std::move(R.Ctx->Wireup->Handshakes[I]);
        R.Ctx->Wireup->Handshakes.erase(R.Ctx->Wireup->Handshakes.begin() + I);
        return true;
      }
  }
  return false;
}

/// A packed key of Length bytes of this process's own memory, mapped in
/// Ucp; Base: where that memory is.
static bool packOwnKey(ucp_context_h Ucp, void **Packed, size_t *Size, bool Unmap = false,
                       size_t Length = 4096, uint64_t *Base = nullptr) {
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.length = Length;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_h Mem;
  ucp_mem_attr_t A = {};
  A.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  if (ucp_mem_map(Ucp, &M, &Mem) != UCS_OK || ucp_rkey_pack(Ucp, Mem, Packed, Size) != UCS_OK ||
      ucp_mem_query(Mem, &A) != UCS_OK)
    return false;
  if (Base)
    *Base = reinterpret_cast<uint64_t>(A.address);
  // gone-key: the memory (a SysV or POSIX segment) is gone before the
  // receiver unpacks its key, as when a sender dies mid-handshake.
  return !Unmap || ucp_mem_unmap(Ucp, Mem) == UCS_OK;
}

/// Makes a packed rkey claim more than it holds, keeping its size: the
/// first per-memory-domain length byte says 255 (Wire.cpp has the layout).
static void corruptPackedRkey(uint8_t *Key, size_t Size) {
  if (Size > 9)
    Key[9] = 0xff;
}

/// AUTH, then the receiver's CHALLENGE: R's nonces set.
static bool rawAuthenticate(RawPeer &R) {
  AuthRequest A = {AuthMagic, HandshakeVersion, {}};
  randomNonce(R.Peer->Wireup->ClientNonce);
  std::memcpy(A.ClientNonce, R.Peer->Wireup->ClientNonce, NonceSize);
  WireupContext::PendingMessage M;
  if (rawSend(R, AmAuth, &A, sizeof A, nullptr, 0) != UCS_OK || !rawAwait(R, AmChallenge, M) ||
      M.Header.size() != sizeof(AuthChallenge))
    return false;
  AuthChallenge C;
  std::memcpy(&C, M.Header.data(), sizeof C);
  std::memcpy(R.Peer->Wireup->ServerNonce, C.ServerNonce, NonceSize);
  return true;
}

/// HELLO with offer O (its MAC made here, broken if BadMac), then the
/// receiver's answer: "ACCEPTED" or "refused: <status>".
static bool rawHello(RawPeer &R, Offer O, const std::vector<uint8_t> &Body, bool BadMac,
                     std::string &Answer) {
  static const char Label[] = "tc-auth-v1 hello";
  const auto *Fields = reinterpret_cast<const uint8_t *>(&O) + MacSize;
  hmacSha256(R.Ctx->Key,
             {{Label, sizeof Label},
              {R.Peer->Wireup->ClientNonce, NonceSize},
              {R.Peer->Wireup->ServerNonce, NonceSize},
              {Fields, sizeof O - MacSize},
              {Body.data(), Body.size()}},
             O.Mac);
  if (BadMac)
    O.Mac[7] ^= 1;
  if (rawSend(R, AmHello, &O, sizeof O, Body.data(), Body.size()) != UCS_OK)
    return false;
  uint64_t Deadline = nowNs() + 2'000'000'000ull;
  Answer = "refused (no answer)";
  while (nowNs() < Deadline && Answer == "refused (no answer)") {
    ucp_worker_progress(R.Ctx->Worker);
    for (auto &H : R.Ctx->Wireup->Handshakes)
      if (H.Ep == R.Peer->Ep && H.Id == AmWelcome)
        Answer = "ACCEPTED";
      else if (H.Ep == R.Peer->Ep && H.Id == AmRefused && H.Header.size() == sizeof(Refusal)) {
        Refusal F;
        std::memcpy(&F, H.Header.data(), sizeof F);
        Answer = std::string("refused: ") + tc_status_string(tc_status_t(F.Status));
      }
  }
  return true;
}

/// An offer of a ring of 16 slots of 1 KiB on the message path.
static Offer smallOffer() {
  Offer O = {};
  O.Magic = HandshakeMagic;
  O.Version = HandshakeVersion;
  O.Slots = 16;
  O.SlotSize = 1024;
  O.MailboxMode = TC_MAILBOX_CODE_CACHE;
  O.Path = PathAm;
  O.Isa = hostIsa();
  O.CodeTrust = TC_CODE_TRUST_PACKAGE;
  return O;
}

/// Makes O an RMA offer with real keys of one region of this process and
/// the real RMA worker address, in Body: the credit line at the region's
/// start (Base), the ring after it; Region is its size. Unmap: the region
/// is gone before the receiver unpacks its keys.
static bool rmaOffer(tc_context *Ctx, Offer &O, std::vector<uint8_t> &Body, uint64_t &Base,
                     size_t &Region, bool Unmap = false) {
  void *Packed;
  size_t PackedSize;
  Region = (4096 + size_t(O.Slots) * slotStride(O.SlotSize) + 4095) & ~size_t(4095);
  if (!Ctx->RmaUcp || !packOwnKey(Ctx->RmaUcp, &Packed, &PackedSize, Unmap, Region, &Base))
    return false;
  O.Path = PathRma;
  O.CreditKeySize = O.RingKeySize = uint32_t(PackedSize);
  O.WorkerAddressSize = uint32_t(Ctx->WorkerAddressSize);
  O.CreditAddress = Base;
  O.RingAddress = Base + 4096;
  auto *K = static_cast<const uint8_t *>(Packed);
  Body.insert(Body.end(), K, K + PackedSize);
  Body.insert(Body.end(), K, K + PackedSize);
  auto *W = reinterpret_cast<const uint8_t *>(Ctx->WorkerAddress);
  Body.insert(Body.end(), W, W + Ctx->WorkerAddressSize);
  return true;
}

static int offer(char **Argv) {
  std::string Kind = Argv[4];
  tc_context *Ctx = context(nullptr);
  RawPeer R;
  if (!Ctx || !rawConnect(Ctx, uint16_t(std::atoi(Argv[3])), R))
    return fail("cannot connect");
  if (Kind == "wrong-role") {
    // Messages only a connecting side takes, sent to the receiver: more of
    // them than its handshake queue holds.
    AuthChallenge C = {ChallengeMagic, HandshakeVersion, {}, {}};
    for (int I = 0; I < 400; ++I)
      rawSend(R, AmChallenge, &C, sizeof C, nullptr, 0);
    std::printf("offer wrong-role: sent 400 challenges\n");
    std::fflush(stdout);
    std::_Exit(0);
  }
  if (!rawAuthenticate(R))
    return fail("no challenge");

  Offer O = smallOffer();
  std::vector<uint8_t> Body;
  auto Rma = [&](uint32_t CreditKey, uint32_t RingKey, uint32_t Worker) {
    O.Path = PathRma;
    O.CreditAddress = O.RingAddress = 0x1000;
    O.CreditKeySize = CreditKey;
    O.RingKeySize = RingKey;
    O.WorkerAddressSize = Worker;
  };
  if (Kind == "huge-ring") {
    O.Slots = 1u << 30;
    O.SlotSize = 1u << 20;
  } else if (Kind == "big-slot") {
    O.SlotSize = 3u << 20;
  } else if (Kind == "zero-slots") {
    O.Slots = 0;
  } else if (Kind == "key-sizes") {
    Rma(1u << 20, 16, 16);
    Body.assign(32, 0);
  } else if (Kind == "worker-address") {
    Rma(16, 16, 1u << 24);
    Body.assign(48, 0);
  } else if (Kind == "bad-rkey" || Kind == "good-rma" || Kind == "gone-key" ||
             Kind.find("-far") != std::string::npos || Kind.find("-past-end") != std::string::npos) {
    // Real keys and a real RMA worker address, so the receiver takes the
    // RMA path and unpacks the keys; bad-rkey then breaks the keys' insides
    // while their sizes still add up: what UCX's unpacker, which takes no
    // length, would read past. Both keys name one region: the credit line
    // at its start, the ring after it. *-far names a place 1 TiB away;
    // *-past-end runs one line past the region's end (aim-canary aims at
    // the receiver's own memory).
    uint64_t Base = 0;
    size_t Region = 0;
    if (!rmaOffer(Ctx, O, Body, Base, Region, Kind == "gone-key"))
      return fail("no RMA context to make keys with");
    uint64_t RingBytes = uint64_t(O.Slots) * slotStride(O.SlotSize);
    if (Kind == "ring-far")
      O.RingAddress += 1ull << 40;
    else if (Kind == "credit-far")
      O.CreditAddress += 1ull << 40;
    else if (Kind == "ring-past-end")
      O.RingAddress = Base + Region - RingBytes + 64;
    else if (Kind == "credit-past-end")
      O.CreditAddress = Base + Region - 8;
    else if (Kind != "good-rma" && Kind != "bad-rkey" && Kind != "gone-key")
      return fail("unknown offer kind " + Kind);
    if (Kind == "bad-rkey")
      corruptPackedRkey(Body.data(), O.CreditKeySize);
  } else if (Kind == "in-place") {
    O.MailboxMode = TC_MAILBOX_IN_PLACE;
  } else if (Kind == "trailing-body") {
    Body.assign(4096, 0x41);
  } else if (Kind != "good" && Kind != "bad-mac") {
    return fail("unknown offer kind " + Kind);
  }
  std::string Answer;
  if (!rawHello(R, O, Body, Kind == "bad-mac", Answer))
    return fail("cannot send the hello");
  std::printf("offer %s: %s\n", Kind.c_str(), Answer.c_str());
  std::fflush(stdout);
  std::fflush(stdout);
  std::_Exit(0); // the raw peer is not the runtime's to release
}

/// Progresses until the request completes or the time is up; a request
/// still pending is left behind (the process exits right after).
static ucs_status_t within(ucp_worker_h Worker, ucs_status_ptr_t R, uint64_t Ms) {
  if (!UCS_PTR_IS_PTR(R))
    return UCS_PTR_STATUS(R);
  uint64_t End = nowNs() + Ms * 1'000'000;
  ucs_status_t St;
  while ((St = ucp_request_check_status(R)) == UCS_INPROGRESS && nowNs() < End)
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
    std::printf("attack: no key usable on this endpoint (%s)\n", ucs_status_string(St));
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
  std::printf("attack: put %s, flush %s, get %s%s\n", ucs_status_string(Put),
              ucs_status_string(Flush), ucs_status_string(Get),
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
  if (Verb == "offer" && Argc == 5)
    return offer(Argv);
  if (Verb == "sockets" && Argc >= 3)
    return sockets(Argc, Argv);
  if (Verb == "attack" && Argc == 5)
    return attack(Argv);
  std::fprintf(stderr, "usage: see the comment at the top of tc_security.cpp\n");
  return 2;
}
