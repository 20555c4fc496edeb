//===- Deploy.cpp - Packages deployed into running peers ------------------===//
//
// A sender deploys a package build its receiver does not hold (one it
// built after the receiver started, or one the receiver never had): its
// manifest, signature and file table first (wire/Deploy.h); the receiver
// asks for the files it lacks by hash; then those files. The receiver
// writes them into a private folder beside links to the files it holds,
// checks the whole package as tc_package_load does (every file against
// the manifest's hashes, every image by the image reader), links it on
// arrival (its rieds loaded, each jam's imports resolved by name in them,
// then in this process's libraries, tc_jam_* among them), and adds it:
// from then on Local and injected frames of that build run here. Frames
// name a build by its identity, a hash over every image and library, so
// element IDs of two builds never meet.
//
// Who may deploy is the receiver's code-trust policy (docs/security.md):
//
//   package  nobody: the offer is refused before its body is received;
//   job      any authenticated peer;
//   signed   a package whose manifest carries the signature of a key in
//            the receiver's trusted signers, whoever sends it (checked
//            before any file is asked for).
//
// Neither side waits for the other: the sender's deployment moves on as
// answers come (send/ drives it, frames of the package queued behind it),
// the receiver's on its control turn.
//
//===----------------------------------------------------------------------===//
#include "code/Deploy.h"

#include "base/Log.h"
#include "base/StatusString.h"
#include "base/Timeouts.h"
#include "code/DeployFolder.h"
#include "code/DeployInstall.h"
#include "code/Signed.h"
#include "control/ControlMessage.h"
#include "core/Events.h"
#include "core/Lock.h"
#include "core/Peers.h"
#include "core/Sleep.h"
#include "core/Stats.h"
#include "ucx/Status.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace twochains::rt;

