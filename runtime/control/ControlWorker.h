//===- ControlWorker.h - The control context, on the interfaces asked for -===//
//
// UCX's TCP transport listens on every interface it opens, and its port
// writes wherever any client says (docs/security.md, "Risks that
// remain"). The control context therefore opens TCP only on the
// interfaces this process listens on or connects through: none until the
// first tc_listen or tc_connect, which open the control context anew on
// theirs (nothing uses it before). TC_NET_DEVICES sets the list up front.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CONTROL_CONTROLWORKER_H
#define TWOCHAINS_RUNTIME_CONTROL_CONTROLWORKER_H

#include "control/ControlContext.h"

#include <string>

namespace twochains::rt {

/// Registers one control-message handler on Worker, called with Ctx.
ucs_status_t setHandler(ucp_worker_h Worker, unsigned Id, ucp_am_recv_callback_t Callback,
                        CoreContext *Ctx);
/// Opens this context's own control context and worker (not for an
/// application's worker), with TCP on the interfaces TC_NET_DEVICES names
/// or none yet.
tc_status_t openControlWorker(CoreContext *Ctx);
/// Makes sure UCX's TCP transport is open on Interface (empty: on every
/// interface) before the control worker listens or connects there, For
/// saying what for. The first call chooses, reopening the unused worker;
/// later ones must ask for what is open (TC_NET_DEVICES to open more).
tc_status_t useTcpInterface(CoreContext *Ctx, const std::string &Interface, const std::string &For);

} // namespace twochains::rt

#endif
