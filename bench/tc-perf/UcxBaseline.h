//===- UcxBaseline.h - The UCX floors: raw puts and active messages --------===//
//
// A UCX context and worker of tc-perf's own, next to the runtime's, with an
// endpoint to the other side's worker address (as the runtime's data
// endpoint: no error handling, so UCX may pick shared memory) and a ring of
// RingSlots x SlotBytes that UCX allocates (ucp_mem_map with
// UCP_MEM_MAP_ALLOCATE: DESIGN.md measured user memory registered with
// ucp_mem_map taking a 5x slower path over shared memory).
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_UCXBASELINE_H
#define TC_PERF_UCXBASELINE_H

#include "Channel.h"
#include "Control.h"

#include <ucp/api/ucp.h>

#include <string>
#include <vector>

namespace tcperf {

// What active messages did on arrival; the handlers run inside
// ucp_worker_progress.
struct AmInbox {
  Workload W = Workload::ServerSideSum;
  uint64_t Ran = 0;      // messages whose work has run
  uint64_t Acks = 0;     // end-of-stream acknowledgements received
  uint64_t Rendezvous = 0; // of Ran, how many came by rendezvous
  struct Pending {
    void *Descriptor;
    size_t Length;
  };
  std::vector<Pending> Rndv; // rendezvous messages whose data is not fetched yet
};

class UcxEndpoint {
public:
  UcxEndpoint() = default;
  ~UcxEndpoint();
  UcxEndpoint(const UcxEndpoint &) = delete;
  UcxEndpoint &operator=(const UcxEndpoint &) = delete;

  bool init();
  // The worker address, ring address and packed rkey, for the other side.
  void describe(Writer &W) const;
  // Reads the other side's description; creates the endpoint and rkey.
  bool connect(Reader &R);

  // Waits for a request as the runtime's sends do: progress until done.
  bool wait(ucs_status_ptr_t Request, const char *What);
  // The transports UCX chose for the endpoint (after its first use).
  std::string lanes() const;

  ucp_worker_h worker() const { return Worker; }
  ucp_ep_h ep() const { return Ep; }
  uint8_t *ring() const { return Ring; }
  uint64_t remoteRing() const { return RemoteRing; }
  ucp_rkey_h remoteKey() const { return RemoteKey; }
  AmInbox &inbox() { return Inbox; }

private:
  bool setHandler(unsigned Id, ucp_am_recv_callback_t Callback);
  void closeEndpoint();

  ucp_context_h Context = nullptr;
  ucp_worker_h Worker = nullptr;
  ucp_address_t *Address = nullptr;
  size_t AddressLength = 0;
  ucp_mem_h RingMem = nullptr;
  uint8_t *Ring = nullptr;
  std::vector<uint8_t> RingKey; // packed
  ucp_ep_h Ep = nullptr;
  uint64_t RemoteRing = 0;
  ucp_rkey_h RemoteKey = nullptr;
  AmInbox Inbox;
};

// The floor: a frame of the size a Two-Chains Local frame would have,
// written with one ucp_put_nbx into the next slot of the other side's ring;
// the receiver polls the frame's last 8 bytes for the sequence number and
// runs the work on the payload in place. No checksum, no flow control: it
// trusts the transport to land the last bytes last (shared memory's
// forward copy mostly does), so it is a lower bound, not a protocol.
class UcxPutChannel : public Channel {
public:
  explicit UcxPutChannel(UcxEndpoint &E) : E(E) {}
  bool prepare(Workload W, const std::vector<uint8_t> &Payload) override;
  bool send() override;
  int poll() override;
  bool drain() override;
  bool countsStream() const override { return false; }
  void progress() override { ucp_worker_progress(E.worker()); }

  // 64 bytes if the payload fits the header line's inline 8, else a header
  // line plus the payload and an 8-byte trailer in whole lines.
  static size_t frameBytes(size_t Payload);

private:
  UcxEndpoint &E;
  Workload W = Workload::ServerSideSum;
  std::vector<uint8_t> Payload, Staging;
  size_t Frame = 0, PayloadOffset = 0;
  uint64_t Sent = 0, Received = 0;
};

// UCX active messages: ucp_am_send_nbx of the payload, the work run by the
// receiver's handler. Eager messages are handled in the callback; for
// rendezvous (UCX's choice for large ones) the callback keeps the
// descriptor and poll() fetches the data with ucp_am_recv_data_nbx, then
// runs the work.
class UcxAmChannel : public Channel {
public:
  explicit UcxAmChannel(UcxEndpoint &E) : E(E) {}
  bool prepare(Workload W, const std::vector<uint8_t> &Payload) override;
  bool send() override;
  int poll() override;
  bool drain() override;
  bool acknowledge() override;

private:
  bool fetchRendezvous();

  UcxEndpoint &E;
  std::vector<uint8_t> Payload, RndvBuffer;
  uint64_t Counted = 0, AcksWanted = 0;
};

} // namespace tcperf

#endif
