//===- Context.cpp - Contexts, listening, connecting, the handshake -------===//
//
// The handshake travels as two UCX active messages on the endpoint UCX's
// sockaddr connection establishment created, each carrying an Offer:
//
//   sender   -> receiver  HELLO    its ring and credit word, worker address
//   receiver -> sender    WELCOME  the same for its side
//
// After it, data moves only with one-sided puts, in both directions: frames
// into the other side's ring, credit reports into its credit word.
//
//===----------------------------------------------------------------------===//
#include "Log.h"
#include "Identity.h"
#include "Runtime.h"

#include <algorithm>
#include <cerrno>
#include <arpa/inet.h>
#include <chrono>
#include <cstring>
#include <netdb.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace twochains::rt;

namespace twochains::rt {

ucs_status_t waitRequest(ucp_worker_h Worker, ucs_status_ptr_t Request) {
  if (Request == nullptr)
    return UCS_OK;
  if (UCS_PTR_IS_ERR(Request))
    return UCS_PTR_STATUS(Request);
  ucs_status_t St;
  while ((St = ucp_request_check_status(Request)) == UCS_INPROGRESS)
    ucp_worker_progress(Worker);
  ucp_request_free(Request);
  return St;
}

} // namespace twochains::rt

static tc_status_t fromUcs(ucs_status_t St) {
  switch (St) {
  case UCS_OK: return TC_OK;
  case UCS_ERR_NO_MEMORY: return TC_ERR_NO_MEMORY;
  case UCS_ERR_INVALID_PARAM: return TC_ERR_INVALID_PARAM;
  default: return TC_ERR_IO;
  }
}

/// The mailbox modes by the names TC_MAILBOX_MODE and tc_mailbox_mode_name
/// use; the first is the default.
struct MailboxModeName {
  const char *Name;
  tc_mailbox_mode_t Mode;
};
static const MailboxModeName MailboxModeNames[] = {{"code-cache", TC_MAILBOX_CODE_CACHE},
                                                   {"in-place", TC_MAILBOX_IN_PLACE},
                                                   {"no-cache", TC_MAILBOX_NO_CACHE}};

static void onEndpointError(void *Arg, ucp_ep_h, ucs_status_t) {
  // A peer that vanishes only fails its own connection; the receiver keeps
  // serving the others.
  auto *Peer = static_cast<tc_peer *>(Arg);
  Peer->Failed = true;
}

