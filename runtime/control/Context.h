//===- Context.h - The control layer's part of a context ------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTROL_CONTEXT_H
#define TWOCHAINS_RUNTIME_CONTROL_CONTEXT_H

#include "core/Context.h"

namespace twochains::rt {

struct ControlContext : CoreContext {
  /// Refusals of messages from endpoints no peer has: the first is logged.
  bool UnknownRefusalLogged = false;
  /// The control endpoints of peers this side released, the last few: a
  /// peer's last words (its final credit report) may land after its end,
  /// and are not refusals (refuseMessage).
  ucp_ep_h ReleasedEndpoints[16] = {};
  unsigned ReleasedNext = 0;
};

} // namespace twochains::rt

#endif
