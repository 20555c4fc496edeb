//===- Setup.cpp - UCX contexts and workers as the runtime makes them -----===//
#include "ucx/Setup.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <ucs/config/global_opts.h>
#include <uct/api/uct.h>

namespace twochains::rt {

/// The control context's endpoints get one rendezvous lane, not one per
/// NIC: a second NIC's rendezvous lane has its interface progressed on
/// every ucp_worker_progress after the one the frame came on, which puts
/// an empty epoll_wait (a microsecond in a VM) between each frame's arrival
/// and the jam's reply. Frames never travel by rendezvous (FramePath.cpp
/// refuses them); code and large answers then use one lane. A value the
/// user set (UCX_MAX_RNDV_LANES) is kept.
/// The RMA context's rings, credit lines and doorbell are POSIX shared
/// memory first, not System V: a System V segment each would stop a host
/// at 4096 segments in all (SHMMNI), a few hundred connections per process
/// (docs/scaling.md). UCX's own order otherwise; a value the user set
/// (UCX_ALLOC_PRIO) is kept.
/// UCX's shared-memory interfaces (posix, sysv: one each per worker, and a
/// context makes three workers) each allocate and touch 512 receive
/// buffers of 8 KiB at creation (MM_RX_BUFS_GROW): 4 MiB of shared memory
/// apiece, most of the time and memory a context took to create. The
/// control worker's messages and the RMA worker's few are served by a
/// FIFO's worth (64 elements); the pool grows beyond that if ever needed.
/// A value the user set (UCX_MM_, UCX_POSIX_, UCX_SYSV_RX_BUFS_GROW) is
/// kept.
static const char MmRxBufsGrow[] = "64";
static const char AsyncMaxEvents[] = "65536";
static const char RmaAllocPriority[] = "md:posix,md:sysv,huge,thp,md:*,mmap,heap";
/// The control context's transports where the user left UCX_TLS unset:
/// every one but the shared-memory FIFOs. Its endpoints detect a peer's
/// failure (UCP_ERR_HANDLING_MODE_PEER), which UCX 1.13's posix and sysv
/// interfaces do not offer (MM_ERROR_HANDLING=n), so no endpoint ever
/// used them; but each was opened, woken and armed with the worker, and
/// weighed for every endpoint's lanes.
static const char ControlTransports[] = "^posix,sysv";
/// Without those interfaces UCX closes their memory domains, from which
/// its worker's buffer pools came (UCX's order: sysv, posix, huge, thp,
/// ...): "thp" is the heap, where a flood of 8 KiB messages then grew
/// them by 4 MiB. Anonymous mappings, which take no System V segment
/// either (SHMMNI: 4096 for the host); a value the user set (UCX_ALLOC_PRIO)
/// is kept.
static const char ControlAllocPriority[] = "mmap,heap";

/// Whether UCX may open its shared-memory interfaces under Transports
/// (null: UCX_TLS's), by UCX's names and aliases: the receive buffers'
/// option set where none opens is warned about at each worker's creation.
static bool sharedMemoryTransports(const char *Transports) {
  const char *Tls = Transports ? Transports : std::getenv("UCX_TLS");
  if (!Tls || !*Tls || *Tls == '^')
    return true;
  std::string List = std::string(",") + Tls + ",";
  for (const char *Name : {",all,", ",posix,", ",sysv,", ",sm,", ",shm,", ",mm,"})
    if (List.find(Name) != std::string::npos)
      return true;
  return false;
}

ucs_status_t createUcp(uint64_t Features, const char *Transports, const char *NetDevices,
                       ucp_context_h *Out, bool SharedWorkers, bool Control) {
  // A receiver restarted on its port listens again at once, rather than
  // failing with "Device is busy" until the old connections' TIME_WAIT
  // ends. UCX reads this for its TCP connection manager from the
  // environment only (ucp_config_modify does not reach it in 1.13); a value
  // the user set is kept.
  setenv("UCX_TCP_CM_REUSEADDR", "y", /*overwrite=*/0);
  // UCX's async thread watches every connection's socket and shared
  // segment, and stops taking more past ASYNC_MAX_EVENTS (1024): a
  // receiver's connections then fail at about a thousand peers. Sized
  // before the thread starts (the first context); a value the user set is
  // kept.
  if (!std::getenv("UCX_ASYNC_MAX_EVENTS"))
    ucs_global_opts_set_value("ASYNC_MAX_EVENTS", AsyncMaxEvents);
  ucp_config_t *Config = nullptr;
  ucs_status_t St = ucp_config_read(nullptr, nullptr, &Config);
  if (St != UCS_OK)
    return St;
  bool WithoutFifos = Control && !Transports && !std::getenv("UCX_TLS");
  if (WithoutFifos)
    Transports = ControlTransports;
  bool RxBufsSet = std::getenv("UCX_MM_RX_BUFS_GROW") || std::getenv("UCX_POSIX_RX_BUFS_GROW") ||
                   std::getenv("UCX_SYSV_RX_BUFS_GROW") || WithoutFifos ||
                   !sharedMemoryTransports(Transports);
  const char *AllocPriority = !Control       ? RmaAllocPriority
                              : WithoutFifos ? ControlAllocPriority
                                             : nullptr;
  if (std::getenv("UCX_ALLOC_PRIO") || std::getenv("UCX_ALLOC"))
    AllocPriority = nullptr;
  if ((Transports && (St = ucp_config_modify(Config, "TLS", Transports)) != UCS_OK) ||
      (!RxBufsSet && (St = ucp_config_modify(Config, "MM_RX_BUFS_GROW", MmRxBufsGrow)) != UCS_OK) ||
      (NetDevices && (St = ucp_config_modify(Config, "NET_DEVICES", NetDevices)) != UCS_OK) ||
      (Control && !std::getenv("UCX_MAX_RNDV_LANES") &&
       (St = ucp_config_modify(Config, "MAX_RNDV_LANES", "1")) != UCS_OK) ||
      (AllocPriority && (St = ucp_config_modify(Config, "ALLOC_PRIO", AllocPriority)) != UCS_OK)) {
    ucp_config_release(Config);
    return St;
  }
  ucp_params_t P = {};
  P.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  P.features = Features;
  P.mt_workers_shared = SharedWorkers;
  St = ucp_init(&P, Config, Out);
  ucp_config_release(Config);
  return St;
}

ucs_status_t createWorker(ucp_context_h Ucp, ucp_worker_h *Out, bool Multi) {
  ucp_worker_params_t W = {};
  W.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  W.thread_mode = Multi ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SERIALIZED;
  return ucp_worker_create(Ucp, &W, Out);
}

std::string nonTcpNetDevices() {
  std::set<std::string> Devices;
  uct_component_h *Components = nullptr;
  unsigned NumComponents = 0;
  if (uct_query_components(&Components, &NumComponents) != UCS_OK)
    return "";
  for (unsigned C = 0; C < NumComponents; ++C) {
    uct_component_attr_t A = {};
    A.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    if (uct_component_query(Components[C], &A) != UCS_OK || !A.md_resource_count)
      continue;
    std::unique_ptr<uct_md_resource_desc_t[]> Mds(new uct_md_resource_desc_t[A.md_resource_count]);
    A.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    A.md_resources = Mds.get();
    if (uct_component_query(Components[C], &A) != UCS_OK)
      continue;
    for (unsigned M = 0; M < A.md_resource_count; ++M) {
      uct_md_config_t *Config = nullptr;
      uct_md_h Md = nullptr;
      if (uct_md_config_read(Components[C], nullptr, nullptr, &Config) != UCS_OK)
        continue;
      ucs_status_t St = uct_md_open(Components[C], Mds[M].md_name, Config, &Md);
      uct_config_release(Config);
      if (St != UCS_OK)
        continue;
      uct_tl_resource_desc_t *Resources = nullptr;
      unsigned NumResources = 0;
      if (uct_md_query_tl_resources(Md, &Resources, &NumResources) == UCS_OK) {
        for (unsigned R = 0; R < NumResources; ++R)
          if (Resources[R].dev_type == UCT_DEVICE_TYPE_NET &&
              std::strcmp(Resources[R].tl_name, "tcp"))
            Devices.insert(Resources[R].dev_name);
        uct_release_tl_resource_list(Resources);
      }
      uct_md_close(Md);
    }
  }
  uct_release_component_list(Components);
  std::string List;
  for (const std::string &D : Devices)
    List += (List.empty() ? "" : ",") + D;
  return List;
}

} // namespace twochains::rt
