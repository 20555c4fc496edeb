//===- payload_ahead.cpp - Payloads from 8 B to 4 MiB against UCX ---------===//
//
// Two processes on this host (fork), one run: a receiver with Two-Chains'
// default slots (4 KiB), so payloads larger than about a slot go ahead of
// their frames (docs/scaling.md, "Payloads larger than a slot") and
// smaller ones in them; the same payloads as UCX active messages, whose
// handler fetches the data (rendezvous) and does the same work (sums the
// int32s, as the stdlib's server_side_sum); and the same payloads put
// into the receiver's memory with ucp_put (nothing runs there).
//
//   latency  one message, then its answer: UCX AM, an AM and an
//            acknowledging AM; ucp_put, a put and a flush (it landed);
//            Two-Chains, tc_send then tc_flush (the receiver ran it);
//            payloads that go ahead also with TC_SEND_NO_COPY
//   rate     N messages back to back, until the receiver has done all
//            (puts: until a flush says all landed); UCX with up to 16
//            sends in flight from buffers of their own
//
//   payload-ahead [--sizes 8192,65536,1048576] [--iters N]   (8 B to 4 MiB)
//   payload-ahead --check [--path rma|control] [--sizes ...]
//   ... --netns RECEIVER,SENDER --address IP   the two processes in the
//            network namespaces named (ip netns), the receiver listening
//            on IP: two "hosts" joined by whatever joins the namespaces
//
// Prints one table row per (size, variant), and the ratios Two-Chains /
// UCX AM and Two-Chains / ucp_put of the same run. Transports are UCX's
// choice (UCX_TLS; bench/run-payload-sweep.sh runs shared memory and TCP). --check (CTest: e2e-payload-ahead*) measures
// nothing: the sender sends each size in every mode, and the receiver
// checks that its jams summed every int32 of every payload, and that each
// payload came ahead of its frame; exit status 0 if so.
//
//===----------------------------------------------------------------------===//
#include <dlfcn.h>
#include <twochains/packages/stdlib.h>
#include <twochains/twochains.h>

#include <ucp/api/ucp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <string>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

enum : unsigned { AmData = 1, AmStop = 2, AmAck = 3 };
constexpr size_t Window = 16;
/// The largest payload: the share a receiver offers by default (4 MiB).
constexpr size_t MaxPayload = 4u << 20;
/// --check's payloads go ahead of their frames in the default 4 KiB slots:
/// larger than this.
constexpr size_t SlotPayload = 4096;

double nowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void fail(const char *What) {
  std::fprintf(stderr, "payload-ahead: %s\n", What);
  std::exit(1);
}

/// The median of Iters timings of Once, in microseconds.
template <typename Fn> double medianUs(unsigned Iters, Fn Once) {
  std::vector<double> T;
  for (unsigned I = 0; I < Iters; ++I) {
    double T0 = nowUs();
    Once();
    T.push_back(nowUs() - T0);
  }
  std::sort(T.begin(), T.end());
  return T[T.size() / 2];
}

/// What the receiver tells the sender through the pipe: a value, then
/// blobs of at most 64 KiB, each after its length.
void writeAll(int Out, const void *Data, size_t Size) {
  if (write(Out, Data, Size) != ssize_t(Size))
    fail("cannot tell the sender where to go");
}
void writeBlob(int Out, const void *Data, uint64_t Size) {
  writeAll(Out, &Size, sizeof Size);
  writeAll(Out, Data, Size);
}
void readAll(int In, void *Data, size_t Size) {
  if (read(In, Data, Size) != ssize_t(Size))
    fail("the receiver did not start");
}
std::vector<uint8_t> readBlob(int In) {
  uint64_t Size = 0;
  readAll(In, &Size, sizeof Size);
  if (Size > 65536)
    fail("the receiver did not start");
  std::vector<uint8_t> Blob(Size);
  readAll(In, Blob.data(), Size);
  return Blob;
}

