//===- Summary.h - Percentiles of per-iteration times ----------------------===//
#ifndef TC_PERF_SUMMARY_H
#define TC_PERF_SUMMARY_H

#include <cstdint>
#include <vector>

namespace tcperf {

struct Summary {
  double P50 = 0, P99 = 0, P999 = 0, Mean = 0;
  double Spread = 0; // (p99.9 - p50) / p50: how far the tail reaches
  uint64_t Count = 0;
};

// Summarises samples in nanoseconds (sorts them).
Summary summarize(std::vector<double> &Ns);

} // namespace tcperf

#endif