namespace {

/// A deployment not over by then is given up, on both sides.
constexpr uint64_t DeployTimeoutNs = 60'000'000'000;
/// A receiver busy with others' deployments is offered again after 1 ms,
/// doubling to 100 ms.
constexpr uint64_t DeployRetryFirstNs = 1'000'000;
constexpr uint64_t DeployRetryMaxNs = 100'000'000;

using Incoming = CodeContext::IncomingDeployment;
using Stage = Incoming::Stage;

/// A peer's words or ours, fit to log and to send: printable ASCII, bounded.
std::string printable(const std::string &Text) {
  std::string Out = Text.substr(0, MaxDeployReason);
  for (char &C : Out)
    if (C < 0x20 || C > 0x7e)
      C = '?';
  return Out;
}

void answer(CoreContext *Ctx, tc_peer *Peer, uint64_t Id, tc_status_t St,
            const std::string &Reason) {
  DeployAnswer A = {DeployDoneMagic, St, Id, 0, 0};
  std::string Words = St == TC_OK ? "" : printable(Reason);
  sendMessage(Ctx, Peer, AmDeployAck, &A, sizeof A, Words.data(), Words.size());
}

/// The package name the manifest's text names, or "" (checked in full
/// once its files are in place).
std::string namedPackage(const std::string &Manifest) {
  size_t At = Manifest.find("\npackage ");
  if (At == std::string::npos)
    return "";
  size_t End = Manifest.find('\n', At + 9);
  return Manifest.substr(At + 9, End == std::string::npos ? std::string::npos : End - At - 9);
}

/// Whether the manifest's text names a ried built for Isa (checked in full
/// when the package loads; this spares asking for the files of one that
/// cannot).
static bool namesRied(const std::string &Manifest, const std::string &Isa) {
  for (size_t At = Manifest.find("\nried "); At != std::string::npos;
       At = Manifest.find("\nried ", At + 1)) {
    size_t End = Manifest.find('\n', At + 1);
    std::string Line = Manifest.substr(At + 1, End == std::string::npos ? End : End - At - 1);
    if (Line.find(" isa=" + Isa + " ") != std::string::npos)
      return true;
  }
  return false;
}

void noteInstalled(CoreContext *Ctx, tc_peer *Peer, const Incoming &D, bool Added);

/// The offer, taken: what the receiver lacks is asked for, or the package
/// is installed from what it holds.
void takeOffer(CoreContext *Ctx, tc_peer *Peer, Incoming &D) {
  DeployHeader H;
  std::memcpy(&H, D.Body.data(), sizeof H);
  std::string Why;
  // Refused here: counted and said once, then answered.
  auto Refuse = [&](tc_status_t St) {
    D.Status = St;
    D.At = Stage::Answer;
    noteInstalled(Ctx, Peer, D, /*Added=*/false);
  };
  if (parseDeployOffer(H, D.Body.data() + sizeof H, D.Body.size() - sizeof H, D.Manifest,
                       D.Signature, D.Files, Why) != TC_OK) {
    D.Reason = "its offer is out of bounds: " + Why;
    return Refuse(TC_ERR_BAD_OFFER);
  }
  D.Body.clear();
  D.Body.shrink_to_fit();
  if (Ctx->Package->CodeTrust == TC_CODE_TRUST_SIGNED &&
      checkSignature(Ctx, D.Manifest, D.Signature, D.Reason) != TC_OK)
    return Refuse(TC_ERR_UNTRUSTED);
  if (Ctx->Package->CodeTrust == TC_CODE_TRUST_VERIFIED) {
    // A trusted signer's package runs natively; anything else only as
    // sandboxed jams this receiver verifies (docs/verified.md).
    std::string Unsigned;
    bool Signed = !Ctx->Package->TrustedSigners.empty() &&
                  checkSignature(Ctx, D.Manifest, D.Signature, Unsigned) == TC_OK;
    D.Code = Signed ? PackageCode::Native : PackageCode::Sandboxed;
    if (!Signed && namesRied(D.Manifest, isaName(hostIsa()))) {
      D.Reason = "its package has rieds, native libraries the verified policy loads only "
                 "from a trusted signer's package";
      return Refuse(TC_ERR_UNTRUSTED);
    }
  }
  if (loadedWithIdentity(Ctx, namedIdentity(D.Manifest))) {
    D.At = Stage::Answer; // held already: nothing to send
    return;
  }
  uint64_t Bytes = filesBytes(D);
  if (!withinLimits(Ctx, D.Deployer, namedPackage(D.Manifest), Bytes, D.Reason)) {
    D.Status = TC_ERR_REFUSED;
    D.At = Stage::Answer;
    return;
  }
  D.Needed.assign(D.Files.size(), false);
  std::vector<uint8_t> Bitmap((D.Files.size() + 7) / 8);
  for (size_t I = 0; I < D.Files.size(); ++I)
    if (heldFile(Ctx, D.Files[I].Hash).empty()) {
      D.Needed[I] = true;
      D.NeededBytes += D.Files[I].Size;
      Bitmap[I / 8] |= uint8_t(1u << (I % 8));
    }
  if (!D.NeededBytes && std::none_of(D.Needed.begin(), D.Needed.end(), [](bool B) { return B; })) {
    D.At = Stage::FilesArrived;
    return;
  }
  DeployAnswer A = {DeployNeedMagic, TC_OK, D.Id, uint32_t(D.Files.size()), 0};
  sendMessage(Ctx, Peer, AmDeployAck, &A, sizeof A, Bitmap.data(), Bitmap.size());
  D.At = Stage::FilesAsked;
  D.AskedNs = nowNs();
}

/// A body has come, or not.
struct PendingBody {
  CoreContext *Ctx;
  ucp_ep_h Reply;
  uint64_t Id;
};

void onDeployBody(void *Arg, tc_status_t St) {
  auto *B = static_cast<PendingBody *>(Arg);
  for (Incoming &D : B->Ctx->Code->Deployments)
    if (D.Reply == B->Reply && D.Id == B->Id &&
        (D.At == Stage::OfferArriving || D.At == Stage::FilesArriving)) {
      if (St != TC_OK) {
        D.Status = TC_ERR_IO;
        D.Reason = "its bytes did not arrive";
        D.At = Stage::Answer;
      } else {
        D.At = D.At == Stage::OfferArriving ? Stage::OfferArrived : Stage::FilesArrived;
      }
      break;
    }
  delete B;
}

ucs_status_t onDeploy(void *Arg, const void *Header, size_t HeaderLength, void *Data, size_t Length,
                      const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  DeployHeader H;
  tc_peer *Peer = acceptMessage(Ctx, Header, HeaderLength, Param, H);
  if (!Peer)
    return UCS_OK;
  auto Refuse = [&](tc_status_t St, const std::string &Why) {
    countHeld(Ctx,
              St == TC_ERR_NO_CREDIT ? &tc_stats_t::shares_full : &tc_stats_t::deployments_refused);
    // Busy is no error: the sender offers again (code/Deploy.h).
    if (St == TC_ERR_NO_CREDIT)
      logDebug("no place now for a package deployed by " + Peer->Name + ": " + Why);
    else
      logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
                 "refused a package deployed by " + Peer->Name + ": " + Why);
    // Answered on the control turn; the body is never received.
    Incoming D;
    D.Reply = Param->reply_ep;
    D.Id = H.Id;
    D.Status = St;
    D.Reason = Why;
    D.At = Stage::Answer;
    Ctx->Code->Deployments.push_back(std::move(D));
    return UCS_OK;
  };
  if (H.Magic == DeployFilesMagic) {
    for (Incoming &D : Ctx->Code->Deployments) {
      if (D.Reply != Param->reply_ep || D.Id != H.Id || D.At != Stage::FilesAsked)
        continue;
      if (H.BodySize != D.NeededBytes || Length != D.NeededBytes) {
        D.Status = TC_ERR_BAD_OFFER;
        D.Reason = "files of " + std::to_string(Length) + " bytes, not the " +
                   std::to_string(D.NeededBytes) + " asked for";
        D.At = Stage::Answer;
        return UCS_OK;
      }
      D.At = Stage::FilesArriving;
      D.Body.resize(Length);
      receiveBody(Ctx, Data, Length, Param, D.Body.data(), onDeployBody,
                  new PendingBody{Ctx, D.Reply, D.Id});
      return UCS_OK;
    }
    refuseMessage(Ctx, Peer, "files of a deployment it was not asked for", Param);
    return UCS_OK;
  }
  if (H.Magic != DeployOfferMagic)
    return Refuse(TC_ERR_BAD_OFFER, "a malformed offer");
  if (Ctx->Package->CodeTrust == TC_CODE_TRUST_PACKAGE)
    return Refuse(TC_ERR_REFUSED,
                  "its code-trust policy is package: it runs only the packages it loaded "
                  "(TC_CODE_TRUST=job, signed or verified lets peers deploy)");
  constexpr uint64_t MaxOfferBody = MaxDeployManifest + MaxDeploySignature +
                                    uint64_t(MaxDeployFiles) * (74 + MaxDeployPath);
  if (H.BodySize != Length || Length > MaxOfferBody)
    return Refuse(TC_ERR_BAD_OFFER, "an offer of " + std::to_string(Length) + " bytes (at most " +
                                        std::to_string(MaxOfferBody) + ")");
  // Places are held by deployments under way; one answered already (a
  // refusal waiting for the control turn) holds none. One per deployer,
  // not per connection: more connections of one deployer take no more.
  std::string Who = deployerOf(Peer);
  size_t Mine = 0, UnderWay = 0;
  for (const Incoming &D : Ctx->Code->Deployments) {
    UnderWay += D.At != Stage::Answer;
    Mine += D.Deployer == Who && D.At != Stage::Answer;
  }
  if (Mine >= MaxDeploymentsPerPeer || UnderWay >= MaxDeploymentsArriving)
    return Refuse(TC_ERR_NO_CREDIT, "its deployer (" + Who + ") has a deployment here already, or " +
                                        std::to_string(MaxDeploymentsArriving) +
                                        " are on their way");
  Incoming D;
  D.Reply = Param->reply_ep;
  D.Id = H.Id;
  D.StartedNs = nowNs();
  D.Deployer = Who;
  D.Body.resize(sizeof H + Length);
  std::memcpy(D.Body.data(), &H, sizeof H);
  Ctx->Code->Deployments.push_back(std::move(D));
  Incoming &Kept = Ctx->Code->Deployments.back();
  receiveBody(Ctx, Data, Length, Param, Kept.Body.data() + sizeof H, onDeployBody,
              new PendingBody{Ctx, Kept.Reply, Kept.Id});
  return UCS_OK;
}

