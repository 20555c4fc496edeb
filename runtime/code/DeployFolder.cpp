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
/// A folder without its lock file yet is being made by another process,
/// unless it is older than this.
static constexpr time_t UnlockedGraceS = 60;

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

/// Whether the folder's process has gone: its lock file can be locked (or
/// it has none, and is old).
static bool abandoned(const std::string &Dir, const struct stat &St) {
  int Fd = open((Dir + "/" + DeployFolderLock).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (Fd < 0)
    return errno == ENOENT && time(nullptr) - St.st_mtime > UnlockedGraceS;
  bool Free = flock(Fd, LOCK_EX | LOCK_NB) == 0;
  close(Fd);
  return Free;
}

unsigned removeDeadDeployFolders(const std::string &Parent) {
  DIR *D = opendir(Parent.c_str());
  if (!D)
    return 0;
  unsigned Removed = 0;
  while (dirent *E = readdir(D)) {
    if (std::strncmp(E->d_name, FolderPrefix, std::strlen(FolderPrefix)) != 0)
      continue;
    std::string Dir = Parent + "/" + E->d_name;
    struct stat St;
    if (lstat(Dir.c_str(), &St) != 0 || !S_ISDIR(St.st_mode) || St.st_uid != geteuid())
      continue;
    if (abandoned(Dir, St)) {
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

bool ensureDeployFolder(CodeContext *Ctx, std::string &Reason) {
  if (!Ctx->DeployDir.empty())
    return true;
  std::string Parent = tmpDir();
  removeDeadDeployFolders(Parent);
  std::string Template = Parent + "/" + FolderPrefix + "XXXXXX";
  if (!mkdtemp(Template.data())) {
    Reason = "it cannot make a folder for deployed packages";
    logError("cannot make " + Template + ": " + std::strerror(errno));
    return false;
  }
  int Fd = open((Template + "/" + DeployFolderLock).c_str(),
                O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (Fd < 0 || flock(Fd, LOCK_EX | LOCK_NB) != 0) {
    Reason = "it cannot make a folder for deployed packages";
    logError("cannot lock " + Template + ": " + std::strerror(errno));
    if (Fd >= 0)
      close(Fd);
    removeTree(Template);
    return false;
  }
  Ctx->DeployDir = Template;
  Ctx->DeployDirLock = Fd;
  return true;
}

void removeDeployFolder(CodeContext *Ctx) {
  if (!Ctx->DeployDir.empty())
    removeTree(Ctx->DeployDir);
  if (Ctx->DeployDirLock >= 0)
    close(Ctx->DeployDirLock);
  Ctx->DeployDir.clear();
  Ctx->DeployDirLock = -1;
}

} // namespace twochains::rt
