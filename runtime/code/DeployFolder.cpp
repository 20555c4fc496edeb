//===- DeployFolder.cpp - Where deployed packages' files live -------------===//
#include "code/DeployFolder.h"

#include "base/Log.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace twochains::rt {

static constexpr const char *FolderPrefix = "twochains-deploy-";
/// A folder being made has this name until its lock file is locked: a
/// sweep that found it unlocked under FolderPrefix would take it for a
/// dead process's and remove it under its maker.
static constexpr const char *MakingPrefix = ".twochains-deploy-making-";
/// One being made, or one without a lock file, is left by a process that
/// died making it when older than this.
static constexpr time_t MakingGraceS = 60;

static std::string tmpDir() {
  const char *Tmp = std::getenv("TMPDIR");
  return Tmp && *Tmp ? Tmp : "/tmp";
}

void removeTree(const std::string &Path) {
  nftw(
      Path.c_str(),
      [](const char *P, const struct stat *, int, struct FTW *) { return ::remove(P); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

/// Whether the folder's process has gone: its lock file can be locked. A
/// folder still being made (Making) is not even looked into until it is
/// old: a look takes the lock for a moment, which its maker must get.
static bool abandoned(const std::string &Dir, const struct stat &St, bool Making) {
  if (Making && time(nullptr) - St.st_mtime <= MakingGraceS)
    return false;
  int Fd = open((Dir + "/" + DeployFolderLock).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (Fd < 0)
    return errno == ENOENT && time(nullptr) - St.st_mtime > MakingGraceS;
  bool Free = flock(Fd, LOCK_EX | LOCK_NB) == 0;
  close(Fd);
  return Free;
}

static bool startsWith(const char *Name, const char *Prefix) {
  return std::strncmp(Name, Prefix, std::strlen(Prefix)) == 0;
}

unsigned removeDeadDeployFolders(const std::string &Parent) {
  DIR *D = opendir(Parent.c_str());
  if (!D)
    return 0;
  unsigned Removed = 0;
  while (dirent *E = readdir(D)) {
    bool Making = startsWith(E->d_name, MakingPrefix);
    if (!Making && !startsWith(E->d_name, FolderPrefix))
      continue;
    std::string Dir = Parent + "/" + E->d_name;
    struct stat St;
    if (lstat(Dir.c_str(), &St) != 0 || !S_ISDIR(St.st_mode) || St.st_uid != geteuid())
      continue;
    if (abandoned(Dir, St, Making)) {
      removeTree(Dir);
      ++Removed;
    }
  }
  closedir(D);
  if (Removed)
    logMessage(TC_LOG_INFO, "removed " + std::to_string(Removed) +
                                " deploy folder(s) that processes now gone left in " + Parent);
  return Removed;
}

bool makeDeployFolder(const std::string &Parent, std::string &Dir, int &LockFd) {
  removeDeadDeployFolders(Parent);
  // Made and locked under a name no sweep takes for a finished folder,
  // then renamed: a folder under FolderPrefix is locked from its start.
  std::string Making = Parent + "/" + MakingPrefix + "XXXXXX";
  if (!mkdtemp(Making.data())) {
    logError("cannot make " + Making + ": " + std::strerror(errno));
    return false;
  }
  int Fd = open((Making + "/" + DeployFolderLock).c_str(),
                O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  std::string Final = Parent + "/" + FolderPrefix + Making.substr(Making.size() - 6);
  // The name is mkdtemp's: another folder has it only if made another way.
  if (Fd < 0 || flock(Fd, LOCK_EX | LOCK_NB) != 0 || rename(Making.c_str(), Final.c_str()) != 0) {
    logError("cannot make " + Final + ": " + std::strerror(errno));
    if (Fd >= 0)
      close(Fd);
    removeTree(Making);
    return false;
  }
  Dir = Final;
  LockFd = Fd;
  return true;
}

bool ensureDeployFolder(CoreContext *Ctx, std::string &Reason) {
  if (!Ctx->Code->DeployDir.empty())
    return true;
  std::string Dir;
  int Fd;
  if (!makeDeployFolder(tmpDir(), Dir, Fd)) {
    Reason = "it cannot make a folder for deployed packages";
    return false;
  }
  Ctx->Code->DeployDir = Dir;
  Ctx->Code->DeployDirLock = Fd;
  return true;
}

void removeDeployFolder(CoreContext *Ctx) {
  if (!Ctx->Code->DeployDir.empty())
    removeTree(Ctx->Code->DeployDir);
  if (Ctx->Code->DeployDirLock >= 0)
    close(Ctx->Code->DeployDirLock);
  Ctx->Code->DeployDir.clear();
  Ctx->Code->DeployDirLock = -1;
}

} // namespace twochains::rt
