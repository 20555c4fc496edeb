//===- CodeTransfer.h - Images larger than a slot travel once, ahead ------===//
#ifndef TWOCHAINS_RUNTIME_CODE_CODETRANSFER_H
#define TWOCHAINS_RUNTIME_CODE_CODETRANSFER_H

#include "code/Context.h"

namespace twochains::rt {

/// Registers the handlers and housekeeping of code shipped ahead.
ucs_status_t setupCodeTransfer(CodeContext *Ctx);

/// Sender: an answer to a shipment (the CODE_ACK handler; tests drive it
/// with forged answers).
ucs_status_t onCodeAck(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                       size_t Length, const ucp_am_recv_param_t *Param);

/// Sender: ships the element's image to the peer and waits (bounded) until
/// the receiver has installed it.
tc_status_t shipCode(tc_peer *Peer, const tc_package *Pkg, uint32_t Element);

} // namespace twochains::rt

#endif
