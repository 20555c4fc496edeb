//===- Stress.cpp - Memory-bandwidth stress threads ------------------------===//
#include "Stress.h"

#include <cstdio>
#include <cstring>
#include <memory>

namespace tcperf {

static constexpr size_t StressBytes = 64u << 20;

static void stream(std::atomic<bool> *Stop, std::unique_ptr<char[]> Buffer) {
  char *A = Buffer.get(), *B = A + StressBytes / 2;
  // Touch every page first, so the copies measure bandwidth, not faults.
  std::memset(A, 1, StressBytes);
  while (!Stop->load(std::memory_order_relaxed)) {
    std::memcpy(B, A, StressBytes / 2);
    std::memcpy(A, B, StressBytes / 2);
  }
}

bool MemoryStress::start(unsigned N) {
  for (unsigned I = 0; I < N; ++I) {
    std::unique_ptr<char[]> Buffer(new (std::nothrow) char[StressBytes]);
    if (!Buffer) {
      fprintf(stderr, "tc-perf: cannot allocate 64 MiB for stress thread %u\n", I);
      return false;
    }
    Threads.emplace_back(stream, &Stop, std::move(Buffer));
  }
  return true;
}

void MemoryStress::stop() {
  Stop = true;
  for (std::thread &T : Threads)
    T.join();
  Threads.clear();
}

} // namespace tcperf