ucs_status_t onDeployAck(void *Arg, const void *Header, size_t HeaderLength, void *Data,
                         size_t Length, const ucp_am_recv_param_t *Param) {
  auto *Ctx = static_cast<CoreContext *>(Arg);
  DeployAnswer A;
  // Only an answer to the deployment in flight to that peer, once.
  if (!acceptAnswer(Ctx, Header, HeaderLength, Param, Ctx->Code->DeployReplies, A,
                    [&](const tc_peer *Peer, const DeployAnswer &A) {
                      return Peer->Code->Deploying.answers(A.Id) &&
                             (A.Magic == DeployNeedMagic || A.Magic == DeployDoneMagic) &&
                             !(Param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
                    }))
    return UCS_OK;
  size_t Expected = A.Magic == DeployNeedMagic ? (size_t(A.FileCount) + 7) / 8 : Length;
  if (Length != Expected || Length > std::max<size_t>(MaxDeployReason, MaxDeployFiles / 8)) {
    countHeld(Ctx, &tc_stats_t::messages_refused);
    return UCS_OK;
  }
  auto *Bytes = static_cast<const uint8_t *>(Data);
  Ctx->Code->DeployReplies.push_back(
      {Param->reply_ep, A, std::vector<uint8_t>(Bytes, Bytes + Length)});
  return UCS_OK;
}

/// A deployment at its end: counted and said if its package was added
/// (Added) or refused; one whose build another deployment added is
/// neither.
void noteInstalled(CoreContext *Ctx, tc_peer *Peer, const Incoming &D, bool Added) {
  std::string Who = Peer ? Peer->Name : std::string("a peer now gone");
  if (D.Status == TC_OK && !Added)
    return;
  if (D.Status == TC_OK) {
    countHeld(Ctx, &tc_stats_t::deployments_received);
    logMessage(TC_LOG_INFO, "deployed by " + Who + ": package from " +
                                std::to_string(D.Files.size()) + " files in " +
                                std::to_string((nowNs() - D.InstallNs) / 1000) + " us");
  } else {
    countHeld(Ctx, &tc_stats_t::deployments_refused);
    if (Peer)
      logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
                 "refused a package deployed by " + Who + ": " + D.Reason);
    else
      logError("refused a package deployed by " + Who + ": " + D.Reason);
  }
}