/// --netns: this process moves into the network namespace Name (made by
/// `ip netns add`) before it opens anything of UCX's, and sees that
/// namespace's devices in /sys/class/net, where UCX lists them: as `ip
/// netns exec` does, in a mount namespace of its own with sysfs mounted
/// again.
void enterNetns(const std::string &Name) {
  std::string Path = "/var/run/netns/" + Name;
  int Fd = open(Path.c_str(), O_RDONLY | O_CLOEXEC);
  if (Fd < 0 || setns(Fd, CLONE_NEWNET) != 0 || unshare(CLONE_NEWNS) != 0 ||
      mount("", "/", nullptr, MS_SLAVE | MS_REC, nullptr) != 0 ||
      umount2("/sys", MNT_DETACH) != 0 || mount(Name.c_str(), "/sys", "sysfs", 0, nullptr) != 0) {
    std::fprintf(stderr, "payload-ahead: cannot enter network namespace %s: %s\n", Name.c_str(),
                 std::strerror(errno));
    std::exit(1);
  }
  close(Fd);
}

/// Where the receiver listens (--address).
const char *ListenAddress = "127.0.0.1";

struct Ucx {
  ucp_context_h Context = nullptr;
  ucp_worker_h Worker = nullptr;
  void open() {
    ucp_params_t P = {};
    P.field_mask = UCP_PARAM_FIELD_FEATURES;
    P.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
    ucp_config_t *Config;
    if (ucp_config_read(nullptr, nullptr, &Config) != UCS_OK ||
        ucp_init(&P, Config, &Context) != UCS_OK)
      fail("cannot create a UCX context");
    ucp_config_release(Config);
    ucp_worker_params_t W = {};
    W.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    W.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (ucp_worker_create(Context, &W, &Worker) != UCS_OK)
      fail("cannot create a UCX worker");
  }
  void handle(unsigned Id, ucp_am_recv_callback_t Cb, void *Arg) {
    ucp_am_handler_param_t H = {};
    H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_ARG;
    H.id = Id;
    H.cb = Cb;
    H.arg = Arg;
    if (ucp_worker_set_am_recv_handler(Worker, &H) != UCS_OK)
      fail("cannot set an AM handler");
  }
  void wait(ucs_status_ptr_t R) {
    if (UCS_PTR_IS_ERR(R))
      fail("a UCX operation failed");
    while (R && ucp_request_check_status(R) == UCS_INPROGRESS)
      ucp_worker_progress(Worker);
    if (R)
      ucp_request_free(R);
  }
};

//===----------------------------------------------------------------------===//
// The receiver
//===----------------------------------------------------------------------===//

struct Server {
  Ucx U;
  std::vector<uint8_t> Buffer = std::vector<uint8_t>(MaxPayload);
  /// Where ucx-put's puts land: MaxPayload bytes mapped for RMA.
  ucp_mem_h PutMem = nullptr;
  void *PutTarget = nullptr;
  int64_t Total = 0;
  uint64_t Done = 0;
  std::vector<ucp_ep_h> AckTo; // acknowledgements owed, sent from the loop
  bool Stop = false;
  int64_t Expected = -1; // --check: what the jams' total must be
  uint64_t ExpectedAhead = 0;
};

void sum(Server *S, const void *Data, size_t Length) {
  const auto *I = static_cast<const int32_t *>(Data);
  int64_t T = 0;
  for (size_t K = 0; K < Length / 4; ++K)
    T += I[K];
  S->Total += T;
}

struct Fetch {
  Server *S;
  size_t Length;
  ucp_ep_h Reply;
  bool Ack;
};

void onFetched(void *Request, ucs_status_t, size_t, void *User) {
  auto *F = static_cast<Fetch *>(User);
  sum(F->S, F->S->Buffer.data(), F->Length);
  if (F->Ack)
    F->S->AckTo.push_back(F->Reply);
  delete F;
  ucp_request_free(Request);
}

