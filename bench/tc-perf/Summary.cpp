//===- Summary.cpp - Percentiles of per-iteration times --------------------===//
#include "Summary.h"

#include <algorithm>
#include <cmath>

namespace tcperf {

// Nearest rank: the smallest sample with at least P of them at or below it,
// so p99.9 of 10,000 samples is the 9,990th, an observed time.
static double percentile(const std::vector<double> &Sorted, double P) {
  size_t Rank = size_t(std::ceil(P * double(Sorted.size())));
  return Sorted[std::min(Sorted.size(), std::max<size_t>(Rank, 1)) - 1];
}

Summary summarize(std::vector<double> &Ns) {
  Summary S;
  if (Ns.empty())
    return S;
  std::sort(Ns.begin(), Ns.end());
  double Sum = 0;
  for (double V : Ns)
    Sum += V;
  S.Count = Ns.size();
  S.Mean = Sum / double(Ns.size());
  S.P50 = percentile(Ns, 0.50);
  S.P99 = percentile(Ns, 0.99);
  S.P999 = percentile(Ns, 0.999);
  S.Spread = S.P50 > 0 ? (S.P999 - S.P50) / S.P50 : 0;
  return S;
}

} // namespace tcperf
