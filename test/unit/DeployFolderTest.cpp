//===- DeployFolderTest.cpp - Deploy folders made while others sweep ------===//
//
// Every context that makes a deploy folder first removes the folders of
// processes that have gone (their lock can be taken). A folder visible to
// such a sweep before its maker had locked it was taken for a dead one
// and removed under its maker: a job's ranks deploying at once then
// refused packages ("it cannot make a folder for the package").
//
//===----------------------------------------------------------------------===//
#include "code/DeployFolder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace twochains::rt;

namespace {

bool isFolder(const std::string &Path) {
  struct stat St;
  return stat(Path.c_str(), &St) == 0 && S_ISDIR(St.st_mode);
}

} // namespace

TEST(DeployFolder, AFolderBeingMadeIsNotSweptAway) {
  char Parent[] = "/tmp/tc-deployfolder-test-XXXXXX";
  ASSERT_NE(mkdtemp(Parent), nullptr);
  constexpr unsigned Makers = 4, Each = 300;
  std::atomic<unsigned> Lost{0}, Failed{0};
  std::atomic<bool> Done{false};
  // Sweeps as fast as it can, as the other processes of a job making
  // their own folders do.
  std::thread Sweeper([&] {
    while (!Done)
      removeDeadDeployFolders(Parent);
  });
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T < Makers; ++T)
    Threads.emplace_back([&] {
      for (unsigned I = 0; I < Each; ++I) {
        std::string Dir;
        int Fd = -1;
        if (!makeDeployFolder(Parent, Dir, Fd)) {
          ++Failed;
          continue;
        }
        // Another sweep after ours: the folder is locked, so it stays.
        removeDeadDeployFolders(Parent);
        if (!isFolder(Dir) || access((Dir + "/" + DeployFolderLock).c_str(), F_OK))
          ++Lost;
        removeTree(Dir);
        close(Fd);
      }
    });
  for (auto &T : Threads)
    T.join();
  Done = true;
  Sweeper.join();
  removeTree(Parent);
  EXPECT_EQ(Failed.load(), 0u) << "folders that could not be made";
  EXPECT_EQ(Lost.load(), 0u) << "folders removed under their makers by a sweep";
}
