//===- CodeContext.h - The code layer's part of a context -----------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_CODECONTEXT_H
#define TWOCHAINS_RUNTIME_CODE_CODECONTEXT_H

#include "image/ImageContext.h"
#include "package/PackageContext.h"
#include "wire/Deploy.h"

#include <atomic>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace twochains::rt {

/// A deployed package loaded off the progress path (code/Deploy.cpp): its
/// rieds' initialisers are the deployer's code and may take any time. The
/// loading thread fills it, then sets Done.
struct PackageLoad {
  std::atomic<bool> Done{false};
  tc_status_t Status = TC_OK;
  std::unique_ptr<tc_package> Package;
  std::string Error;
};
/// How a loading thread wakes its context, which may have ended meanwhile
/// (then Ctx is null).
struct LoadWaker {
  std::mutex M;
  CoreContext *Ctx = nullptr;
};

struct CodeContext {
  tc_mailbox_mode_t Mode = TC_MAILBOX_DEFAULT;
  /// Images shipped to us ahead of their frames (CodeTransfer.cpp), to
  /// check, install and answer on the control turn.
  struct PushedCode {
    ucp_ep_h Reply;
    uint64_t Package;
    uint32_t Element;
    tc_status_t Status;
    std::vector<uint8_t> Bytes;
    bool Received;
    /// An offer taken, which holds one of the MaxPendingCode places (a
    /// refused one only waits for its answer).
    bool Taken = false;
  };
  std::list<PushedCode> PushedCodes;
  struct CodeAnswer {
    ucp_ep_h From;
    uint64_t Package;
    uint32_t Element;
    tc_status_t Status;
  };
  std::vector<CodeAnswer> CodeAcks; // answers to our shipments

  /// Packages peers deploy here (code/Deploy.cpp), from offer to answer.
  struct IncomingDeployment {
    ucp_ep_h Reply = nullptr;
    uint64_t Id = 0;
    enum class Stage {
      OfferArriving,
      OfferArrived,
      FilesAsked,
      FilesArriving,
      FilesArrived,
      Loading, // its package loads on a thread of its own (Load)
      Answer
    } At = Stage::OfferArriving;
    tc_status_t Status = TC_OK;
    std::string Reason;       // a refusal's, for the sender
    std::vector<uint8_t> Body; // the offer's, then the files'
    std::string Manifest, Signature;
    std::vector<DeployFile> Files;
    std::vector<bool> Needed;
    uint64_t NeededBytes = 0;
    uint64_t StartedNs = 0, AskedNs = 0, InstallNs = 0;
    std::string Deployer; // who offered it (deployerOf, code/Deploy.cpp)
    /// Under the verified policy, unless a trusted signer signed it.
    PackageCode Code = PackageCode::Native;
    std::shared_ptr<PackageLoad> Load;
    std::string Dir; // the package's folder, while it loads
  };
  std::list<IncomingDeployment> Deployments;
  /// Injected frames of sandboxed images refused in packages run natively.
  LogLimit SandboxedImageLog;
  /// Where deployed packages' files are written (made at the first one,
  /// removed with the context), the lock that says its process lives
  /// (held open: a later process removes a folder whose lock it can take),
  /// and the packages, owned here.
  std::string DeployDir;
  int DeployDirLock = -1;
  unsigned DeployCount = 0;
  std::shared_ptr<LoadWaker> DeployWaker;
  std::vector<tc_package *> DeployedPackages;
  /// What each deployer (a job rank, else an address) holds here: its
  /// packages in use by name (a newer build of one replaces it), and the
  /// bytes of every build it installed (mapped libraries stay mapped).
  struct Deployer {
    std::vector<const tc_package *> Current;
    uint64_t Bytes = 0;
  };
  std::map<std::string, Deployer> Deployers;
  uint64_t DeployedBytes = 0;
  /// Answers to our deployments: the endpoint's, its header and body
  /// (bounded on arrival).
  struct DeployReply {
    ucp_ep_h From;
    DeployAnswer Header;
    std::vector<uint8_t> Body;
  };
  std::vector<DeployReply> DeployReplies;
  uint64_t NextDeployId = 0;
};

} // namespace twochains::rt

#endif