static ucs_status_t onHello(void *Arg, const void *Header, size_t HeaderLength,
                            void *Data, size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<tc_context *>(Arg);
  if (HeaderLength != sizeof(Offer) ||
      !(Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ||
      (Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
    return UCS_OK; // not ours, or malformed: ignored
  tc_context::PendingHello H;
  H.Ep = Param->reply_ep;
  std::memcpy(&H.Header, Header, sizeof H.Header);
  H.Key.assign(static_cast<uint8_t *>(Data), static_cast<uint8_t *>(Data) + Length);
  Ctx->Hellos.push_back(std::move(H));
  return UCS_OK;
}

static ucs_status_t onWelcome(void *Arg, const void *Header, size_t HeaderLength,
                              void *Data, size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<tc_context *>(Arg);
  if (HeaderLength != sizeof(Offer) ||
      !(Param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ||
      (Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
    return UCS_OK;
  Offer W;
  std::memcpy(&W, Header, sizeof W);
  for (tc_peer *Peer : Ctx->Connecting)
    if (Peer->Ep == Param->reply_ep && !Peer->Welcomed) {
      if (acceptOffer(Ctx, Peer, W, static_cast<const uint8_t *>(Data), Length))
        Peer->Welcomed = true;
      else
        Peer->Failed = true;
    }
  return UCS_OK;
}

ucp_ep_h twochains::rt::connectToWorker(tc_context *Ctx, tc_peer *, const void *Address) {
  // No peer-failure handling on this endpoint: UCX 1.13 gives such
  // endpoints only transports that detect failures (TCP here), never shared
  // memory. Failures are still seen on the sockaddr endpoint.
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  P.address = static_cast<const ucp_address_t *>(Address);
  ucp_ep_h Ep = nullptr;
  if (ucp_ep_create(Ctx->DataWorker, &P, &Ep) != UCS_OK)
    return nullptr;
  return Ep;
}

static void onConnectionRequest(ucp_conn_request_h Request, void *Arg) {
  auto *Ctx = static_cast<tc_context *>(Arg);
  auto Peer = std::make_unique<tc_peer>();
  Peer->Ctx = Ctx;
  Peer->Number = ++Ctx->PeersSeen;
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  P.conn_request = Request;
  P.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  P.err_handler.cb = onEndpointError;
  P.err_handler.arg = Peer.get();
  if (ucp_ep_create(Ctx->Worker, &P, &Peer->Ep) != UCS_OK) {
    logError("cannot accept a connection");
    return;
  }
  Ctx->Accepted.push_back(std::move(Peer));
}

tc_status_t twochains::rt::setupLocalSide(tc_context *Ctx, tc_peer *Peer) {
  auto Map = [&](size_t Length, ucp_mem_h &Mem) -> void * {
    ucp_mem_map_params_t M = {};
    M.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                   UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    M.address = nullptr;
    M.length = Length;
    M.flags = UCP_MEM_MAP_ALLOCATE; // UCX-allocated memory takes the fast shm path
    ucp_mem_attr_t A = {};
    A.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
    if (ucp_mem_map(Ctx->Ucp, &M, &Mem) != UCS_OK)
      return nullptr;
    if (ucp_mem_query(Mem, &A) != UCS_OK)
      return nullptr;
    std::memset(A.address, 0, Length);
    return A.address;
  };
  size_t RingBytes = size_t(Ctx->Slots) * Ctx->SlotSize;
  Peer->Ring = static_cast<uint8_t *>(Map(RingBytes, Peer->RingMem));
  Peer->CreditWord = static_cast<volatile uint64_t *>(Map(64, Peer->CreditMem));
  if (!Peer->Ring || !Peer->CreditWord) {
    logError("cannot allocate a ring and credit word for a connection");
    return TC_ERR_NO_MEMORY;
  }
  if (Ctx->Mode == TC_MAILBOX_IN_PLACE) {
    // The paper's mailbox: code runs where it lands.
    size_t Page = size_t(sysconf(_SC_PAGESIZE));
    auto Start = reinterpret_cast<uintptr_t>(Peer->Ring) / Page * Page;
    size_t Length = reinterpret_cast<uintptr_t>(Peer->Ring) + RingBytes - Start;
    if (mprotect(reinterpret_cast<void *>(Start), Length,
                 PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
      logError(std::string("in-place mailbox mode: cannot make the ring executable: ") +
               std::strerror(errno));
      return TC_ERR_NO_MEMORY;
    }
  }
  Peer->Receive = std::make_unique<ReceiverRing>(Ctx->Slots, Ctx->Batch);
  return TC_OK;
}

tc_status_t twochains::rt::makeOffer(tc_context *Ctx, tc_peer *Peer, Offer &O,
                                     std::vector<uint8_t> &Body) {
  void *CreditKey = nullptr, *RingKey = nullptr;
  size_t CreditKeySize = 0, RingKeySize = 0;
  if (ucp_rkey_pack(Ctx->Ucp, Peer->CreditMem, &CreditKey, &CreditKeySize) != UCS_OK)
    return TC_ERR_IO;
  if (ucp_rkey_pack(Ctx->Ucp, Peer->RingMem, &RingKey, &RingKeySize) != UCS_OK) {
    ucp_rkey_buffer_release(CreditKey);
    return TC_ERR_IO;
  }
  std::vector<ImportTableRecord> Tables;
  for (const tc_package *P : Ctx->Packages)
    if (P->Roles & TC_PACKAGE_RECEIVER)
      for (size_t E = 0; E < P->Elements.size(); ++E)
        if (P->Elements[E].Present && P->Elements[E].IsJam)
          Tables.push_back({P->Tag, uint32_t(E), 0,
                            reinterpret_cast<uint64_t>(P->Elements[E].ImportTable.data())});
  O = {HandshakeMagic, OfferVersion, reinterpret_cast<uint64_t>(Peer->CreditWord),
       reinterpret_cast<uint64_t>(Peer->Ring), Ctx->Slots, Ctx->SlotSize,
       uint32_t(CreditKeySize), uint32_t(RingKeySize), uint32_t(Ctx->WorkerAddressSize),
       uint32_t(Tables.size()), uint32_t(Ctx->Mode), 0};
  auto Append = [&](const void *P, size_t N) {
    Body.insert(Body.end(), static_cast<const uint8_t *>(P), static_cast<const uint8_t *>(P) + N);
  };
  Append(CreditKey, CreditKeySize);
  Append(RingKey, RingKeySize);
  Append(Ctx->WorkerAddress, Ctx->WorkerAddressSize);
  Append(Tables.data(), Tables.size() * sizeof(ImportTableRecord));
  ucp_rkey_buffer_release(CreditKey);
  ucp_rkey_buffer_release(RingKey);
  return TC_OK;
}

bool twochains::rt::acceptOffer(tc_context *Ctx, tc_peer *Peer, const Offer &O,
                                const uint8_t *Data, size_t Length) {
  if (O.Magic != HandshakeMagic || O.Version != OfferVersion || O.Slots == 0 ||
      O.SlotSize < 64 || O.MailboxMode < TC_MAILBOX_CODE_CACHE ||
      O.MailboxMode > TC_MAILBOX_NO_CACHE ||
      O.SlotSize % 64 || !O.CreditKeySize || !O.RingKeySize || !O.WorkerAddressSize ||
      size_t(O.CreditKeySize) + O.RingKeySize + O.WorkerAddressSize +
              size_t(O.TableCount) * sizeof(ImportTableRecord) != Length)
    return false;
  const uint8_t *CreditKey = Data, *RingKey = Data + O.CreditKeySize;
  const uint8_t *Worker = RingKey + O.RingKeySize;
  Peer->DataEp = connectToWorker(Ctx, Peer, Worker);
  if (!Peer->DataEp ||
      ucp_ep_rkey_unpack(Peer->DataEp, CreditKey, &Peer->CreditKey) != UCS_OK ||
      ucp_ep_rkey_unpack(Peer->DataEp, RingKey, &Peer->RingKey) != UCS_OK)
    return false;
  const uint8_t *Tables = Worker + O.WorkerAddressSize;
  for (uint32_t I = 0; I < O.TableCount; ++I) {
    ImportTableRecord R;
    std::memcpy(&R, Tables + I * sizeof R, sizeof R);
    Peer->RemoteTables[{R.PackageTag, R.Element}] = R.Table;
  }
  Peer->CreditAddress = O.CreditAddress;
  Peer->RingAddress = O.RingAddress;
  Peer->Slots = O.Slots;
  Peer->SlotSize = O.SlotSize;
  Peer->Send = std::make_unique<SenderRing>(O.Slots);
  Peer->Staging.assign(O.SlotSize, 0);
  Peer->RemoteMode = tc_mailbox_mode_t(O.MailboxMode);
  if (Peer->RemoteMode == TC_MAILBOX_CODE_CACHE)
    Peer->SlotFrames.assign(size_t(O.Slots) * Peer->slotFrameStride(), 0);
  return true;
}

/// Receiver: answers a sender's HELLO with its own offer.
static void welcome(tc_context *Ctx, tc_context::PendingHello &H) {
  tc_peer *Peer = nullptr;
  for (auto &P : Ctx->Accepted)
    if (P->Ep == H.Ep)
      Peer = P.get();
  if (!Peer || Peer->Ring) {
    logError("refused a handshake from an unknown or already connected peer");
    return;
  }
  Offer O;
  std::vector<uint8_t> Body;
  if (setupLocalSide(Ctx, Peer) != TC_OK ||
      !acceptOffer(Ctx, Peer, H.Header, H.Key.data(), H.Key.size()) ||
      makeOffer(Ctx, Peer, O, Body) != TC_OK) {
    logError("refused a malformed handshake");
    Peer->Failed = true;
    return;
  }
  ucp_request_param_t RP = {};
  RP.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  RP.flags = UCP_AM_SEND_FLAG_REPLY;
  ucs_status_t St = waitRequest(
      Ctx->Worker, ucp_am_send_nbx(Peer->Ep, AmWelcome, &O, sizeof O, Body.data(), Body.size(), &RP));
  if (St != UCS_OK) {
    logError(std::string("cannot send the handshake: ") + ucs_status_string(St));
    Peer->Failed = true;
    return;
  }
  Peer->Welcomed = true;
  ++Ctx->Stats.peers;
}

void twochains::rt::processHandshakes(tc_context *Ctx) {
  while (!Ctx->Hellos.empty()) {
    auto H = std::move(Ctx->Hellos.back());
    Ctx->Hellos.pop_back();
    welcome(Ctx, H);
  }
}

static bool resolve(const char *Address, uint16_t Port, sockaddr_in &Out) {
  std::memset(&Out, 0, sizeof Out);
  Out.sin_family = AF_INET;
  Out.sin_port = htons(Port);
  if (!Address || !*Address) {
    Out.sin_addr.s_addr = htonl(INADDR_ANY);
    return true;
  }
  if (inet_pton(AF_INET, Address, &Out.sin_addr) == 1)
    return true;
  addrinfo Hints = {}, *Res = nullptr;
  Hints.ai_family = AF_INET;
  if (getaddrinfo(Address, nullptr, &Hints, &Res) != 0 || !Res)
    return false;
  Out.sin_addr = reinterpret_cast<sockaddr_in *>(Res->ai_addr)->sin_addr;
  freeaddrinfo(Res);
  return true;
}

extern "C" tc_status_t tc_context_create(const tc_context_params_t *Params,
                                         tc_context_t **Out) {
  if (!Out || (Params && (Params->version < 1 || Params->version > TC_CONTEXT_PARAMS_VERSION)))
    return TC_ERR_INVALID_PARAM;
  auto Ctx = std::make_unique<tc_context>();
  if (Params) {
    if (Params->slots)
      Ctx->Slots = Params->slots;
    if (Params->slot_size)
      Ctx->SlotSize = Params->slot_size;
    Ctx->Batch = Params->credit_batch ? Params->credit_batch : std::max(1u, Ctx->Slots / 4);
    Ctx->WaitMode = tc_wait_mode_t(Params->wait_mode);
    Ctx->Flags = Params->flags;
    if (Params->version >= 2) {
      Ctx->Mode = tc_mailbox_mode_t(Params->mailbox_mode);
      if (Params->code_cache_size)
        Ctx->CodeCacheSize = Params->code_cache_size;
    }
  }
  if (Ctx->Mode == TC_MAILBOX_DEFAULT) {
    const char *Env = getenv("TC_MAILBOX_MODE");
    std::string Name = Env && *Env ? Env : MailboxModeNames[0].Name;
    for (const MailboxModeName &M : MailboxModeNames)
      if (Name == M.Name)
        Ctx->Mode = M.Mode;
    if (Ctx->Mode == TC_MAILBOX_DEFAULT) {
      logError("TC_MAILBOX_MODE='" + Name +
               "' is none of code-cache, in-place, no-cache");
      return TC_ERR_INVALID_PARAM;
    }
  }
  if (Ctx->Mode > TC_MAILBOX_NO_CACHE)
    return TC_ERR_INVALID_PARAM;
  if (Ctx->WaitMode > TC_WAIT_LOWPOWER || !(Ctx->Wait = createWaiter(Ctx->WaitMode))) {
    logError("the wait mode asked for is not available on this CPU");
    return TC_ERR_INVALID_PARAM;
  }
  if (Ctx->SlotSize % 64 || Ctx->SlotSize < 64 || Ctx->Batch > Ctx->Slots)
    return TC_ERR_INVALID_PARAM;

  ucp_config_t *Config = nullptr;
  ucs_status_t St = ucp_config_read(nullptr, nullptr, &Config);
  if (St != UCS_OK)
    return fromUcs(St);
  ucp_params_t P = {};
  P.field_mask = UCP_PARAM_FIELD_FEATURES;
  P.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
  St = ucp_init(&P, Config, &Ctx->Ucp);
  ucp_config_release(Config);
  if (St != UCS_OK) {
    logError(std::string("ucp_init: ") + ucs_status_string(St));
    return fromUcs(St);
  }
  ucp_worker_params_t W = {};
  W.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  W.thread_mode = UCS_THREAD_MODE_SERIALIZED; // the executor thread and the caller take turns
  if ((St = ucp_worker_create(Ctx->Ucp, &W, &Ctx->Worker)) != UCS_OK) {
    ucp_cleanup(Ctx->Ucp);
    logError(std::string("ucp_worker_create: ") + ucs_status_string(St));
    return fromUcs(St);
  }
  for (auto [Id, Cb] : {std::pair{unsigned(AmHello), &onHello},
                        std::pair{unsigned(AmWelcome), &onWelcome},
                        std::pair{unsigned(AmRied), &twochains::rt::onRied},
                        std::pair{unsigned(AmRiedAck), &twochains::rt::onRiedAck}}) {
    ucp_am_handler_param_t H = {};
    H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_ARG;
    H.id = Id;
    H.cb = Cb;
    H.arg = Ctx.get();
    if ((St = ucp_worker_set_am_recv_handler(Ctx->Worker, &H)) != UCS_OK) {
      tc_context_destroy(Ctx.release());
      return fromUcs(St);
    }
  }
  // Data moves on a worker of its own: the control worker's sockaddr
  // endpoints are TCP, and progressing a worker with TCP endpoints costs an
  // epoll_wait system call each time, which the data path must not pay.
  if ((St = ucp_worker_create(Ctx->Ucp, &W, &Ctx->DataWorker)) != UCS_OK) {
    logError(std::string("ucp_worker_create: ") + ucs_status_string(St));
    tc_context_destroy(Ctx.release());
    return fromUcs(St);
  }
  if ((St = ucp_worker_get_address(Ctx->DataWorker, &Ctx->WorkerAddress,
                                   &Ctx->WorkerAddressSize)) != UCS_OK) {
    tc_context_destroy(Ctx.release());
    return fromUcs(St);
  }
  if (Ctx->Mode == TC_MAILBOX_CODE_CACHE) {
    Ctx->Cache = std::make_unique<CodeCache>();
    std::string Error;
    if (tc_status_t CS = Ctx->Cache->create(Ctx->CodeCacheSize, Error); CS != TC_OK) {
      logError(Error);
      tc_context_destroy(Ctx.release());
      return CS;
    }
  }
  Ctx->Stashing = detectStashing();
  *Out = Ctx.release();
  return TC_OK;
}

static void closeEndpoint(ucp_worker_h Worker, ucp_ep_h Ep);

/// Releases everything a peer holds, in both directions.
static void releasePeer(tc_context *Ctx, tc_peer *Peer) {
  if (Peer->CreditRequest)
    waitRequest(Ctx->DataWorker, Peer->CreditRequest);
  Peer->CreditRequest = nullptr;
  if (Peer->CreditKey)
    ucp_rkey_destroy(Peer->CreditKey);
  if (Peer->RingKey)
    ucp_rkey_destroy(Peer->RingKey);
  // Puts complete locally before they land: make them land before closing.
  if (Peer->DataEp && !Peer->Failed) {
    ucp_request_param_t P = {};
    waitRequest(Ctx->DataWorker, ucp_ep_flush_nbx(Peer->DataEp, &P));
  }
  closeEndpoint(Ctx->DataWorker, Peer->DataEp);
  closeEndpoint(Ctx->Worker, Peer->Ep);
  if (Peer->RingMem)
    ucp_mem_unmap(Ctx->Ucp, Peer->RingMem);
  if (Peer->CreditMem)
    ucp_mem_unmap(Ctx->Ucp, Peer->CreditMem);
}

static void closeEndpoint(ucp_worker_h Worker, ucp_ep_h Ep) {
  if (!Ep)
    return;
  ucp_request_param_t P = {};
  P.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  P.flags = UCP_EP_CLOSE_FLAG_FORCE;
  waitRequest(Worker, ucp_ep_close_nbx(Ep, &P));
}

extern "C" void tc_context_destroy(tc_context_t *Ctx) {
  if (!Ctx)
    return;
  if (Ctx->Executor.joinable())
    tc_executor_stop(Ctx);
  for (auto &[Key, Route] : Ctx->Routes)
    if (Route)
      tc_peer_close(Route);
  Ctx->Routes.clear();
  for (auto &Peer : Ctx->Accepted)
    releasePeer(Ctx, Peer.get());
  if (Ctx->Listener)
    ucp_listener_destroy(Ctx->Listener);
  if (Ctx->WorkerAddress)
    ucp_worker_release_address(Ctx->DataWorker, Ctx->WorkerAddress);
  if (Ctx->DataWorker)
    ucp_worker_destroy(Ctx->DataWorker);
  if (Ctx->Worker)
    ucp_worker_destroy(Ctx->Worker);
  if (Ctx->Ucp)
    ucp_cleanup(Ctx->Ucp);
  delete Ctx;
}

extern "C" tc_status_t tc_context_add_package(tc_context_t *Ctx, tc_package_t *Pkg) {
  if (!Ctx || !Pkg)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  for (tc_package *P : Ctx->Packages)
    if (P->Identity == Pkg->Identity)
      return TC_ERR_INVALID_PARAM;
  Ctx->Packages.push_back(Pkg);
  return TC_OK;
}

extern "C" tc_status_t tc_listen(tc_context_t *Ctx, const char *Address, uint16_t Port) {
  sockaddr_in SA;
  if (!Ctx || Ctx->Listener || !resolve(Address, Port, SA))
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  ucp_listener_params_t L = {};
  L.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  L.sockaddr.addr = reinterpret_cast<sockaddr *>(&SA);
  L.sockaddr.addrlen = sizeof SA;
  L.conn_handler.cb = onConnectionRequest;
  L.conn_handler.arg = Ctx;
  ucs_status_t St = ucp_listener_create(Ctx->Worker, &L, &Ctx->Listener);
  if (St != UCS_OK) {
    logError(std::string("cannot listen on ") + (Address ? Address : "*") + ":" +
             std::to_string(Port) + ": " + ucs_status_string(St));
    return fromUcs(St);
  }
  return TC_OK;
}

extern "C" tc_status_t tc_connect(tc_context_t *Ctx, const char *Address, uint16_t Port,
                                  int TimeoutMs, tc_peer_t **Out) {
  sockaddr_in SA;
  if (!Ctx || !Out || !resolve(Address, Port, SA))
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  auto Peer = std::make_unique<tc_peer>();
  Peer->Ctx = Ctx;
  Peer->Number = ++Ctx->PeersSeen;
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                 UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  P.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  P.sockaddr.addr = reinterpret_cast<sockaddr *>(&SA);
  P.sockaddr.addrlen = sizeof SA;
  P.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  P.err_handler.cb = onEndpointError;
  P.err_handler.arg = Peer.get();
  ucs_status_t St = ucp_ep_create(Ctx->Worker, &P, &Peer->Ep);
  if (St != UCS_OK) {
    logError(std::string("cannot connect: ") + ucs_status_string(St));
    return fromUcs(St);
  }

  Offer O;
  std::vector<uint8_t> Body;
  if (setupLocalSide(Ctx, Peer.get()) != TC_OK || makeOffer(Ctx, Peer.get(), O, Body) != TC_OK) {
    tc_peer_close(Peer.release());
    return TC_ERR_NO_MEMORY;
  }
  ucp_request_param_t RP = {};
  RP.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  RP.flags = UCP_AM_SEND_FLAG_REPLY;
  Ctx->Connecting.push_back(Peer.get());
  St = waitRequest(Ctx->Worker, ucp_am_send_nbx(Peer->Ep, AmHello, &O, sizeof O,
                                                Body.data(), Body.size(), &RP));
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(TimeoutMs);
  while (St == UCS_OK && !Peer->Welcomed && !Peer->Failed &&
         std::chrono::steady_clock::now() < Deadline)
    ucp_worker_progress(Ctx->Worker);
  Ctx->Connecting.erase(std::remove(Ctx->Connecting.begin(), Ctx->Connecting.end(), Peer.get()),
                        Ctx->Connecting.end());
  if (St != UCS_OK || !Peer->Welcomed) {
    logError(std::string("connecting to ") + (Address ? Address : "") + ":" +
             std::to_string(Port) + " failed: " +
             (St != UCS_OK ? ucs_status_string(St)
              : Peer->Failed ? "the connection was refused or broke"
                             : "no handshake before the timeout"));
    tc_peer_close(Peer.release());
    return TC_ERR_IO;
  }
  Ctx->Connected.push_back(Peer.get());
  *Out = Peer.release();
  return TC_OK;
}

extern "C" void tc_peer_close(tc_peer_t *Peer) {
  if (!Peer)
    return;
  tc_context *Ctx = Peer->Ctx;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  Ctx->Connected.erase(std::remove(Ctx->Connected.begin(), Ctx->Connected.end(), Peer),
                       Ctx->Connected.end());
  releasePeer(Ctx, Peer);
  delete Peer;
}

extern "C" tc_status_t tc_context_peer(tc_context_t *Ctx, unsigned Number, tc_peer_t **Out) {
  if (!Ctx || !Out)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(Ctx->Lock);
  for (auto &P : Ctx->Accepted)
    if (P->Number == Number && P->Welcomed && !P->Failed) {
      *Out = P.get();
      return TC_OK;
    }
  return TC_ERR_INVALID_PARAM;
}

extern "C" const char *tc_mailbox_mode_name(const tc_context_t *Ctx) {
  for (const MailboxModeName &M : MailboxModeNames)
    if (Ctx && Ctx->Mode == M.Mode)
      return M.Name;
  return "";
}

extern "C" tc_status_t tc_context_stats(const tc_context_t *Ctx, tc_stats_t *Out) {
  if (!Ctx || !Out)
    return TC_ERR_INVALID_PARAM;
  std::lock_guard<std::recursive_mutex> Guard(const_cast<tc_context *>(Ctx)->Lock);
  *Out = Ctx->Stats;
  return TC_OK;
}
