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

// The baselines' receiver-side state, with external linkage (as the ried's)
// so that the compiler cannot drop the stores into it as unobserved.
int32_t BaselineArray[ArraySize];
int64_t BaselineTotal;
// Not a constant, as tc_stdlib_array_length is not one to the jam, which
// imports it: the index is reduced with a division in both, not a mask.
uint32_t BaselineArrayLength = ArraySize;

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

// Kept out of line so the baselines call a function, as Local frames do.
__attribute__((noinline)) static void indirectPut(const void *Payload, size_t Bytes) {
  uint32_t N;
  std::memcpy(&N, Payload, 4);
  if (Bytes < 4 + size_t(N) * sizeof(Item))
    return;
  const Item *It = reinterpret_cast<const Item *>(static_cast<const uint8_t *>(Payload) + 4);
  uint32_t Length = BaselineArrayLength;
  for (uint32_t I = 0; I < N; ++I)
    BaselineArray[It[I].Index % Length] = It[I].Value;
}

__attribute__((noinline)) static void serverSideSum(const void *Payload, size_t Bytes) {
  const int32_t *V = static_cast<const int32_t *>(Payload);
  int64_t Sum = 0;
  for (size_t I = 0; I < Bytes / sizeof(int32_t); ++I)
    Sum += V[I];
  BaselineTotal += Sum;
}

void runWork(Workload W, const void *Payload, size_t Bytes) {
  if (W == Workload::IndirectPut)
    indirectPut(Payload, Bytes);
  else
    serverSideSum(Payload, Bytes);
}

} // namespace tcperf