/// Housekeeping: each deployment here moved on as far as it goes.
void processDeployments(CoreContext *Ctx) {
  uint64_t Now = nowNs();
  for (auto It = Ctx->Code->Deployments.begin(); It != Ctx->Code->Deployments.end();) {
    Incoming &D = *It;
    tc_peer *Peer = peerOfEndpoint(Ctx, D.Reply);
    bool Arriving = D.At == Stage::OfferArriving || D.At == Stage::FilesArriving;
    // Gone: nobody to answer (a package loading is still added).
    if (!Arriving && D.At != Stage::Loading && (!Peer || Peer->Failed)) {
      It = Ctx->Code->Deployments.erase(It);
      continue;
    }
    if (D.At == Stage::OfferArrived)
      takeOffer(Ctx, Peer, D);
    if (D.At == Stage::FilesArrived) {
      // The same build loading for another deployer: this one waits for
      // it, and then finds it held.
      if (loadingIdentity(Ctx, namedIdentity(D.Manifest))) {
        ++It;
        continue;
      }
      D.InstallNs = nowNs();
      D.Status = beginInstall(Ctx, D, D.Reason);
      D.At = D.Load ? Stage::Loading : Stage::Answer;
      if (!D.Load)
        noteInstalled(Ctx, Peer, D, /*Added=*/false);
    }
    if (D.At == Stage::Loading) {
      if (!D.Load->Done.load(std::memory_order_acquire)) {
        ++It;
        continue;
      }
      size_t Before = Ctx->Code->DeployedPackages.size();
      D.Status = finishInstall(Ctx, D, D.Reason);
      D.At = Stage::Answer;
      noteInstalled(Ctx, Peer, D, Ctx->Code->DeployedPackages.size() > Before);
      if (!Peer || Peer->Failed) {
        It = Ctx->Code->Deployments.erase(It);
        continue;
      }
    }
    if (D.At == Stage::Answer) {
      answer(Ctx, Peer, D.Id, D.Status, D.Reason);
      It = Ctx->Code->Deployments.erase(It);
      continue;
    }
    // A sender that does not send the files it was asked for holds its
    // deployer's one place only as long as a rendezvous may take; it
    // hears why.
    if (D.At == Stage::FilesAsked && Now > D.AskedNs + Ctx->Control->BodyTimeoutNs) {
      countHeld(Ctx, &tc_stats_t::deployments_refused);
      logLimited(Peer->RefusedMessageLog, TC_LOG_ERROR,
                 "gave up a package deployed by " + Peer->Name +
                     ": the files it was asked for did not come in " +
                     std::to_string(Ctx->Control->BodyTimeoutNs / NsPerMs) + " ms");
      answer(Ctx, Peer, D.Id, TC_ERR_TIMED_OUT, "the files it asked for did not come in time");
      It = Ctx->Code->Deployments.erase(It);
      continue;
    }
    ++It;
  }
}

