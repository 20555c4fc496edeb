//===- Workload.h - The paper's two benchmarks, as payloads and as work ----===//
//
// The same payload bytes go into every variant. Two-Chains runs the stdlib
// package's jams on them (indirect_put, server_side_sum); the UCX baselines
// run runWork() below: the same jams' C source, built by the same clang at
// the same -O2 as plain functions (BaselineWork.c), on this process's own
// array and total.
//===----------------------------------------------------------------------===//
#ifndef TC_PERF_WORKLOAD_H
#define TC_PERF_WORKLOAD_H

#include "Options.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tcperf {

// Payload bytes of a workload's message: indirect_put is a uint32 count and
// count {uint32 index, int32 value} items; server_side_sum is int32s.
std::vector<uint8_t> makePayload(Workload W, size_t Bytes);

// The integers a payload of that size carries (items for indirect_put).
uint32_t payloadInts(Workload W, size_t Bytes);

// The stdlib element that runs the workload.
uint32_t workloadElement(Workload W);

// What the jam does, for the baselines: scatter into a 1<<20 int32 array
// (indices modulo its length) or add into a 64-bit total.
void runWork(Workload W, const void *Payload, size_t Bytes);

} // namespace tcperf

#endif
