//===- Report.h - The table on stdout, the CSV, the ratios -----------------===//
#ifndef TC_PERF_REPORT_H
#define TC_PERF_REPORT_H

#include "Options.h"
#include "Protocol.h"
#include "Summary.h"

#include <twochains/twochains.h>

#include <string>
#include <vector>

namespace tcperf {

// One (test, workload, variant, size) result.
struct Row {
  Test T;
  Workload W;
  Variant V;
  std::string Transport, Mailbox, Wait;
  size_t Bytes = 0;
  uint32_t Ints = 0;
  uint64_t Iters = 0;
  Summary Latency;       // half round trips, ns (latency test)
  double Rate = 0;       // messages per second (rate and wait tests)
  ServerResult Server;
  uint64_t SentWithCode = 0, SentCached = 0; // this side's tc_stats_t, during the test
  /// Each round's own p50 (latency) or rate, in round order: the variants
  /// of one size ran their rounds in turn, so round r of two variants was
  /// measured at the same moment (perf-tables.py takes the median of the
  /// per-round ratios, which one slow round of one variant cannot move).
  std::vector<double> Rounds;
};

void printTableHeader();
void printRow(const Row &R);
// The goals' ratios per workload and size, from the rows measured.
void printRatios(const std::vector<Row> &Rows);
void printStats(const char *Who, const tc_stats_t &S);
bool writeCsv(const std::string &Path, const std::vector<Row> &Rows);

} // namespace tcperf

#endif
