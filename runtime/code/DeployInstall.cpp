//===- DeployInstall.cpp - A deployment's package installed here ----------===//
//
// The receiver's side of a deployment once its offer is taken: what each
// deployer may have installed (packages and bytes), the files written
// into the private folder beside copies of the ones held, the package
// checked as tc_package_load does, loaded on a thread of its own (its
// rieds' initialisers may take any time) and added (Deploy.cpp drives it).
//
//===----------------------------------------------------------------------===//
#include "code/DeployInstall.h"

#include "base/Log.h"
#include "base/StatusString.h"
#include "code/DeployFolder.h"
#include "code/Signed.h"
#include "core/Lock.h"
#include "core/Sleep.h"
#include "core/Stats.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace twochains::rt {

using Incoming = CodeContext::IncomingDeployment;
using Stage = Incoming::Stage;

std::string heldFile(CoreContext *Ctx, const std::string &Hash, bool *Ried) {
  for (const tc_package *P : Ctx->Package->Packages)
    for (const tc_package::File &F : P->Files)
      if (F.Hash == Hash && !P->Dir.empty()) {
        std::string Full = P->Dir + "/" + F.Path;
        if (access(Full.c_str(), R_OK) == 0) {
          if (Ried)
            *Ried = F.Ried;
          return Full;
        }
      }
  return "";
}

std::string namedIdentity(const std::string &Manifest) {
  size_t At = Manifest.find("\nidentity ");
  if (At == std::string::npos || Manifest.size() - At < 10 + PackageIdentitySize)
    return "";
  return Manifest.substr(At + 10, PackageIdentitySize);
}

std::string deployerOf(const tc_peer *Peer) {
  return Peer->JobRank != NoJobRank ? "rank " + std::to_string(Peer->JobRank)
                                    : "address " + Peer->Address;
}

static size_t limitFromEnv(const char *Name, size_t Default) {
  const char *Env = std::getenv(Name);
  if (!Env || !*Env)
    return Default;
  char *End = nullptr;
  unsigned long long V = std::strtoull(Env, &End, 10);
  return End && !*End && V < Default ? size_t(V) : Default;
}

static size_t packagesPerDeployer() {
  static const size_t Limit =
      limitFromEnv("TC_DEPLOY_PEER_PACKAGES", MaxDeployedPackagesPerPeer);
  return Limit;
}

static uint64_t bytesPerDeployer() {
  static const uint64_t Limit = limitFromEnv("TC_DEPLOY_PEER_BYTES", MaxDeployedBytesPerPeer);
  return Limit;
}

static size_t packagesInUse(const CoreContext *Ctx) {
  size_t N = 0;
  for (const auto &[Who, D] : Ctx->Code->Deployers)
    N += D.Current.size();
  return N;
}

bool withinLimits(const CoreContext *Ctx, const std::string &Who, const std::string &Name,
                  uint64_t Bytes, std::string &Reason) {
  auto It = Ctx->Code->Deployers.find(Who);
  const CodeContext::Deployer *D = It == Ctx->Code->Deployers.end() ? nullptr : &It->second;
  bool Replaces = D && std::any_of(D->Current.begin(), D->Current.end(),
                                   [&](const tc_package *P) { return P->Name == Name; });
  uint64_t Had = D ? D->Bytes : 0;
  if (!Replaces && D && D->Current.size() >= packagesPerDeployer())
    Reason = "its deployer (" + Who + ") has " + std::to_string(D->Current.size()) +
             " packages here, its limit";
  else if (!Replaces && packagesInUse(Ctx) >= MaxDeployedPackages)
    Reason = "it runs " + std::to_string(MaxDeployedPackages) + " deployed packages, its limit";
  else if (Had + Bytes > bytesPerDeployer())
    Reason = "its deployer (" + Who + ") has had " + std::to_string(Had) +
             " bytes installed here; " + std::to_string(Bytes) + " more pass its limit of " +
             std::to_string(bytesPerDeployer());
  else if (Ctx->Code->DeployedBytes + Bytes > MaxDeployedBytes)
    Reason = "its deployed packages hold " + std::to_string(Ctx->Code->DeployedBytes) + " bytes; " +
             std::to_string(Bytes) + " more pass its limit";
  else
    return true;
  return false;
}

