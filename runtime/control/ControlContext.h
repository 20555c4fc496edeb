//===- ControlContext.h - The control layer's part of a context -----------===//
#ifndef TWOCHAINS_RUNTIME_CONTROL_CONTROLCONTEXT_H
#define TWOCHAINS_RUNTIME_CONTROL_CONTROLCONTEXT_H

#include "base/Log.h"
#include "base/Timeouts.h"
#include "core/CoreContext.h"

#include <list>
#include <string>
#include <vector>

namespace twochains::rt {

struct ControlContext {
  /// Bodies UCX fetches by rendezvous (receiveBody) until they arrive: one
  /// that has not within BodyTimeoutNs is cancelled and its peer cut off.
  struct BodyInFlight {
    void *Request;
    ucp_ep_h From;
    uint64_t StartedNs;
    ucp_worker_h Worker; // the worker it came on
  };
  std::list<BodyInFlight> BodiesInFlight;
  /// RendezvousTimeoutNs; unit tests shorten it.
  uint64_t BodyTimeoutNs = RendezvousTimeoutNs;
  /// A peer broke the protocol (cutOffPeer): told to end it at once
  /// (wireup subscribes: failed, its control endpoint closed, so that UCX
  /// ends what it still does for it).
  Subscribers<CoreContext *, tc_peer *> CutOff;
  /// Peers cut off: a peer can reconnect and be cut off again.
  LogLimit CutOffLog;
  /// Refusals of messages from endpoints no peer has: the first is logged.
  bool UnknownRefusalLogged = false;
  /// The control endpoints of peers this side released, the last few: a
  /// peer's last words (its final credit report) may land after its end,
  /// and are not refusals (refuseMessage).
  ucp_ep_h ReleasedEndpoints[16] = {};
  unsigned ReleasedNext = 0;
  /// Every handler registered on the control worker, to register again
  /// when it is opened anew (control/ControlWorker.h).
  std::vector<std::pair<unsigned, ucp_am_recv_callback_t>> Handlers;
  /// The network interfaces UCX's TCP transport opens on in the control
  /// context: TcpAll (every one: UCX_NET_DEVICES or TC_NET_DEVICES=all, or
  /// a listener on any address), else TcpDevices once TcpChosen (by
  /// TC_NET_DEVICES, or the first listen or connect), none before.
  bool TcpAll = false, TcpChosen = false;
  std::vector<std::string> TcpDevices;
};

} // namespace twochains::rt

#endif
