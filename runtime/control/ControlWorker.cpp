//===- ControlWorker.cpp - The control context, on the interfaces asked for ===//
#include "control/ControlWorker.h"

#include "base/Log.h"
#include "core/Sleep.h"
#include "ucx/Setup.h"
#include "ucx/Status.h"
#include "ucx/UcxAsyncGuard.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace twochains::rt {

static std::string joined(const std::vector<std::string> &Items) {
  std::string Out;
  for (const std::string &I : Items)
    Out += (Out.empty() ? "" : ",") + I;
  return Out;
}

ucs_status_t setHandler(ucp_worker_h Worker, unsigned Id, ucp_am_recv_callback_t Callback,
                        CoreContext *Ctx) {
  ucp_am_handler_param_t H = {};
  H.field_mask =
      UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  H.id = Id;
  H.cb = Callback;
  H.arg = Ctx;
  return ucp_worker_set_am_recv_handler(Worker, &H);
}

/// The control context and worker with TCP where Ctx says; replaces the
/// ones it has only once the new ones exist. Until a listen or connect
/// chooses TCP's interfaces (TcpChosen), the worker talks to itself: the
/// first listen or connect replaces it by one on every transport (and
/// nothing reaches it before: there is no listener). Opening every
/// transport twice was a third of a context's creation, which a job's
/// ranks do together on few cores.
static tc_status_t reopen(CoreContext *Ctx) {
  std::string Devices;
  if (!Ctx->Control->TcpAll && Ctx->Control->TcpChosen) {
    std::string Others = nonTcpNetDevices();
    std::string Tcp = joined(Ctx->Control->TcpDevices);
    Devices = Others + (!Others.empty() && !Tcp.empty() ? "," : "") + Tcp;
  }
  ucp_context_h Ucp = nullptr;
  ucp_worker_h Worker = nullptr;
  const char *NetDevices = Ctx->Control->TcpAll ? nullptr : Devices.c_str();
  // WAKEUP: the worker's event fd wakes sleeping waits (core/Sleep.h).
  ucs_status_t St = createUcp(UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
                              Ctx->Control->TcpChosen ? nullptr : "self", NetDevices, &Ucp, false,
                              true);
  // UCX_TLS=tcp with no interface chosen yet leaves UCX no transport:
  // until a listen or connect chooses one, the worker talks to itself.
  if (St != UCS_OK && !Ctx->Control->TcpAll && Ctx->Control->TcpDevices.empty())
    St = createUcp(UCP_FEATURE_AM | UCP_FEATURE_WAKEUP, "self", NetDevices, &Ucp, false, true);
  if (St != UCS_OK) {
    logError(std::string("ucp_init: ") + ucs_status_string(St));
    return statusOfUcs(St);
  }
  if ((St = createWorker(Ucp, &Worker)) != UCS_OK) {
    logError(std::string("ucp_worker_create: ") + ucs_status_string(St));
    ucp_cleanup(Ucp);
    return statusOfUcs(St);
  }
  for (const auto &[Id, Callback] : Ctx->Control->Handlers) {
    if ((St = setHandler(Worker, Id, Callback, Ctx)) != UCS_OK) {
      ucp_worker_destroy(Worker);
      ucp_cleanup(Ucp);
      return statusOfUcs(St);
    }
  }
  if (Ctx->Worker) {
    forgetSleepWorker(Ctx);
    twochains_ucx_disown(Ctx->Worker);
    ucp_worker_destroy(Ctx->Worker);
  }
  if (Ctx->Ucp)
    ucp_cleanup(Ctx->Ucp);
  Ctx->Ucp = Ucp;
  Ctx->Worker = Worker;
  return TC_OK;
}

tc_status_t openControlWorker(CoreContext *Ctx) {
  const char *Asked = std::getenv("TC_NET_DEVICES");
  // The user's own UCX_NET_DEVICES is theirs to keep.
  if (std::getenv("UCX_NET_DEVICES") || (Asked && std::string(Asked) == "all")) {
    Ctx->Control->TcpAll = Ctx->Control->TcpChosen = true;
  } else if (Asked && *Asked) {
    std::stringstream In(Asked);
    std::string Item;
    while (std::getline(In, Item, ','))
      if (!Item.empty())
        Ctx->Control->TcpDevices.push_back(Item);
    Ctx->Control->TcpChosen = true;
  }
  return reopen(Ctx);
}

tc_status_t useTcpInterface(CoreContext *Ctx, const std::string &Interface,
                            const std::string &For) {
  if (Ctx->EmbeddedWorker || Ctx->Control->TcpAll)
    return TC_OK;
  if (!Ctx->Control->TcpChosen) {
    // Nothing has used the worker yet: no listener, no endpoint.
    Ctx->Control->TcpChosen = true;
    if (Interface.empty())
      Ctx->Control->TcpAll = true;
    else
      Ctx->Control->TcpDevices.push_back(Interface);
    logInfo("UCX's TCP transport opens on " +
            (Interface.empty() ? std::string("every interface") : Interface) + " only, for " + For);
    return reopen(Ctx);
  }
  if (!Interface.empty() &&
      std::find(Ctx->Control->TcpDevices.begin(), Ctx->Control->TcpDevices.end(), Interface) !=
          Ctx->Control->TcpDevices.end())
    return TC_OK;
  std::string Open = joined(Ctx->Control->TcpDevices);
  logError("cannot " + For + ": it needs UCX's TCP transport on " +
           (Interface.empty() ? std::string("every interface") : Interface) +
           ", and this context opened it on " + (Open.empty() ? std::string("none") : Open) +
           " only (chosen by its first listen or connect); TC_NET_DEVICES=" +
           (Interface.empty() ? std::string("all") : (Open.empty() ? "" : Open + ",") + Interface) +
           " opens them from the start");
  return TC_ERR_INVALID_PARAM;
}

} // namespace twochains::rt