/// The package installed for deployer Who: charged to it, and the build
/// of the same name it had before, if any, replaced (its files removed;
/// it stays loaded, since frames of others may still name it).
static void charge(CoreContext *Ctx, const std::string &Who, const tc_package *P, uint64_t Bytes) {
  CodeContext::Deployer &D = Ctx->Code->Deployers[Who];
  for (auto It = D.Current.begin(); It != D.Current.end(); ++It)
    if ((*It)->Name == P->Name) {
      removeTree((*It)->Dir);
      D.Current.erase(It);
      break;
    }
  D.Current.push_back(P);
  D.Bytes += Bytes;
  Ctx->Code->DeployedBytes += Bytes;
}

/// The build this process runs frames of with that identity (a package
/// loaded to send only runs none), or null.
const tc_package *loadedWithIdentity(CoreContext *Ctx, const std::string &Identity) {
  for (const tc_package *P : Ctx->Package->Packages)
    if ((P->Roles & TC_PACKAGE_RECEIVER) && P->Identity == Identity)
      return P;
  return nullptr;
}

static bool makeParents(const std::string &Root, const std::string &Rel) {
  for (size_t Slash = Rel.find('/'); Slash != std::string::npos; Slash = Rel.find('/', Slash + 1)) {
    std::string Dir = Root + "/" + Rel.substr(0, Slash);
    if (mkdir(Dir.c_str(), 0700) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

static bool writeFile(const std::string &Path, const void *Data, size_t Size) {
  FILE *F = std::fopen(Path.c_str(), "wbx");
  if (!F)
    return false;
  bool Ok = std::fwrite(Data, 1, Size, F) == Size;
  return std::fclose(F) == 0 && Ok;
}

/// A copy of the file From at To (a new inode: loaded on its own).
static bool copyFile(const std::string &From, const std::string &To) {
  std::vector<uint8_t> Bytes;
  std::string Why;
  return readFileBytes(From, Bytes, Why, MaxDeployFileSize) &&
         writeFile(To, Bytes.data(), Bytes.size());
}

uint64_t filesBytes(const Incoming &D) {
  uint64_t Bytes = 0;
  for (const DeployFile &F : D.Files)
    Bytes += F.Size;
  return Bytes;
}

/// Message, with the private folder named as "<package>": the sender
/// knows the package, and learns nothing of the receiver's file system.
static std::string withoutFolder(std::string Message, const std::string &Dir) {
  for (size_t At; (At = Message.find(Dir)) != std::string::npos;)
    Message.replace(At, Dir.size(), "<package>");
  return Message;
}

/// The deployment's package, checked, linked and added. Reason: why not.
static tc_status_t installInto(CoreContext *Ctx, Incoming &D, const std::string &Dir,
                               std::string &Reason);

tc_status_t beginInstall(CoreContext *Ctx, Incoming &D, std::string &Reason) {
  if (!ensureDeployFolder(Ctx, Reason))
    return TC_ERR_IO;
  std::string Dir = Ctx->Code->DeployDir + "/" + std::to_string(++Ctx->Code->DeployCount);
  if (mkdir(Dir.c_str(), 0700) != 0) {
    Reason = "it cannot make a folder for the package";
    return TC_ERR_IO;
  }
  tc_status_t St = installInto(Ctx, D, Dir, Reason);
  if (St != TC_OK || !D.Load)
    removeTree(Dir);
  else
    D.Dir = Dir;
  return St;
}

tc_status_t finishInstall(CoreContext *Ctx, Incoming &D, std::string &Reason) {
  PackageLoad &L = *D.Load;
  tc_status_t St = L.Status;
  if (St != TC_OK) {
    Reason = withoutFolder(L.Error, D.Dir);
  } else if (!loadedWithIdentity(Ctx, L.Package->Identity)) {
    uint64_t Bytes = filesBytes(D);
    // Checked before the load; another deployment may have come since.
    if (!withinLimits(Ctx, D.Deployer, L.Package->Name, Bytes, Reason)) {
      St = TC_ERR_REFUSED;
    } else {
      tc_package *P = L.Package.release();
      P->Deployed = true;
      charge(Ctx, D.Deployer, P, Bytes);
      Ctx->Package->Packages.push_back(P);
      Ctx->Code->DeployedPackages.push_back(P);
      D.Dir.clear();
    }
  }
  if (!D.Dir.empty())
    removeTree(D.Dir);
  D.Load.reset();
  return St;
}

bool loadingIdentity(const CoreContext *Ctx, const std::string &Identity) {
  for (const Incoming &D : Ctx->Code->Deployments)
    if (D.At == Stage::Loading && namedIdentity(D.Manifest) == Identity)
      return true;
  return false;
}

/// Loads the package at ManifestPath into Load on a thread of its own,
/// then wakes the context if it is still there.
static void startLoad(CoreContext *Ctx, const std::shared_ptr<PackageLoad> &Load,
                      const std::string &ManifestPath, PackageCode Code) {
  std::shared_ptr<LoadWaker> Waker = Ctx->Code->DeployWaker;
  std::thread([Load, ManifestPath, Waker, Code] {
    Load->Status = loadPackage(ManifestPath, nullptr, TC_PACKAGE_RECEIVER | TC_PACKAGE_SENDER,
                               nullptr, Load->Package, Load->Error, Code);
    Load->Done.store(true, std::memory_order_release);
    std::lock_guard<std::mutex> Guard(Waker->M);
    if (Waker->Ctx)
      wakeContext(Waker->Ctx);
  }).detach();
}

static tc_status_t installInto(CoreContext *Ctx, Incoming &D, const std::string &Dir,
                               std::string &Reason) {
  uint64_t Bytes = filesBytes(D);
  size_t At = 0;
  for (size_t I = 0; I < D.Files.size(); ++I) {
    const DeployFile &F = D.Files[I];
    std::string Path = Dir + "/" + F.Path;
    if (!makeParents(Dir, F.Path)) {
      Reason = "it cannot make the folder of " + F.Path;
      return TC_ERR_IO;
    }
    if (D.Needed[I]) {
      bool Ok = writeFile(Path, D.Body.data() + At, F.Size);
      At += F.Size;
      if (!Ok) {
        Reason = "it cannot write " + F.Path;
        return TC_ERR_IO;
      }
      continue;
    }
    // Held. A ried: the same file, so a ried the receiver loaded already
    // is that ried (the loader finds it by inode), state and all. Any
    // other file is copied: a Local-Function library loaded to send only
    // has its outside symbols bound to nothing, and must be loaded anew.
    bool Ried = false;
    std::string Held = heldFile(Ctx, F.Hash, &Ried);
    if (Held.empty() || !(Ried ? symlink(Held.c_str(), Path.c_str()) == 0 : copyFile(Held, Path))) {
      Reason = "it no longer holds " + F.Path;
      return TC_ERR_IO;
    }
  }
  std::string ManifestPath = Dir + "/manifest.tcm";
  if (!writeFile(ManifestPath, D.Manifest.data(), D.Manifest.size())) {
    Reason = "it cannot write the manifest";
    return TC_ERR_IO;
  }
  // The whole package as tc_package_load checks it: every file against the
  // manifest's hashes (the signature covered those), every image read.
  ManifestData M;
  std::string Error;
  if (tc_status_t St = statusOf(readManifestFile(ManifestPath, M, Error)); St != TC_OK) {
    Reason = withoutFolder(Error, Dir);
    return St;
  }
  if (manifestIdentity(M) != M.Identity) {
    Reason = "package '" + M.Package + "': its identity line is not the hash of its contents";
    return TC_ERR_BAD_MANIFEST;
  }
  if (loadedWithIdentity(Ctx, M.Identity))
    return TC_OK; // deployed meanwhile by another peer
  // Checked at the offer too; another deployment may have come since.
  if (!withinLimits(Ctx, D.Deployer, M.Package, Bytes, Reason))
    return TC_ERR_REFUSED;
  std::string Interface = packageInterface(M);
  for (const tc_package *P : Ctx->Package->Packages)
    if (P->Name == M.Package && P->Interface != Interface) {
      Reason = "package '" + M.Package + "': its rieds differ from those of the build " +
               P->Identity.substr(0, 16) + "... this receiver holds: deploy a build that " +
               "changes only jams, or another package";
      return TC_ERR_PACKAGE_MISMATCH;
    }
  // Its rieds' initialisers run as it loads: the deployer's code, which
  // may take any time, and so not on the context's progress. (A sandboxed
  // load runs none; its verifying may take a while too.)
  D.Load = std::make_shared<PackageLoad>();
  startLoad(Ctx, D.Load, ManifestPath, D.Code);
  return TC_OK;
}

} // namespace twochains::rt