/// The control worker is the context's: a channelled peer's caller takes
/// the context too (CodeTransfer.cpp does the same).
struct ContextForDeploy {
  std::unique_lock<std::recursive_mutex> Held;
  explicit ContextForDeploy(tc_peer *Peer) {
    if (Peer->Channelled && ThreadRunningJamOf != Peer->Ctx) {
      lockContext(Peer->Ctx);
      Held = std::unique_lock<std::recursive_mutex>(Peer->Ctx->Lock, std::adopt_lock);
    }
  }
};

/// Sends a deployment message from bytes the peer keeps until UCX has
/// sent them (a send not waited for still reads them).
tc_status_t sendKept(tc_peer *Peer, const DeployHeader &H, std::vector<uint8_t> Body) {
  auto *B = reinterpret_cast<const uint8_t *>(&H);
  ucs_status_t St = sendKeptMessage(Peer, AmDeploy, std::vector<uint8_t>(B, B + sizeof H),
                                    std::move(Body), UCP_AM_SEND_FLAG_REPLY);
  if (St != UCS_OK) {
    logError(Peer->Name + ": cannot send a deployment: " + ucs_status_string(St));
    return statusOfUcs(St);
  }
  return TC_OK;
}

/// The deployment's end, kept for whoever waits on it (tc_deploy).
tc_status_t ended(tc_peer *Peer, const tc_package *Pkg, tc_status_t St) {
  Peer->Code->Deploying.ended(Pkg->Tag, St);
  return St;
}

void endDeployment(CoreContext *Ctx, tc_peer *Peer) {
  Peer->Code->Deploying.end();
  auto &Replies = Ctx->Code->DeployReplies;
  Replies.erase(std::remove_if(Replies.begin(), Replies.end(),
                               [&](const auto &R) { return R.From == Peer->Ep; }),
                Replies.end());
}

/// The files the receiver asked for (bit I of Bitmap: file I), back to back.
tc_status_t sendFiles(tc_peer *Peer, const std::vector<uint8_t> &Bitmap, uint32_t Count) {
  const tc_package *Pkg = Peer->Code->Deploying.package();
  if (Count != Pkg->Files.size())
    return TC_ERR_BAD_OFFER;
  std::vector<uint8_t> Body;
  uint32_t Sent = 0;
  for (uint32_t I = 0; I < Count; ++I) {
    if (!(Bitmap[I / 8] >> (I % 8) & 1))
      continue;
    std::vector<uint8_t> Bytes;
    std::string Why;
    std::string Path = Pkg->Dir + "/" + Pkg->Files[I].Path;
    if (!readFileBytes(Path, Bytes, Why, MaxDeployFileSize)) {
      logError("cannot deploy package '" + Pkg->Name + "': " + Path + ": " + Why);
      return TC_ERR_IO;
    }
    Body.insert(Body.end(), Bytes.begin(), Bytes.end());
    ++Sent;
  }
  DeployHeader H = {DeployFilesMagic, Sent, Peer->Code->Deploying.offerId(), 0, 0, Body.size()};
  count(Peer->Ctx, &tc_stats_t::deploy_bytes_sent, Body.size());
  return sendKept(Peer, H, std::move(Body));
}

} // namespace

