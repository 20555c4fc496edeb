//===- Runtime.h - The context, peers and rings behind the C API ----------===//
#ifndef TWOCHAINS_RUNTIME_RUNTIME_H
#define TWOCHAINS_RUNTIME_RUNTIME_H

#include "Package.h"
#include "Ring.h"
#include "twochains/twochains.h"

#include <memory>
#include <ucp/api/ucp.h>
#include <vector>

namespace twochains::rt {

/// AM ids of the handshake (docs/runtime.md).
enum : unsigned { AmHello = 0x7c01, AmWelcome = 0x7c02 };
constexpr uint32_t HandshakeMagic = 0x54434853; // "TCHS"

struct HelloHeader {          // sender -> receiver; data: rkey, worker address
  uint32_t Magic, Version;
  uint64_t CreditAddress;     // the sender's credit word
  uint32_t KeySize, AddressSize;
};
struct WelcomeHeader {        // receiver -> sender; data: rkey, worker address
  uint32_t Magic, Version;
  uint64_t RingAddress;
  uint32_t Slots, SlotSize;
  uint32_t KeySize, AddressSize;
};

/// Waits for a UCX request (or an immediate completion) by progressing the
/// worker; returns its status.
ucs_status_t waitRequest(ucp_worker_h Worker, ucs_status_ptr_t Request);

} // namespace twochains::rt

struct tc_context;

namespace twochains::rt {
/// Receiver: answers the HELLOs that arrived since the last call.
void processHandshakes(tc_context *Ctx);
/// An endpoint to a worker address, for puts.
ucp_ep_h connectToWorker(tc_context *Ctx, tc_peer *Peer, const void *Address);
} // namespace twochains::rt

/// What a running jam receives as its tc_jam_ctx_t.
struct tc_jam_ctx {
  tc_peer *Peer;
  uint64_t Sequence;
};

struct tc_peer {
  tc_context *Ctx = nullptr;
  ucp_ep_h Ep = nullptr;      // from sockaddr connection establishment
  /// The endpoint puts go through, created from the peer's worker address:
  /// unlike the sockaddr one, UCX may give it shared-memory lanes.
  ucp_ep_h DataEp = nullptr;
  bool Failed = false;

  // Sender side: the receiver's ring, and the credit word it writes.
  bool Welcomed = false;
  uint64_t RingAddress = 0;
  uint32_t Slots = 0, SlotSize = 0;
  ucp_rkey_h RingKey = nullptr;
  std::unique_ptr<twochains::rt::SenderRing> Send;
  ucp_mem_h CreditMem = nullptr;
  volatile uint64_t *CreditWord = nullptr;
  std::vector<uint8_t> Staging;

  // Receiver side: this sender's ring, and where to report credits.
  ucp_mem_h RingMem = nullptr;
  uint8_t *Ring = nullptr;
  std::unique_ptr<twochains::rt::ReceiverRing> Receive;
  uint64_t CreditAddress = 0;
  ucp_rkey_h CreditKey = nullptr;
  uint64_t CreditSource = 0;          // the buffer a credit put reads
  ucs_status_ptr_t CreditRequest = nullptr;
};

struct tc_context {
  ucp_context_h Ucp = nullptr;
  ucp_worker_h Worker = nullptr;
  ucp_listener_h Listener = nullptr;
  uint32_t Slots = 64, SlotSize = 4096, Batch = 16;
  std::vector<tc_package *> Packages;
  std::vector<std::unique_ptr<tc_peer>> Accepted;   // receiver side
  struct PendingHello {
    ucp_ep_h Ep;
    twochains::rt::HelloHeader Header;
    std::vector<uint8_t> Key;
  };
  std::vector<PendingHello> Hellos;
  std::vector<tc_peer *> Connecting;                // sender side, awaiting welcome
  ucp_address_t *WorkerAddress = nullptr;
  size_t WorkerAddressSize = 0;
  /// Executable memory injected images run in (docs/runtime.md).
  uint8_t *Exec = nullptr;
  size_t ExecSize = 0;
  tc_stats_t Stats = {};
};

#endif