ucs_status_t onData(void *Arg, const void *Header, size_t, void *Data, size_t Length,
                    const ucp_am_recv_param_t *Param) {
  auto *S = static_cast<Server *>(Arg);
  uint32_t Ack;
  std::memcpy(&Ack, Header, sizeof Ack);
  if (!(Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    sum(S, Data, Length);
    if (Ack)
      S->AckTo.push_back(Param->reply_ep);
    return UCS_OK;
  }
  auto *F = new Fetch{S, Length, Param->reply_ep, Ack != 0};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  P.cb.recv_am = onFetched;
  P.user_data = F;
  ucs_status_ptr_t R = ucp_am_recv_data_nbx(S->U.Worker, Data, S->Buffer.data(), Length, &P);
  if (!UCS_PTR_IS_PTR(R)) {
    onFetched(nullptr, UCS_OK, Length, F);
  }
  return UCS_OK;
}

ucs_status_t onStop(void *Arg, const void *Header, size_t HeaderLength, void *, size_t,
                    const ucp_am_recv_param_t *) {
  auto *S = static_cast<Server *>(Arg);
  if (HeaderLength == 2 * sizeof(int64_t)) {
    std::memcpy(&S->Expected, Header, sizeof S->Expected);
    std::memcpy(&S->ExpectedAhead, static_cast<const char *>(Header) + 8, 8);
  }
  S->Stop = true;
  return UCS_OK;
}

int serve(int Out) {
  Server S;
  S.U.open();
  S.U.handle(AmData, onData, &S);
  S.U.handle(AmStop, onStop, &S);
  ucp_address_t *Address;
  size_t AddressSize;
  if (ucp_worker_get_address(S.U.Worker, &Address, &AddressSize) != UCS_OK)
    fail("no worker address");
  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH | UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.length = MaxPayload;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  ucp_mem_attr_t MA = {};
  MA.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  void *PutKey = nullptr;
  size_t PutKeySize = 0;
  if (ucp_mem_map(S.U.Context, &M, &S.PutMem) != UCS_OK || ucp_mem_query(S.PutMem, &MA) != UCS_OK ||
      ucp_rkey_pack(S.U.Context, S.PutMem, &PutKey, &PutKeySize) != UCS_OK)
    fail("cannot map the puts' target");
  S.PutTarget = MA.address;
  tc_package_t *Pkg;
  tc_context_t *Ctx;
  // Two-Chains' defaults: 4 KiB slots, 4 MiB of payloads ahead per sender.
  if (stdlib_package_load(TC_PAYLOAD_AHEAD_PREFIX, TC_PACKAGE_RECEIVER, &Pkg) != TC_OK ||
      tc_context_create(nullptr, &Ctx) != TC_OK || tc_context_add_package(Ctx, Pkg) != TC_OK ||
      tc_listen(Ctx, ListenAddress, 0) != TC_OK)
    fail("cannot set up the receiver's context");
  uint16_t Port = 0;
  tc_listen_port(Ctx, &Port);
  uint64_t Target = reinterpret_cast<uint64_t>(S.PutTarget);
  writeAll(Out, &Port, sizeof Port);
  writeBlob(Out, Address, AddressSize);
  writeAll(Out, &Target, sizeof Target);
  writeBlob(Out, PutKey, PutKeySize);
  ucp_rkey_buffer_release(PutKey);
  close(Out);
  ucp_worker_release_address(S.U.Worker, Address);
  while (!S.Stop) {
    ucp_worker_progress(S.U.Worker);
    tc_progress(Ctx, nullptr);
    for (ucp_ep_h Ep : S.AckTo) {
      ucp_request_param_t P = {};
      static uint32_t Nothing = 0;
      ucs_status_ptr_t R = ucp_am_send_nbx(Ep, AmAck, &Nothing, sizeof Nothing, nullptr, 0, &P);
      if (UCS_PTR_IS_PTR(R))
        ucp_request_free(R);
    }
    S.AckTo.clear();
  }
  int Status = 0;
  if (S.Expected >= 0) {
    const auto *Total = static_cast<const int64_t *>(dlsym(RTLD_DEFAULT, "tc_stdlib_total"));
    tc_stats_t St;
    tc_context_stats(Ctx, &St);
    int64_t Got = Total ? *Total : -1;
    std::printf("payload-ahead check: receiver total %lld (expected %lld), payloads received "
                "ahead %llu (expected %llu), frames rejected %llu\n",
                (long long)Got, (long long)S.Expected,
                (unsigned long long)St.payloads_ahead_received,
                (unsigned long long)S.ExpectedAhead, (unsigned long long)St.frames_rejected);
    Status = Got == S.Expected && St.payloads_ahead_received == S.ExpectedAhead &&
                     !St.frames_rejected
                 ? 0
                 : 1;
  }
  tc_context_destroy(Ctx);
  tc_package_unload(Pkg);
  ucp_mem_unmap(S.U.Context, S.PutMem);
  return Status;
}

//===----------------------------------------------------------------------===//
// The sender
//===----------------------------------------------------------------------===//

struct Client {
  Ucx U;
  ucp_ep_h Ep = nullptr;
  uint64_t Acks = 0;
  uint64_t PutTarget = 0;
  ucp_rkey_h PutKey = nullptr;
};

ucs_status_t onAck(void *Arg, const void *, size_t, void *, size_t, const ucp_am_recv_param_t *) {
  ++static_cast<Client *>(Arg)->Acks;
  return UCS_OK;
}

ucs_status_ptr_t sendAm(Client &C, const void *Data, size_t Size, uint32_t Ack) {
  static uint32_t Headers[2] = {0, 1};
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_AM_SEND_FLAG_REPLY;
  return ucp_am_send_nbx(C.Ep, AmData, &Headers[Ack], sizeof(uint32_t), Data, Size, &P);
}

double ucxLatency(Client &C, const std::vector<uint8_t> &Payload, size_t Size, unsigned Iters) {
  return medianUs(Iters, [&] {
    uint64_t Want = C.Acks + 1;
    C.U.wait(sendAm(C, Payload.data(), Size, 1));
    while (C.Acks < Want)
      ucp_worker_progress(C.U.Worker);
  });
}

/// N operations back to back, from Window buffers of their own, each
/// buffer's previous operation complete before it is used again; Start(I,
/// Buffer) starts operation I.
template <typename Fn>
void windowed(Client &C, std::vector<std::vector<uint8_t>> &Buffers, unsigned N, Fn Start) {
  std::vector<ucs_status_ptr_t> InFlight(Window, nullptr);
  for (unsigned I = 0; I < N; ++I) {
    size_t W = I % Window;
    C.U.wait(InFlight[W]);
    InFlight[W] = Start(I, Buffers[W].data());
    if (UCS_PTR_IS_ERR(InFlight[W]))
      fail("a UCX send failed");
  }
  for (ucs_status_ptr_t &R : InFlight)
    C.U.wait(R);
}

double ucxRate(Client &C, std::vector<std::vector<uint8_t>> &Buffers, size_t Size, unsigned N) {
  double T0 = nowUs();
  uint64_t Want = C.Acks + 1;
  windowed(C, Buffers, N,
           [&](unsigned I, const uint8_t *Data) { return sendAm(C, Data, Size, I + 1 == N); });
  while (C.Acks < Want)
    ucp_worker_progress(C.U.Worker);
  return N / ((nowUs() - T0) / 1e6);
}

/// ucx-put: the payload put into the receiver's memory and flushed (it has
/// landed there; nothing on the receiver ran).
ucs_status_ptr_t put(Client &C, const void *Data, size_t Size) {
  ucp_request_param_t P = {};
  return ucp_put_nbx(C.Ep, Data, Size, C.PutTarget, C.PutKey, &P);
}

ucs_status_ptr_t flush(Client &C) {
  ucp_request_param_t P = {};
  return ucp_ep_flush_nbx(C.Ep, &P);
}

double putLatency(Client &C, const std::vector<uint8_t> &Payload, size_t Size, unsigned Iters) {
  return medianUs(Iters, [&] {
    C.U.wait(put(C, Payload.data(), Size));
    C.U.wait(flush(C));
  });
}

double putRate(Client &C, std::vector<std::vector<uint8_t>> &Buffers, size_t Size, unsigned N) {
  double T0 = nowUs();
  windowed(C, Buffers, N, [&](unsigned, const uint8_t *Data) { return put(C, Data, Size); });
  C.U.wait(flush(C));
  return N / ((nowUs() - T0) / 1e6);
}

/// TC_SEND_LOCAL, or with TC_SEND_NO_COPY (the tc-no-copy rows).
tc_send_mode_t TcMode = TC_SEND_LOCAL;

tc_status_t sendTc(tc_context_t *Ctx, tc_peer_t *Peer, tc_package_t *Pkg, const void *Payload,
                   size_t Size) {
  tc_status_t St;
  while ((St = tc_send(Peer, Pkg, STDLIB_SERVER_SIDE_SUM, TcMode, Payload, Size)) ==
         TC_ERR_NO_CREDIT)
    tc_progress(Ctx, nullptr);
  return St;
}

double tcLatency(tc_context_t *Ctx, tc_peer_t *Peer, tc_package_t *Pkg,
                 const std::vector<uint8_t> &Payload, size_t Size, unsigned Iters) {
  return medianUs(Iters, [&] {
    if (sendTc(Ctx, Peer, Pkg, Payload.data(), Size) != TC_OK || tc_flush(Peer, 10000) != TC_OK)
      fail("a Two-Chains send failed");
  });
}

double tcRate(tc_context_t *Ctx, tc_peer_t *Peer, tc_package_t *Pkg,
              const std::vector<uint8_t> &Payload, size_t Size, unsigned N) {
  double T0 = nowUs();
  for (unsigned I = 0; I < N; ++I)
    if (sendTc(Ctx, Peer, Pkg, Payload.data(), Size) != TC_OK)
      fail("a Two-Chains send failed");
  if (tc_flush(Peer, 60000) != TC_OK)
    fail("tc_flush failed");
  return N / ((nowUs() - T0) / 1e6);
}

/// --check: every size in every mode, three frames each; the sum of their
/// int32s is what the receiver's jams must have added.
int64_t sendChecked(tc_context_t *Ctx, tc_peer_t *Peer, tc_package_t *Pkg,
                    const std::vector<size_t> &Sizes, uint64_t &Ahead) {
  int64_t Expected = 0;
  int32_t Next = 1;
  for (size_t Size : Sizes)
    for (tc_send_mode_t Mode : {TC_SEND_LOCAL, TC_SEND_INJECTED, TC_SEND_INJECTED_FULL})
      for (int K = 0; K < 3; ++K) {
        std::vector<int32_t> Payload(Size / 4);
        for (int32_t &V : Payload) {
          V = Next++ % 1000;
          Expected += V;
        }
        tc_status_t St;
        while ((St = tc_send(Peer, Pkg, STDLIB_SERVER_SIDE_SUM, Mode, Payload.data(), Size)) ==
               TC_ERR_NO_CREDIT)
          tc_progress(Ctx, nullptr);
        if (St != TC_OK) {
          std::fprintf(stderr, "payload-ahead: tc_send of %zu bytes, mode %d: %s\n", Size,
                       int(Mode), tc_status_string(St));
          std::exit(1);
        }
        ++Ahead;
      }
  if (tc_flush(Peer, 60000) != TC_OK)
    fail("tc_flush failed");
  return Expected;
}

int drive(int In, pid_t Server, std::vector<size_t> Sizes, unsigned Iters, bool Check,
          const char *Path) {
  uint16_t Port = 0;
  uint64_t PutTarget = 0;
  readAll(In, &Port, sizeof Port);
  std::vector<uint8_t> Address = readBlob(In);
  readAll(In, &PutTarget, sizeof PutTarget);
  std::vector<uint8_t> PutKey = readBlob(In);
  Client C;
  C.U.open();
  C.U.handle(AmAck, onAck, &C);
  ucp_ep_params_t E = {};
  E.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  E.address = reinterpret_cast<ucp_address_t *>(Address.data());
  if (ucp_ep_create(C.U.Worker, &E, &C.Ep) != UCS_OK)
    fail("cannot reach the receiver's worker");
  C.PutTarget = PutTarget;
  if (ucp_ep_rkey_unpack(C.Ep, PutKey.data(), &C.PutKey) != UCS_OK)
    fail("cannot unpack the receiver's key");
  tc_package_t *Pkg;
  tc_context_t *Ctx;
  tc_peer_t *Peer;
  if (stdlib_package_load(TC_PAYLOAD_AHEAD_PREFIX, TC_PACKAGE_SENDER, &Pkg) != TC_OK ||
      tc_context_create(nullptr, &Ctx) != TC_OK || tc_context_add_package(Ctx, Pkg) != TC_OK ||
      tc_connect(Ctx, ListenAddress, Port, 10000, &Peer) != TC_OK)
    fail("cannot connect to the receiver");
  int64_t StopHeader[2] = {0, 0};
  bool WrongPath = false;
  if (Check) {
    uint64_t Ahead = 0;
    StopHeader[0] = sendChecked(Ctx, Peer, Pkg, Sizes, Ahead);
    StopHeader[1] = int64_t(Ahead);
    // --path: which endpoint every payload must have gone on.
    tc_stats_t St;
    tc_context_stats(Ctx, &St);
    uint64_t Want = !Path ? St.payloads_ahead_by_rma : !std::strcmp(Path, "rma") ? Ahead : 0;
    std::printf("payload-ahead check: %llu of %llu payloads on the RMA endpoint\n",
                (unsigned long long)St.payloads_ahead_by_rma, (unsigned long long)Ahead);
    if (St.payloads_ahead_by_rma != Want) {
      std::fprintf(stderr, "payload-ahead: payloads were to go on the %s endpoint\n", Path);
      WrongPath = true;
    }
    Sizes.clear();
  } else
  std::printf("| payload | variant | latency p50 (us) | rate (msg/s) | rate (MiB/s) |\n"
              "|---|---|---|---|---|\n");
  std::vector<std::string> Ratios;
  for (size_t Size : Sizes) {
    std::vector<uint8_t> Payload(Size);
    for (size_t I = 0; I < Size; ++I)
      Payload[I] = uint8_t(I);
    std::vector<std::vector<uint8_t>> Buffers(Window, Payload);
    // As many round trips as 8 KiB's Iters take bytes, and four times
    // that many messages for the rates; within [20, 4 Iters] and
    // [50, 20 Iters].
    unsigned L = unsigned(std::clamp<size_t>(Iters * 8192 / Size, 20, 4 * size_t(Iters)));
    unsigned N = unsigned(std::clamp<size_t>(Iters * 4 * 8192 / Size, 50, 20 * size_t(Iters)));
    // Warm every path up (connections, rendezvous lanes), then measure.
    ucxLatency(C, Payload, Size, 10);
    putLatency(C, Payload, Size, 10);
    tcLatency(Ctx, Peer, Pkg, Payload, Size, 10);
    double UL = ucxLatency(C, Payload, Size, L), UR = ucxRate(C, Buffers, Size, N);
    double PL = putLatency(C, Payload, Size, L), PR = putRate(C, Buffers, Size, N);
    tc_stats_t Before, After;
    tc_context_stats(Ctx, &Before);
    double TL = tcLatency(Ctx, Peer, Pkg, Payload, Size, L);
    double TR = tcRate(Ctx, Peer, Pkg, Payload, Size, N);
    tc_context_stats(Ctx, &After);
    // Sent from the caller's buffer, no copy (the rate's sends all read
    // the one buffer, which nothing writes meanwhile).
    bool Ahead = After.payloads_ahead_sent != Before.payloads_ahead_sent;
    double NL = 0, NR = 0;
    if (Ahead) {
      TcMode = tc_send_mode_t(TC_SEND_LOCAL | TC_SEND_NO_COPY);
      tcLatency(Ctx, Peer, Pkg, Payload, Size, 10);
      NL = tcLatency(Ctx, Peer, Pkg, Payload, Size, L);
      NR = tcRate(Ctx, Peer, Pkg, Payload, Size, N);
      TcMode = TC_SEND_LOCAL;
    }
    double MiB = double(Size) / (1 << 20);
    std::string Label = Size < 1024 ? std::to_string(Size) + " B"
                                    : std::to_string(Size / 1024) + " KiB";
    const char *Tc = After.payloads_ahead_sent == Before.payloads_ahead_sent
                         ? "tc-local (in its frame)"
                     : After.payloads_ahead_by_rma > Before.payloads_ahead_by_rma
                         ? "tc-local (ahead, RMA endpoint)"
                         : "tc-local (ahead, control endpoint)";
    std::printf("| %s | ucx-am | %.1f | %.0f | %.1f |\n", Label.c_str(), UL, UR, UR * MiB);
    std::printf("| %s | ucx-put | %.1f | %.0f | %.1f |\n", Label.c_str(), PL, PR, PR * MiB);
    std::printf("| %s | %s | %.1f | %.0f | %.1f |\n", Label.c_str(), Tc, TL, TR, TR * MiB);
    if (Ahead)
      std::printf("| %s | tc-local, TC_SEND_NO_COPY | %.1f | %.0f | %.1f |\n", Label.c_str(), NL,
                  NR, NR * MiB);
    char Line[200];
    std::snprintf(Line, sizeof Line, "| %s | tc | %.2f | %.2f | %.2f | %.2f |", Label.c_str(),
                  TL / UL, TR / UR, TL / PL, TR / PR);
    Ratios.push_back(Line);
    if (Ahead) {
      std::snprintf(Line, sizeof Line, "| %s | tc, no copy | %.2f | %.2f | %.2f | %.2f |",
                    Label.c_str(), NL / UL, NR / UR, NL / PL, NR / PR);
      Ratios.push_back(Line);
    }
  }
  if (!Check) {
    std::printf("\nTwo-Chains / UCX, this run (latency: lower is better; rate: higher):\n\n"
                "| payload | sent | latency / ucx-am | rate / ucx-am | latency / ucx-put | "
                "rate / ucx-put |\n|---|---|---|---|---|---|\n");
    for (const std::string &R : Ratios)
      std::printf("%s\n", R.c_str());
  }
  ucp_request_param_t P = {};
  C.U.wait(ucp_am_send_nbx(C.Ep, AmStop, StopHeader, Check ? sizeof StopHeader : 8, nullptr, 0,
                           &P));
  tc_peer_close(Peer);
  tc_context_destroy(Ctx);
  tc_package_unload(Pkg);
  int Status = 0;
  waitpid(Server, &Status, 0);
  return WIFEXITED(Status) && WEXITSTATUS(Status) == 0 && !WrongPath ? 0 : 1;
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<size_t> Sizes = {8192, 65536, 1048576};
  unsigned Iters = 2000;
  bool Check = false;
  const char *Path = nullptr;
  std::string ReceiverNs, SenderNs;
  for (int I = 1; I < Argc; ++I) {
    if (!std::strcmp(Argv[I], "--check")) {
      Check = true;
      continue;
    }
    if (!std::strcmp(Argv[I], "--path") && I + 1 < Argc &&
        (!std::strcmp(Argv[I + 1], "rma") || !std::strcmp(Argv[I + 1], "control"))) {
      Path = Argv[++I];
      continue;
    }
    if (!std::strcmp(Argv[I], "--netns") && I + 1 < Argc && std::strchr(Argv[I + 1], ',')) {
      std::string Both = Argv[++I];
      ReceiverNs = Both.substr(0, Both.find(','));
      SenderNs = Both.substr(Both.find(',') + 1);
      continue;
    }
    if (!std::strcmp(Argv[I], "--address") && I + 1 < Argc) {
      ListenAddress = Argv[++I];
      continue;
    }
    if (!std::strcmp(Argv[I], "--sizes") && I + 1 < Argc) {
      Sizes.clear();
      for (char *S = std::strtok(Argv[++I], ","); S; S = std::strtok(nullptr, ","))
        Sizes.push_back(std::strtoul(S, nullptr, 10));
    } else if (!std::strcmp(Argv[I], "--iters") && I + 1 < Argc) {
      Iters = unsigned(std::atoi(Argv[++I]));
    } else {
      std::fprintf(stderr,
                   "usage: payload-ahead [--check [--path rma|control]] [--sizes B,B,...] "
                   "[--iters N]\n"
                   "       [--netns RECEIVER,SENDER --address IP]\n"
                   "  sizes: multiples of 4, 8 to 4194304 bytes, 4100 up with --check (default "
                   "8192,65536,1048576)\n"
                   "  --path: every payload must go on that endpoint (the RMA one:\n"
                   "  shared memory, CMA, RDMA; the control one: TCP)\n");
      return 2;
    }
  }
  for (size_t S : Sizes)
    if (S % 4 || S < (Check ? SlotPayload + 1 : 8) || S > MaxPayload || !Iters)
      return std::fprintf(stderr, "payload-ahead: bad size %zu or iterations\n", S), 2;
  int Pipe[2];
  if (pipe(Pipe))
    fail("no pipe");
  pid_t Child = fork();
  if (Child == 0) {
    close(Pipe[0]);
    if (!ReceiverNs.empty())
      enterNetns(ReceiverNs);
    return serve(Pipe[1]);
  }
  close(Pipe[1]);
  if (!SenderNs.empty())
    enterNetns(SenderNs);
  return drive(Pipe[0], Child, Sizes, Iters, Check, Path);
}
