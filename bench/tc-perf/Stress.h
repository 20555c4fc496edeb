//===- Stress.h - Memory-bandwidth stress threads --------------------------===//
//
// The paper's overloaded-system experiment: threads that stream memcpy over
// buffers far larger than the caches, so the server's polls and frames
// compete for memory bandwidth and cache.
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_STRESS_H
#define TC_PERF_STRESS_H

#include <atomic>
#include <thread>
#include <vector>

namespace tcperf {

class MemoryStress {
public:
  ~MemoryStress() { stop(); }
  // Starts N threads, each copying between the halves of its own 64 MiB.
  bool start(unsigned N);
  void stop();

private:
  std::atomic<bool> Stop{false};
  std::vector<std::thread> Threads;
};

} // namespace tcperf

#endif
