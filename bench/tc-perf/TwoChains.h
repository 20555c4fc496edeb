//===- TwoChains.h - The Two-Chains side: context, package, peer, channel --===//
#ifndef TC_PERF_TWOCHAINS_H
#define TC_PERF_TWOCHAINS_H

#include "Channel.h"

#include <twochains/twochains.h>

#include <string>

namespace tcperf {

// One context with the stdlib package loaded as sender and receiver (both
// sides run frames: the ping-pong's replies run on the client), and the
// one peer of this run.
class TcEndpoint {
public:
  TcEndpoint() = default;
  ~TcEndpoint();
  TcEndpoint(const TcEndpoint &) = delete;
  TcEndpoint &operator=(const TcEndpoint &) = delete;

  // CodeTrust: a tc_code_trust_t (0: TC_CODE_TRUST, else package).
  bool create(const std::string &Prefix, uint32_t Mailbox, tc_wait_mode_t Wait,
              uint32_t CodeCacheSize = 0, uint32_t Flags = 0, uint32_t CodeTrust = 0);
  // Port 0: any free port (listenPort() says which).
  bool listen(uint16_t Port);
  uint16_t listenPort() const;
  bool connect(const std::string &Host, uint16_t Port, int TimeoutMs);
  // Server: progresses until the client has connected (peer number 1).
  bool awaitPeer(int TimeoutMs);

  bool created() const { return Ctx != nullptr; }
  tc_context_t *context() const { return Ctx; }
  tc_peer_t *peer() const { return Peer; }
  const tc_package_t *package() const { return Pkg; }
  tc_stats_t stats() const;

private:
  tc_context_t *Ctx = nullptr;
  tc_package_t *Pkg = nullptr;
  tc_peer_t *Peer = nullptr;
  bool OwnsPeer = false; // the client's, from tc_connect; the server's is the context's
};

// tc_send of one stdlib element in one mode, tc_progress to run arrivals.
class TcChannel : public Channel {
public:
  TcChannel(TcEndpoint &E, tc_send_mode_t Mode) : E(E), Mode(Mode) {}
  bool prepare(Workload W, const std::vector<uint8_t> &Payload) override;
  bool send() override;
  int poll() override;
  bool drain() override;
  bool cork(bool Corked) override;

private:
  TcEndpoint &E;
  tc_send_mode_t Mode;
  uint32_t Element = 0;
  std::vector<uint8_t> Payload;
  unsigned RanWhileSending = 0; // frames run by progress between credit retries
};

// Prints "tc-perf: What: <status>" and returns false, for failed calls.
bool tcFailed(const char *What, tc_status_t St);

} // namespace tcperf

#endif