namespace twochains::rt {

/// When a deployment next has work on the clock: here, a sender's time to
/// send the files it was asked for; there, an offer to make again after a
/// busy answer, or the deployment's time limit.
static uint64_t deploymentsDue(CoreContext *Ctx) {
  uint64_t Due = NoDueTime;
  for (const Incoming &D : Ctx->Code->Deployments)
    if (D.At == Stage::FilesAsked)
      Due = std::min(Due, D.AskedNs + Ctx->Control->BodyTimeoutNs + 1);
  forEachSendingPeer(Ctx, [&](const tc_peer *Peer) {
    if (Peer->Code->Deploying.active())
      Due = std::min(Due, Peer->Code->Deploying.dueNs());
  });
  return Due;
}

ucs_status_t setupDeploy(CoreContext *Ctx) {
  Ctx->Code->DeployWaker = std::make_shared<LoadWaker>();
  Ctx->Code->DeployWaker->Ctx = Ctx;
  addHousekeeping(Ctx, processDeployments);
  addDueTime(Ctx, deploymentsDue);
  return setControlHandlers(Ctx, {{AmDeploy, &onDeploy}, {AmDeployAck, &onDeployAck}});
}

void removeDeployments(CoreContext *Ctx) {
  // A package still loading is left to its thread, which no longer wakes
  // this context; its folder goes with the rest.
  if (Ctx->Code->DeployWaker) {
    std::lock_guard<std::mutex> Guard(Ctx->Code->DeployWaker->M);
    Ctx->Code->DeployWaker->Ctx = nullptr;
  }
  Ctx->Code->Deployments.clear();
  for (tc_package *P : Ctx->Code->DeployedPackages)
    delete P; // as tc_package_unload does: rieds stay loaded
  Ctx->Code->DeployedPackages.clear();
  Ctx->Code->Deployers.clear();
  // Loaded libraries stay mapped; their files are no longer needed.
  removeDeployFolder(Ctx);
}

void takeOfferedPackages(tc_peer *Peer, std::vector<uint64_t> Tags) {
  Peer->Code->RemotePackages = std::move(Tags);
}

void takeOfferedCode(tc_peer *Peer, uint32_t CodeTrust, tc_mailbox_mode_t Mode, uint32_t Isa) {
  Peer->Code->DeployCheck = CodeTrust != TC_CODE_TRUST_PACKAGE;
  Peer->Code->RemoteMode = Mode;
  Peer->Code->RemoteIsa = Isa;
}

tc_status_t deployRefusal(const tc_peer *Peer, const tc_package *Pkg) {
  return Peer->Code->Deploying.refusal(Pkg->Tag);
}

/// The offer of the deployment in flight (again, after a busy answer),
/// under a new number: an answer to an earlier one is then ignored.
static tc_status_t sendOffer(CoreContext *Ctx, tc_peer *Peer) {
  const tc_package *Pkg = Peer->Code->Deploying.package();
  std::vector<DeployFile> Files;
  for (const tc_package::File &F : Pkg->Files) {
    struct stat St;
    std::string Full = Pkg->Dir + "/" + F.Path;
    if (stat(Full.c_str(), &St) != 0) {
      logError("cannot deploy package '" + Pkg->Name + "': " + Full + ": " + std::strerror(errno));
      return TC_ERR_IO;
    }
    Files.push_back({F.Path, F.Hash, uint64_t(St.st_size)});
  }
  std::vector<uint8_t> Body = encodeDeployOffer(Pkg->ManifestText, Pkg->SignatureText, Files);
  Peer->Code->Deploying.offered(++Ctx->Code->NextDeployId);
  DeployHeader H = {DeployOfferMagic,
                    uint32_t(Files.size()),
                    Peer->Code->Deploying.offerId(),
                    uint32_t(Pkg->ManifestText.size()),
                    uint32_t(Pkg->SignatureText.size()),
                    Body.size()};
  return sendKept(Peer, H, std::move(Body));
}

tc_status_t startDeployment(tc_peer *Peer, const tc_package *Pkg) {
  auto *Ctx = Peer->Ctx;
  ContextForDeploy Context(Peer);
  if (Peer->Code->Deploying.active())
    return TC_ERR_INVALID_PARAM;
  if (Peer->Failed || !Peer->Ep)
    return TC_ERR_IO;
  if (Pkg->Dir.empty() || Pkg->Files.empty()) {
    logError("package '" + Pkg->Name + "' cannot be deployed: it was not loaded from a folder");
    return TC_ERR_INVALID_PARAM;
  }
  Peer->Code->Deploying.start(Pkg, nowNs() + DeployTimeoutNs);
  tc_status_t St = sendOffer(Ctx, Peer);
  if (St != TC_OK)
    endDeployment(Ctx, Peer);
  return St;
}

tc_status_t advanceDeployment(tc_peer *Peer) {
  auto *Ctx = Peer->Ctx;
  ContextForDeploy Context(Peer);
  const tc_package *Pkg = Peer->Code->Deploying.package();
  if (!Pkg)
    return TC_ERR_INVALID_PARAM;
  for (size_t I = 0; I < Ctx->Code->DeployReplies.size(); ++I) {
    CodeContext::DeployReply R = Ctx->Code->DeployReplies[I];
    if (R.From != Peer->Ep)
      continue;
    Ctx->Code->DeployReplies.erase(Ctx->Code->DeployReplies.begin() + I);
    if (R.Header.Magic == DeployNeedMagic) {
      if (!Peer->Code->Deploying.takeFilesAsk())
        break; // asked twice: the answer decides
      if (tc_status_t St = sendFiles(Peer, R.Body, R.Header.FileCount); St != TC_OK) {
        endDeployment(Ctx, Peer);
        return ended(Peer, Pkg, St);
      }
      break;
    }
    tc_status_t St = tc_status_t(R.Header.Status);
    // What tc_deploy's header lists, and busy; anything else the peer
    // says is its own failure.
    switch (St) {
    case TC_OK: case TC_ERR_NO_CREDIT: case TC_ERR_REFUSED: case TC_ERR_UNTRUSTED:
    case TC_ERR_MISSING_IMPORT: case TC_ERR_PACKAGE_MISMATCH: case TC_ERR_BAD_MANIFEST:
    case TC_ERR_HASH_MISMATCH: case TC_ERR_BAD_IMAGE: case TC_ERR_BAD_OFFER:
    case TC_ERR_TIMED_OUT:
      break;
    default:
      St = TC_ERR_IO;
    }
    if (St == TC_ERR_NO_CREDIT) {
      // Busy: every place there holds a deployment now, as when every
      // rank of a job deploys at once. Offered again after a while,
      // within the deployment's time; nothing is dropped meanwhile.
      uint64_t Backoff = Peer->Code->Deploying.busy(nowNs(), DeployRetryFirstNs, DeployRetryMaxNs);
      logDebug(Peer->Name + " has no place for package '" + Pkg->Name +
               "' now: offered again in " + std::to_string(Backoff / 1000) + " us");
      break;
    }
    endDeployment(Ctx, Peer);
    if (St == TC_OK) {
      Peer->Code->RemotePackages.push_back(Pkg->Tag);
      count(Ctx, &tc_stats_t::deployments_sent);
      return ended(Peer, Pkg, TC_OK);
    }
    std::string Reason = printable(std::string(R.Body.begin(), R.Body.end()));
    logError(Peer->Name + " refused package '" + Pkg->Name + "' (" + Pkg->Identity.substr(0, 16) +
             "...): " + (Reason.empty() ? "" : Reason + " ") + "(" + statusString(St) + ")");
    if (St != TC_ERR_NO_CREDIT)
      Peer->Code->Deploying.refusedForGood(Pkg->Tag, St);
    postEvent(Ctx, TC_EVENT_DEPLOY_REFUSED, Peer->Number, St);
    return ended(Peer, Pkg, St);
  }
  if (Peer->Failed || !Peer->Ep) {
    endDeployment(Ctx, Peer);
    return ended(Peer, Pkg, TC_ERR_IO);
  }
  uint64_t Now = nowNs();
  if (Peer->Code->Deploying.retryDue(Now)) {
    if (tc_status_t St = sendOffer(Ctx, Peer); St != TC_OK) {
      endDeployment(Ctx, Peer);
      return ended(Peer, Pkg, St);
    }
  }
  if (Peer->Code->Deploying.overdue(Now)) {
    endDeployment(Ctx, Peer);
    logError(Peer->Name + " did not take package '" + Pkg->Name + "' in " +
             std::to_string(DeployTimeoutNs / NsPerS) + " s");
    return ended(Peer, Pkg, TC_ERR_TIMED_OUT);
  }
  return TC_ERR_INCOMPLETE;
}

} // namespace twochains::rt
