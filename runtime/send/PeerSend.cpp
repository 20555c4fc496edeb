//===- PeerSend.cpp - The send part of a peer: sized, shed, moved ---------===//
#include "send/PeerSend.h"
#include "send/Bundle.h"

#include "core/CoreContext.h"
#include "core/Peer.h"
#include "path/PeerPath.h"
#include "wire/Frame.h"

namespace twochains::rt {

void takeOfferedSendSide(tc_peer *Peer, uint32_t Slots, uint32_t SlotSize, bool SlotCopies,
                         uint32_t PayloadAheadBytes, bool PayloadsByRma) {
  PeerSend &S = *Peer->Sending;
  S.Staging.assign(SlotSize, 0);
  S.FrameStride = size_t(SlotSize) + FrameLine;
  if (SlotCopies)
    S.SlotFrames.assign(size_t(Slots) * S.FrameStride, 0);
  S.PayloadAheadBytes = PayloadAheadBytes;
  // A connection of shared memory makes its RMA endpoint at its first
  // payload (path/Mailbox.h, dataEndpoint).
  S.PayloadsByRma = PayloadsByRma && Peer->Path == PathRma &&
                    (Peer->DataEp || !Peer->Tx->WorkerAddress.empty()) && !Peer->Ctx->Channels;
  S.Aggregate = aggregationByDefault();
}

void shedSendSide(tc_peer *Peer) {
  PeerSend &S = *Peer->Sending;
  std::vector<uint8_t>().swap(S.SlotFrames);
  std::vector<uint8_t>().swap(S.Staging);
  S.Bundle = OpenBundle{};
  S.Sends.clear();
  S.Queued.clear();
}

size_t dropQueuedFrames(tc_peer *Handle) {
  size_t Dropped = Handle->Sending->Queued.size();
  Handle->Sending->Queued.clear();
  return Dropped;
}

void moveQueuedFrames(tc_peer *Handle, tc_peer *Connection) {
  Handle->Sending->Queued.moveTo(Connection->Sending->Queued);
}

} // namespace twochains::rt
