//===- CodeTransfer.h - Images larger than a slot travel once, ahead ------===//
#ifndef TWOCHAINS_RUNTIME_CODE_CODETRANSFER_H
#define TWOCHAINS_RUNTIME_CODE_CODETRANSFER_H

#include "code/CodeContext.h"

namespace twochains::rt {

/// Registers the handlers and housekeeping of code shipped ahead.
ucs_status_t setupCodeTransfer(CoreContext *Ctx);

/// Sender: an answer to a shipment (the CODE_ACK handler; tests drive it
/// with forged answers).
ucs_status_t onCodeAck(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                       size_t Length, const ucp_am_recv_param_t *Param);

/// Sender: starts shipping the element's image to the peer, without
/// waiting: TC_OK once the offer is on its way; TC_ERR_INVALID_PARAM while
/// another shipment to the peer is unanswered (one at a time).
tc_status_t startShipment(tc_peer *Peer, const tc_package *Pkg, uint32_t Element);
/// Sender: the answer to the peer's shipment in flight, never waited for:
/// TC_ERR_INCOMPLETE while there is none (a receiver with no place left is
/// asked again meanwhile), TC_OK once it installed the image, else why not
/// (its refusal, TC_ERR_IO when the time limit passed or the peer failed).
/// The shipment is over unless TC_ERR_INCOMPLETE. TC_ERR_INVALID_PARAM: none
/// in flight.
tc_status_t shipmentAnswer(tc_peer *Peer);

} // namespace twochains::rt

#endif
