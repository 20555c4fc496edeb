//===- Setup.h - UCX contexts and workers as the runtime makes them -------===//
#ifndef TWOCHAINS_RUNTIME_UCX_SETUP_H
#define TWOCHAINS_RUNTIME_UCX_SETUP_H

#include <string>
#include <ucp/api/ucp.h>

namespace twochains::rt {

/// A UCX context with Features, on Transports (null: UCX_TLS decides) and
/// network devices NetDevices (null: UCX_NET_DEVICES decides; otherwise a
/// UCX device list, empty for none). Control: the control context.
ucs_status_t createUcp(uint64_t Features, const char *Transports, const char *NetDevices,
                       ucp_context_h *Out, bool SharedWorkers = false, bool Control = false);
/// Serialised: the executor thread and the callers take turns. Multi:
/// the data worker of a context for threads.
ucs_status_t createWorker(ucp_context_h Ucp, ucp_worker_h *Out, bool Multi = false);
/// The network devices of every transport but TCP, as a UCX device list
/// ("mlx5_0:1,..."): InfiniBand and RoCE keep all theirs wherever TCP is
/// restricted.
std::string nonTcpNetDevices();

} // namespace twochains::rt

#endif
