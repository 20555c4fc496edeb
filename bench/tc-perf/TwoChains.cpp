//===- TwoChains.cpp - The Two-Chains side ---------------------------------===//
#include "TwoChains.h"

#include "Clock.h"
#include "Workload.h"

#include <twochains/packages/stdlib.h>

#include <cstdio>

namespace tcperf {

bool tcFailed(const char *What, tc_status_t St) {
  fprintf(stderr, "tc-perf: %s: %s\n", What, tc_status_string(St));
  return false;
}

TcEndpoint::~TcEndpoint() {
  if (Peer && OwnsPeer)
    tc_peer_close(Peer);
  if (Ctx)
    tc_context_destroy(Ctx);
  if (Pkg)
    tc_package_unload(Pkg);
}

bool TcEndpoint::create(const std::string &Prefix, uint32_t Mailbox, tc_wait_mode_t Wait,
                        uint32_t CodeCacheSize, uint32_t Flags, uint32_t CodeTrust) {
  tc_status_t St =
      stdlib_package_load(Prefix.c_str(), TC_PACKAGE_SENDER | TC_PACKAGE_RECEIVER, &Pkg);
  if (St != TC_OK) {
    fprintf(stderr, "tc-perf: cannot load the stdlib package from %s (see --prefix)\n",
            Prefix.c_str());
    return tcFailed("loading stdlib", St);
  }
  tc_context_params_t P = {};
  P.version = TC_CONTEXT_PARAMS_VERSION;
  P.slots = RingSlots;
  P.slot_size = SlotBytes;
  P.credit_batch = CreditBatch;
  P.wait_mode = Wait;
  P.mailbox_mode = Mailbox;
  P.code_cache_size = CodeCacheSize;
  P.flags = Flags;
  P.code_trust = CodeTrust;
  if ((St = tc_context_create(&P, &Ctx)) != TC_OK)
    return tcFailed("creating the context", St);
  if ((St = tc_context_add_package(Ctx, Pkg)) != TC_OK)
    return tcFailed("adding the package", St);
  return true;
}

bool TcEndpoint::listen(uint16_t Port) {
  tc_status_t St = tc_listen(Ctx, "0.0.0.0", Port);
  return St == TC_OK || tcFailed("tc_listen", St);
}

uint16_t TcEndpoint::listenPort() const {
  uint16_t Port = 0;
  return tc_listen_port(Ctx, &Port) == TC_OK ? Port : 0;
}

bool TcEndpoint::connect(const std::string &Host, uint16_t Port, int TimeoutMs) {
  uint64_t Deadline = Clock::monotonicNs() + uint64_t(TimeoutMs) * 1000000;
  tc_status_t St;
  // The server listens before it answers the bootstrap, but retry anyway:
  // a refused first attempt costs nothing.
  while ((St = tc_connect(Ctx, Host.c_str(), Port, 2000, &Peer)) != TC_OK &&
         Clock::monotonicNs() < Deadline)
    ;
  if (St != TC_OK)
    return tcFailed("tc_connect", St);
  OwnsPeer = true;
  return true;
}

bool TcEndpoint::awaitPeer(int TimeoutMs) {
  uint64_t Deadline = Clock::monotonicNs() + uint64_t(TimeoutMs) * 1000000;
  while (tc_context_peer(Ctx, 1, &Peer) != TC_OK) {
    tc_status_t St = tc_progress(Ctx, nullptr);
    if (St != TC_OK)
      return tcFailed("tc_progress while waiting for the client", St);
    if (Clock::monotonicNs() > Deadline) {
      fprintf(stderr, "tc-perf: the client did not tc_connect within %d s\n", TimeoutMs / 1000);
      return false;
    }
  }
  return true;
}

tc_stats_t TcEndpoint::stats() const {
  tc_stats_t S = {};
  tc_context_stats(Ctx, &S);
  return S;
}

bool TcChannel::prepare(Workload W, const std::vector<uint8_t> &P) {
  Element = workloadElement(W);
  Payload = P;
  RanWhileSending = 0;
  return true;
}

bool TcChannel::send() {
  tc_status_t St;
  while ((St = tc_send(E.peer(), E.package(), Element, Mode, Payload.data(), Payload.size())) ==
         TC_ERR_NO_CREDIT) {
    // Credits come back with the receiver's reports, which our progress
    // reads; frames for us may run meanwhile, and poll() will count them.
    unsigned Ran = 0;
    if ((St = tc_progress(E.context(), &Ran)) != TC_OK)
      return tcFailed("tc_progress", St);
    RanWhileSending += Ran;
  }
  return St == TC_OK || tcFailed("tc_send", St);
}

int TcChannel::poll() {
  unsigned Ran = 0;
  tc_status_t St = tc_progress(E.context(), &Ran);
  if (St != TC_OK)
    return tcFailed("tc_progress", St), -1;
  Ran += RanWhileSending;
  RanWhileSending = 0;
  return int(Ran);
}

bool TcChannel::cork(bool Corked) {
  tc_status_t St = tc_peer_cork(E.peer(), Corked);
  return St == TC_OK || tcFailed("tc_peer_cork", St);
}

bool TcChannel::drain() {
  tc_status_t St = tc_flush(E.peer(), 60000);
  return St == TC_OK || tcFailed("tc_flush", St);
}

} // namespace tcperf
