//===- CpuCost.cpp - What waiting costs the server's CPU -------------------===//
#include "CpuCost.h"

#include "Clock.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <linux/perf_event.h>
#include <sstream>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace tcperf {

static int openCycles(pid_t Tid, std::string *Why) {
  perf_event_attr A;
  std::memset(&A, 0, sizeof A);
  A.size = sizeof A;
  A.type = PERF_TYPE_HARDWARE;
  A.config = PERF_COUNT_HW_CPU_CYCLES;
  A.exclude_hv = 1;
  int Fd = int(syscall(SYS_perf_event_open, &A, Tid, -1, -1, 0));
  if (Fd < 0)
    *Why = std::string("unavailable (perf_event_open cycles: ") + strerror(errno) + ")";
  return Fd;
}

CpuMeter::CpuMeter(pid_t T) : Tid(T) {
  if (Tid >= 0)
    CyclesFd = openCycles(Tid, &CyclesWhy);
  else
    CyclesWhy = "unavailable (not counted process-wide)";
}

CpuMeter::~CpuMeter() {
  if (CyclesFd >= 0)
    close(CyclesFd);
}

double CpuMeter::cpuNs() const {
  // Linux names another thread's CPU clock as glibc's pthread_getcpuclockid
  // does: ~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED. The runtime's
  // executor thread has no pthread_t we could ask for, only its tid.
  clockid_t Id = Tid > 0    ? clockid_t((~unsigned(Tid) << 3) | 6)
                 : Tid == 0 ? CLOCK_THREAD_CPUTIME_ID
                            : CLOCK_PROCESS_CPUTIME_ID;
  timespec T;
  if (clock_gettime(Id, &T) != 0)
    return 0;
  return double(T.tv_sec) * 1e9 + double(T.tv_nsec);
}

uint64_t CpuMeter::cycles() const {
  uint64_t V = 0;
  if (CyclesFd < 0 || read(CyclesFd, &V, sizeof V) != sizeof V)
    return 0;
  return V;
}

void CpuMeter::start() {
  Wall0 = double(Clock::monotonicNs());
  Cpu0 = cpuNs();
  Cycles0 = cycles();
}

CpuSample CpuMeter::stop() const {
  CpuSample S;
  S.WallNs = double(Clock::monotonicNs()) - Wall0;
  S.CpuNs = cpuNs() - Cpu0;
  S.CyclesValid = CyclesFd >= 0;
  S.Cycles = S.CyclesValid ? cycles() - Cycles0 : 0;
  return S;
}

static std::vector<pid_t> listThreads() {
  std::vector<pid_t> Ids;
  if (DIR *D = opendir("/proc/self/task")) {
    while (dirent *E = readdir(D))
      if (E->d_name[0] != '.')
        Ids.push_back(pid_t(atoi(E->d_name)));
    closedir(D);
  }
  std::sort(Ids.begin(), Ids.end());
  return Ids;
}

std::string threadIds() {
  std::ostringstream S;
  for (pid_t T : listThreads())
    S << T << ' ';
  return S.str();
}

pid_t newestThreadSince(const std::string &Before) {
  std::vector<pid_t> Old;
  std::istringstream In(Before);
  for (pid_t T; In >> T;)
    Old.push_back(T);
  pid_t Newest = 0;
  for (pid_t T : listThreads())
    if (!std::binary_search(Old.begin(), Old.end(), T))
      Newest = std::max(Newest, T);
  return Newest;
}

} // namespace tcperf
