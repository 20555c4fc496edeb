//===- CpuCost.h - What waiting costs the server's CPU ---------------------===//
//
// Wall time, the CPU time of one thread (CLOCK_THREAD_CPUTIME_ID, or the
// clock of another thread of this process), and, where the machine has a
// PMU, its cycles (perf_event_open PERF_COUNT_HW_CPU_CYCLES). Under KVM
// without a virtual PMU the counter cannot be opened: that is reported as
// "unavailable", never guessed. A busy-waiting thread shows CPU time equal
// to wall time, whatever hint it spins with.
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_CPUCOST_H
#define TC_PERF_CPUCOST_H

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace tcperf {

struct CpuSample {
  double WallNs = 0, CpuNs = 0;
  uint64_t Cycles = 0;
  bool CyclesValid = false;
};

class CpuMeter {
public:
  // Meters the thread with kernel id Tid (0: the calling thread; -1: the
  // whole process, CPU time only).
  explicit CpuMeter(pid_t Tid = 0);
  ~CpuMeter();
  CpuMeter(const CpuMeter &) = delete;
  CpuMeter &operator=(const CpuMeter &) = delete;

  void start();
  CpuSample stop() const; // since start()
  // Why cycles are not counted ("" when they are).
  const std::string &cyclesUnavailable() const { return CyclesWhy; }

private:
  double cpuNs() const;
  uint64_t cycles() const;

  pid_t Tid;
  int CyclesFd = -1;
  std::string CyclesWhy;
  double Wall0 = 0, Cpu0 = 0;
  uint64_t Cycles0 = 0;
};

// The kernel id of this process's thread created after Before was taken
// (the newest thread not in it); 0 if none.
pid_t newestThreadSince(const std::string &Before);
// The kernel ids of this process's threads, as one string for the above.
std::string threadIds();

} // namespace tcperf

#endif
