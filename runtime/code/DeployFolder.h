//===- DeployFolder.h - Where deployed packages' files live ---------------===//
//
// A context writes the packages peers deploy into a private folder under
// $TMPDIR (twochains-deploy-XXXXXX), made at the first deployment. Each
// package has a folder of its own there, removed as soon as it is not
// needed: the deployment was refused or abandoned, or a newer build
// replaced it (its libraries stay mapped; the files are not read again).
// The whole folder goes with the context. A process that dies keeps no
// context to remove it: the folder holds a lock file, locked while its
// process lives, and the next process that makes a deploy folder removes
// every folder of its user whose lock it can take. A folder is made under
// another name and renamed once locked, so that no sweep finds it
// unlocked while it is being made.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_DEPLOYFOLDER_H
#define TWOCHAINS_RUNTIME_CODE_DEPLOYFOLDER_H

#include "code/CodeContext.h"

#include <string>

namespace twochains::rt {

/// The lock file's name inside a deploy folder.
inline constexpr const char *DeployFolderLock = ".owner";

/// Ctx->Code->DeployDir, made and locked if it is not yet (folders left by dead
/// processes removed first). False, and Reason, if it cannot be.
bool ensureDeployFolder(CoreContext *Ctx, std::string &Reason);
/// The folder and everything in it; its lock released.
void removeDeployFolder(CoreContext *Ctx);
/// A new deploy folder in Parent, its lock file locked (LockFd, held while
/// the folder is the caller's); folders left by dead processes removed
/// first. False, logged, if it cannot be made.
bool makeDeployFolder(const std::string &Parent, std::string &Dir, int &LockFd);
/// Removes Path and everything under it (no link is followed).
void removeTree(const std::string &Path);
/// Removes the deploy folders in Parent that this user owns and whose
/// process has gone (their lock can be taken). Returns how many.
unsigned removeDeadDeployFolders(const std::string &Parent);

} // namespace twochains::rt

#endif
