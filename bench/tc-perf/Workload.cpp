//===- Workload.cpp - The paper's two benchmarks, as payloads and as work --===//
#include "Workload.h"

#include <twochains/packages/stdlib.h>

#include <cstring>

namespace tcperf {

namespace {
struct Item {
  uint32_t Index;
  int32_t Value;
};
constexpr uint32_t ArraySize = 1u << 20; // as ried_array's tc_stdlib_array
} // namespace

} // namespace tcperf

// The baselines' receiver-side state, with external linkage (as the ried's)
// so that the compiler cannot drop the stores into it as unobserved, and
// their work: the jams' own functions (BaselineWork.c).
extern "C" {
int32_t tc_perf_baseline_array[tcperf::ArraySize];
int64_t tc_perf_baseline_total;
// Imported by the jam's code, so not a constant there: the index is
// reduced with a division, not a mask, in both.
extern const uint32_t tc_perf_baseline_array_length = tcperf::ArraySize;
void tc_perf_baseline_indirect_put(void *Ctx, void *Payload, size_t Bytes);
void tc_perf_baseline_server_side_sum(void *Ctx, void *Payload, size_t Bytes);
}

namespace tcperf {

uint32_t payloadInts(Workload W, size_t Bytes) {
  return W == Workload::IndirectPut ? uint32_t((Bytes - 4) / sizeof(Item))
                                    : uint32_t(Bytes / sizeof(int32_t));
}

std::vector<uint8_t> makePayload(Workload W, size_t Bytes) {
  std::vector<uint8_t> P(Bytes, 0);
  uint32_t N = payloadInts(W, Bytes);
  if (W == Workload::IndirectPut) {
    std::memcpy(P.data(), &N, 4);
    for (uint32_t I = 0; I < N; ++I) {
      // Indices spread over the whole array, as a scatter would.
      Item It = {uint32_t((I * 2654435761u) % ArraySize), int32_t(I)};
      std::memcpy(P.data() + 4 + I * sizeof(Item), &It, sizeof It);
    }
  } else {
    for (uint32_t I = 0; I < N; ++I) {
      int32_t V = int32_t(I + 1);
      std::memcpy(P.data() + I * 4, &V, 4);
    }
  }
  return P;
}

uint32_t workloadElement(Workload W) {
  return W == Workload::IndirectPut ? STDLIB_INDIRECT_PUT : STDLIB_SERVER_SIDE_SUM;
}

// Out of line, in another object: the baselines call a function, as Local
// frames do.
void runWork(Workload W, const void *Payload, size_t Bytes) {
  if (W == Workload::IndirectPut)
    tc_perf_baseline_indirect_put(nullptr, const_cast<void *>(Payload), Bytes);
  else
    tc_perf_baseline_server_side_sum(nullptr, const_cast<void *>(Payload), Bytes);
}

} // namespace tcperf
