//===- UcxBaseline.cpp - The UCX floors: raw puts and active messages ------===//
#include "UcxBaseline.h"

#include "Clock.h"
#include "Workload.h"

#include <cstdio>
#include <cstring>

namespace tcperf {

namespace {
enum : unsigned { AmMessage = 1, AmAck = 2 };
constexpr size_t RingBytes = size_t(RingSlots) * SlotBytes;

bool ucxFailed(const char *What, ucs_status_t St) {
  fprintf(stderr, "tc-perf: UCX %s: %s\n", What, ucs_status_string(St));
  return false;
}

// A message: eager data is here only during the call, so the work runs
// now; rendezvous data is still on the sender, so keep the descriptor
// (UCS_INPROGRESS) for poll() to fetch outside the callback.
ucs_status_t onMessage(void *Arg, const void *, size_t, void *Data, size_t Length,
                       const ucp_am_recv_param_t *Param) {
  AmInbox *In = static_cast<AmInbox *>(Arg);
  if (Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
    In->Rndv.push_back({Data, Length});
    return UCS_INPROGRESS;
  }
  runWork(In->W, Data, Length);
  ++In->Ran;
  return UCS_OK;
}

ucs_status_t onAck(void *Arg, const void *, size_t, void *, size_t, const ucp_am_recv_param_t *) {
  ++static_cast<AmInbox *>(Arg)->Acks;
  return UCS_OK;
}
} // namespace

UcxEndpoint::~UcxEndpoint() {
  if (RemoteKey)
    ucp_rkey_destroy(RemoteKey);
  if (Ep)
    closeEndpoint();
  if (RingMem)
    ucp_mem_unmap(Context, RingMem);
  if (Address)
    ucp_worker_release_address(Worker, Address);
  if (Worker)
    ucp_worker_destroy(Worker);
  if (Context)
    ucp_cleanup(Context);
}

// A flushing close: UCX refuses the forced one for an endpoint without
// error handling (which this one has none of, to get shared memory). The
// other side may be gone already, so give up after a second rather than
// hang at exit.
void UcxEndpoint::closeEndpoint() {
  ucp_request_param_t P = {};
  ucs_status_ptr_t R = ucp_ep_close_nbx(Ep, &P);
  if (R == nullptr || UCS_PTR_IS_ERR(R))
    return;
  uint64_t Deadline = Clock::monotonicNs() + 1000000000u;
  while (ucp_request_check_status(R) == UCS_INPROGRESS && Clock::monotonicNs() < Deadline)
    ucp_worker_progress(Worker);
  if (ucp_request_check_status(R) == UCS_INPROGRESS)
    ucp_request_cancel(Worker, R);
  ucp_request_free(R);
}

bool UcxEndpoint::setHandler(unsigned Id, ucp_am_recv_callback_t Callback) {
  ucp_am_handler_param_t H = {};
  H.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                 UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  H.id = Id;
  H.flags = UCP_AM_FLAG_WHOLE_MSG;
  H.cb = Callback;
  H.arg = &Inbox;
  ucs_status_t St = ucp_worker_set_am_recv_handler(Worker, &H);
  return St == UCS_OK || ucxFailed("ucp_worker_set_am_recv_handler", St);
}

bool UcxEndpoint::init() {
  ucp_config_t *Config;
  ucs_status_t St = ucp_config_read(nullptr, nullptr, &Config);
  if (St != UCS_OK)
    return ucxFailed("ucp_config_read", St);
  ucp_params_t P = {};
  P.field_mask = UCP_PARAM_FIELD_FEATURES;
  P.features = UCP_FEATURE_RMA | UCP_FEATURE_AM;
  St = ucp_init(&P, Config, &Context);
  ucp_config_release(Config);
  if (St != UCS_OK)
    return ucxFailed("ucp_init", St);
  ucp_worker_params_t W = {};
  W.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  W.thread_mode = UCS_THREAD_MODE_SINGLE; // only the main thread uses it
  if ((St = ucp_worker_create(Context, &W, &Worker)) != UCS_OK)
    return ucxFailed("ucp_worker_create", St);
  if ((St = ucp_worker_get_address(Worker, &Address, &AddressLength)) != UCS_OK)
    return ucxFailed("ucp_worker_get_address", St);

  ucp_mem_map_params_t M = {};
  M.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                 UCP_MEM_MAP_PARAM_FIELD_FLAGS;
  M.address = nullptr;
  M.length = RingBytes;
  M.flags = UCP_MEM_MAP_ALLOCATE;
  if ((St = ucp_mem_map(Context, &M, &RingMem)) != UCS_OK)
    return ucxFailed("ucp_mem_map of the ring", St);
  ucp_mem_attr_t A = {};
  A.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
  if ((St = ucp_mem_query(RingMem, &A)) != UCS_OK)
    return ucxFailed("ucp_mem_query", St);
  Ring = static_cast<uint8_t *>(A.address);
  std::memset(Ring, 0, RingBytes);
  void *Key;
  size_t KeyLength;
  if ((St = ucp_rkey_pack(Context, RingMem, &Key, &KeyLength)) != UCS_OK)
    return ucxFailed("ucp_rkey_pack", St);
  RingKey.assign(static_cast<uint8_t *>(Key), static_cast<uint8_t *>(Key) + KeyLength);
  ucp_rkey_buffer_release(Key);
  return setHandler(AmMessage, onMessage) && setHandler(AmAck, onAck);
}

void UcxEndpoint::describe(Writer &W) const {
  W.blob(Address, AddressLength).put(uint64_t(reinterpret_cast<uintptr_t>(Ring)));
  W.blob(RingKey.data(), RingKey.size());
}

bool UcxEndpoint::connect(Reader &R) {
  std::vector<uint8_t> RemoteAddress, Key;
  R.blob(&RemoteAddress).get(&RemoteRing).blob(&Key);
  if (!R.ok())
    return fprintf(stderr, "tc-perf: short UCX description from the other side\n"), false;
  ucp_ep_params_t P = {};
  P.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
  P.address = reinterpret_cast<const ucp_address_t *>(RemoteAddress.data());
  ucs_status_t St = ucp_ep_create(Worker, &P, &Ep);
  if (St != UCS_OK)
    return ucxFailed("ucp_ep_create", St);
  if ((St = ucp_ep_rkey_unpack(Ep, Key.data(), &RemoteKey)) != UCS_OK)
    return ucxFailed("ucp_ep_rkey_unpack", St);
  return true;
}

bool UcxEndpoint::wait(ucs_status_ptr_t Request, const char *What) {
  if (Request == nullptr)
    return true;
  if (UCS_PTR_IS_ERR(Request))
    return ucxFailed(What, UCS_PTR_STATUS(Request));
  ucs_status_t St;
  while ((St = ucp_request_check_status(Request)) == UCS_INPROGRESS)
    ucp_worker_progress(Worker);
  ucp_request_free(Request);
  return St == UCS_OK || ucxFailed(What, St);
}

std::string UcxEndpoint::lanes() const {
  char *Text = nullptr;
  size_t Size = 0;
  FILE *F = open_memstream(&Text, &Size);
  if (!F)
    return "";
  ucp_ep_print_info(Ep, F);
  fclose(F);
  std::string All(Text, Size), Lanes;
  free(Text);
  // Keep the lane lines: "lane[0]: ... rma ... posix/memory ...".
  size_t At = 0;
  while (At < All.size()) {
    size_t End = All.find('\n', At);
    std::string Line = All.substr(At, End == std::string::npos ? std::string::npos : End - At);
    if (Line.find("lane[") != std::string::npos)
      Lanes += Line + "\n";
    At = End == std::string::npos ? All.size() : End + 1;
  }
  return Lanes;
}

size_t UcxPutChannel::frameBytes(size_t P) {
  return P <= 8 ? 64 : 64 + (P + 8 + 63) / 64 * 64;
}

bool UcxPutChannel::prepare(Workload Wl, const std::vector<uint8_t> &P) {
  W = Wl;
  Payload = P;
  Frame = frameBytes(P.size());
  PayloadOffset = P.size() <= 8 ? 48 : 64; // where a Two-Chains Local frame has it
  Staging.assign(Frame, 0);
  // Sequence numbers restart with every test: clear what earlier tests left.
  std::memset(E.ring(), 0, RingBytes);
  Sent = Received = 0;
  return true;
}

bool UcxPutChannel::send() {
  uint64_t Slot = Sent % RingSlots;
  ++Sent;
  std::memcpy(Staging.data() + PayloadOffset, Payload.data(), Payload.size());
  std::memcpy(Staging.data() + Frame - 8, &Sent, 8);
  ucp_request_param_t P = {};
  return E.wait(ucp_put_nbx(E.ep(), Staging.data(), Frame, E.remoteRing() + Slot * SlotBytes,
                            E.remoteKey(), &P),
                "ucp_put_nbx");
}

int UcxPutChannel::poll() {
  uint8_t *Slot = E.ring() + (Received % RingSlots) * SlotBytes;
  uint64_t Seq = __atomic_load_n(reinterpret_cast<uint64_t *>(Slot + Frame - 8), __ATOMIC_ACQUIRE);
  if (Seq != Received + 1) {
    ucp_worker_progress(E.worker()); // emulated puts (TCP) land only here
    return 0;
  }
  runWork(W, Slot + PayloadOffset, Payload.size());
  ++Received;
  return 1;
}

bool UcxPutChannel::drain() {
  ucp_request_param_t P = {};
  return E.wait(ucp_worker_flush_nbx(E.worker(), &P), "ucp_worker_flush_nbx");
}

bool UcxAmChannel::prepare(Workload W, const std::vector<uint8_t> &P) {
  E.inbox().W = W;
  Payload = P;
  RndvBuffer.resize(P.size() ? P.size() : 1);
  Counted = E.inbox().Ran;
  AcksWanted = E.inbox().Acks;
  return true;
}

bool UcxAmChannel::send() {
  ucp_request_param_t P = {};
  return E.wait(ucp_am_send_nbx(E.ep(), AmMessage, nullptr, 0, Payload.data(), Payload.size(), &P),
                "ucp_am_send_nbx");
}

bool UcxAmChannel::fetchRendezvous() {
  AmInbox &In = E.inbox();
  std::vector<AmInbox::Pending> Now;
  Now.swap(In.Rndv); // progress inside wait() may queue more
  for (const AmInbox::Pending &M : Now) {
    if (M.Length > RndvBuffer.size())
      RndvBuffer.resize(M.Length);
    ucp_request_param_t P = {};
    if (!E.wait(ucp_am_recv_data_nbx(E.worker(), M.Descriptor, RndvBuffer.data(), M.Length, &P),
                "ucp_am_recv_data_nbx"))
      return false;
    runWork(In.W, RndvBuffer.data(), M.Length);
    ++In.Ran;
    ++In.Rendezvous;
  }
  return true;
}

int UcxAmChannel::poll() {
  ucp_worker_progress(E.worker());
  if (!E.inbox().Rndv.empty() && !fetchRendezvous())
    return -1;
  int New = int(E.inbox().Ran - Counted);
  Counted = E.inbox().Ran;
  return New;
}

bool UcxAmChannel::drain() {
  ++AcksWanted;
  uint64_t Deadline = Clock::monotonicNs() + 60000000000ull;
  while (E.inbox().Acks < AcksWanted) {
    ucp_worker_progress(E.worker());
    if (Clock::monotonicNs() > Deadline)
      return fprintf(stderr, "tc-perf: no acknowledgement from the server in 60 s\n"), false;
  }
  return true;
}

bool UcxAmChannel::acknowledge() {
  ucp_request_param_t P = {};
  return E.wait(ucp_am_send_nbx(E.ep(), AmAck, nullptr, 0, nullptr, 0, &P), "sending the ack");
}

} // namespace tcperf
