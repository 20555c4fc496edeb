//===- Offer.cpp - A handshake's offer: made from the parts, taken by them ===//
//
// An offer says what each layer needs of the other side's: the frame
// path's ring, credit line and doorbell (path/Mailbox.cpp), how the side
// runs code and which packages it holds (code/), the payloads it takes
// ahead of frames (send/), and the job it is a rank of. Made here from
// each part, and taken by each part from the other side's checked offer.
//
//===----------------------------------------------------------------------===//
#include "wireup/Wireup.h"

#include "code/Deploy.h"
#include "path/Mailbox.h"
#include "receive/ReceiveContext.h"
#include "send/PeerSend.h"

#include <cstring>

namespace twochains::rt {

tc_status_t makeOffer(CoreContext *Ctx, tc_peer *Peer, Offer &O, std::vector<uint8_t> &Body) {
  O = {};
  O.Magic = HandshakeMagic;
  O.Version = HandshakeVersion;
  O.MailboxMode = uint32_t(Ctx->Code->Mode);
  O.CodeTrust = uint32_t(Ctx->Package->CodeTrust);
  O.Isa = hostIsa();
  O.PayloadAheadBytes = Ctx->PayloadAheadBytes;
  O.Job = Ctx->Wireup->Job.Id;
  O.JobRank = Ctx->Wireup->Job.Id ? Ctx->Wireup->Job.Rank : NoJobRank;
  O.ProofFor = NoJobRank; // and no proof: the handshake signs (Handshake.cpp)
  Body.clear();
  if (tc_status_t St = offerLocalSide(Ctx, Peer, O, Body); St != TC_OK)
    return St;
  if (Peer->Path == PathRma && Ctx->Receive->PayloadsByRma)
    O.Flags |= OfferPayloadsByRma;
  // The packages go last, after what the path needs; both paths carry them.
  // Each name once: a build deployed beside the one loaded shares its
  // interface, and a sender that asks to deploy it again is told it is held.
  std::vector<std::pair<std::string, std::string>> Packages;
  std::vector<std::string> Interfaces;
  std::vector<bool> Receives;
  for (const tc_package *P : Ctx->Package->Packages) {
    bool Named = false;
    for (const auto &Listed : Packages)
      Named |= Listed.first == P->Name;
    if (!Named && Packages.size() < MaxOfferPackages && P->Name.size() <= MaxPackageNameSize &&
        P->Identity.size() == PackageIdentitySize) {
      Packages.emplace_back(P->Name, P->Identity);
      Interfaces.push_back(P->Interface);
      Receives.push_back(P->Roles & TC_PACKAGE_RECEIVER);
    }
  }
  size_t Before = Body.size();
  appendOfferPackages(Body, Packages, Interfaces, Receives);
  O.PackagesSize = uint32_t(Body.size() - Before);
  return TC_OK;
}

tc_status_t acceptOffer(CoreContext *Ctx, tc_peer *Peer, const ParsedOffer &Parsed,
                        std::string &Why) {
  const Offer &O = Parsed.Header;
  if (tc_status_t St = attachRemoteSide(Ctx, Peer, Parsed, Why); St != TC_OK)
    return St;
  takeOfferedCode(Peer, O.CodeTrust, tc_mailbox_mode_t(O.MailboxMode), O.Isa);
  // Frames stored straight into the ring stay there until credited: a
  // resend reads them from it. Else a cached frame the receiver reports
  // missing is sent again from its slot's copy.
  bool Puts = Peer->Path == PathRma && !Peer->Tx->RingDirect;
  // Payloads go on the RMA endpoint, as offered, unless the peer is this
  // context itself: its two endpoints to its own worker are one to UCX,
  // which would name the sending half as the payload's sender.
  bool ToSelf = Parsed.WorkerAddress && O.WorkerAddressSize == Ctx->WorkerAddressSize &&
                !std::memcmp(Parsed.WorkerAddress, Ctx->WorkerAddress, Ctx->WorkerAddressSize);
  takeOfferedSendSide(Peer, O.Slots, O.SlotSize,
                      (Peer->Code->RemoteMode == TC_MAILBOX_CODE_CACHE && !Peer->Tx->RingDirect) ||
                          Puts,
                      O.PayloadAheadBytes, (O.Flags & OfferPayloadsByRma) && !ToSelf);
  return TC_OK;
}

} // namespace twochains::rt
