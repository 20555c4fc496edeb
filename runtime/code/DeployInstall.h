//===- DeployInstall.h - A deployment's package installed here ------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_DEPLOYINSTALL_H
#define TWOCHAINS_RUNTIME_CODE_DEPLOYINSTALL_H

#include "code/CodeContext.h"

#include <string>

namespace twochains::rt {

/// The file of a package this process holds with this manifest hash, or
/// ""; *Ried: it is a ried's library.
std::string heldFile(CoreContext *Ctx, const std::string &Hash, bool *Ried = nullptr);
/// The identity the manifest's text names, or "" (the full check comes
/// once its files are in place).
std::string namedIdentity(const std::string &Manifest);
/// Who a deployment's limits are charged to: a job rank, else the address
/// (a reconnect keeps both).
std::string deployerOf(const tc_peer *Peer);
/// Whether the deployer may have a package of this name and size
/// installed; Reason if not. A newer build of a package it has replaces
/// that one, and takes no new place.
bool withinLimits(const CoreContext *Ctx, const std::string &Who, const std::string &Name,
                  uint64_t Bytes, std::string &Reason);
/// The build this process runs frames of with that identity (a package
/// loaded to send only runs none), or null.
const tc_package *loadedWithIdentity(CoreContext *Ctx, const std::string &Identity);
/// The bytes of the deployment's files, as its offer names them.
uint64_t filesBytes(const CodeContext::IncomingDeployment &D);
/// The deployment's package written and checked, and its loading begun
/// (D.Load, D.Dir); or nothing to load (another peer's deployment of the
/// same build came first), or why not (Reason), its folder removed.
tc_status_t beginInstall(CoreContext *Ctx, CodeContext::IncomingDeployment &D, std::string &Reason);
/// The loaded package added; or why not (Reason). Its folder removed
/// unless it was added.
tc_status_t finishInstall(CoreContext *Ctx, CodeContext::IncomingDeployment &D,
                          std::string &Reason);
/// Whether a deployment of the build Identity is loading.
bool loadingIdentity(const CoreContext *Ctx, const std::string &Identity);

} // namespace twochains::rt

#endif
