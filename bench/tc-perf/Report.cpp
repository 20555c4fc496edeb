//===- Report.cpp - The table on stdout, the CSV, the ratios ---------------===//
#include "Report.h"

#include <cstdio>
#include <map>
#include <string>
#include <tuple>

namespace tcperf {

static double perMessage(double Total, const ServerResult &S) {
  return S.Messages ? Total / double(S.Messages) : 0;
}

void printTableHeader() {
  printf("%-7s %-15s %-16s %7s %5s %9s %9s %9s %9s %7s %12s %10s %9s\n", "test", "workload",
         "variant", "payload", "ints", "p50_ns", "p99_ns", "p99.9_ns", "mean_ns", "spread",
         "rate_msg/s", "srv_cpu/msg", "polls/msg");
}

void printRow(const Row &R) {
  printf("%-7s %-15s %-16s %7zu %5u ", testName(R.T), workloadName(R.W), variantName(R.V),
         R.Bytes, R.Ints);
  if (R.T == Test::Latency)
    printf("%9.1f %9.1f %9.1f %9.1f %7.2f %12s ", R.Latency.P50, R.Latency.P99, R.Latency.P999,
           R.Latency.Mean, R.Latency.Spread, "-");
  else
    printf("%9s %9s %9s %9s %7s %12.0f ", "-", "-", "-", "-", "-", R.Rate);
  printf("%10.1f ", perMessage(R.Server.CpuNs, R.Server));
  if (R.T == Test::Wait) // the executor's polls are the runtime's, not counted
    printf("%9s\n", "-");
  else
    printf("%9.2f\n", perMessage(double(R.Server.Polls), R.Server));
  fflush(stdout);
}

namespace {
using Key = std::tuple<Workload, size_t>;
struct Measured {
  std::map<Variant, double> P50, Rate;
};

// " 1.23" (the ratio A/B) or " -" where either was not measured.
std::string ratio(const std::map<Variant, double> &M, Variant A, Variant B) {
  auto X = M.find(A), Y = M.find(B);
  char Text[32] = "-";
  if (X != M.end() && Y != M.end() && Y->second > 0)
    snprintf(Text, sizeof Text, "%.2f", X->second / Y->second);
  return Text;
}
} // namespace

void printRatios(const std::vector<Row> &Rows) {
  std::map<Key, Measured> ByCase;
  for (const Row &R : Rows) {
    if (R.T == Test::Latency)
      ByCase[{R.W, R.Bytes}].P50[R.V] = R.Latency.P50;
    else if (R.T == Test::Rate)
      ByCase[{R.W, R.Bytes}].Rate[R.V] = R.Rate;
  }
  if (ByCase.empty())
    return;
  printf("\nratios (latency: p50 half round trips; rate: messages/s)\n");
  printf("%-15s %7s %11s %11s %11s %11s | %11s %11s %11s\n", "workload", "payload", "local/put",
         "local/am", "inj/local", "full/local", "rate l/am", "rate i/am", "rate job/am");
  for (const auto &[K, M] : ByCase) {
    std::string R[] = {ratio(M.P50, Variant::TcLocal, Variant::UcxPut),
                       ratio(M.P50, Variant::TcLocal, Variant::UcxAm),
                       ratio(M.P50, Variant::TcInjected, Variant::TcLocal),
                       ratio(M.P50, Variant::TcInjectedFull, Variant::TcLocal),
                       ratio(M.Rate, Variant::TcLocal, Variant::UcxAm),
                       ratio(M.Rate, Variant::TcInjected, Variant::UcxAm),
                       ratio(M.Rate, Variant::TcLocalJob, Variant::UcxAm)};
    bool Any = false;
    for (const std::string &X : R)
      Any |= X != "-";
    if (Any)
      printf("%-15s %7zu %11s %11s %11s %11s | %11s %11s %11s\n", workloadName(std::get<0>(K)),
             std::get<1>(K), R[0].c_str(), R[1].c_str(), R[2].c_str(), R[3].c_str(), R[4].c_str(),
             R[5].c_str(), R[6].c_str());
  }
}

void printStats(const char *Who, const tc_stats_t &S) {
  printf("%s tc_context_stats: frames_sent %llu, executed local %llu injected %llu "
         "(cached %llu), rejected %llu; frames_sent_with_code %llu, frames_sent_cached %llu, "
         "code_bytes_sent %llu, frames_resent %llu; cache_installs %llu, cache_misses %llu, "
         "cache_evictions %llu; credit_reports %llu, frames_coalesced %llu\n",
         Who, (unsigned long long)S.frames_sent, (unsigned long long)S.frames_executed_local,
         (unsigned long long)S.frames_executed_injected,
         (unsigned long long)S.frames_executed_cached, (unsigned long long)S.frames_rejected,
         (unsigned long long)S.frames_sent_with_code, (unsigned long long)S.frames_sent_cached,
         (unsigned long long)S.code_bytes_sent, (unsigned long long)S.frames_resent,
         (unsigned long long)S.cache_installs, (unsigned long long)S.cache_misses,
         (unsigned long long)S.cache_evictions, (unsigned long long)S.credit_reports,
         (unsigned long long)S.frames_coalesced);
}

// Prints a number, or nothing where the test does not measure it.
static void field(FILE *F, bool Has, double V, const char *Format = "%.1f") {
  fputc(',', F);
  if (Has)
    fprintf(F, Format, V);
}

bool writeCsv(const std::string &Path, const std::vector<Row> &Rows) {
  FILE *F = fopen(Path.c_str(), "w");
  if (!F)
    return perror(("tc-perf: " + Path).c_str()), false;
  // The goals' columns first, in the agreed order; then what else we know.
  fprintf(F, "test,variant,transport,mailbox,size_bytes,payload_ints,iters,p50_ns,p99_ns,"
             "p999_ns,mean_ns,spread,rate_msgs_per_s,workload,wait,server_cpu_ns_per_msg,"
             "server_wall_ns_per_msg,server_cpu_util,server_polls_per_msg,"
             "server_cycles_per_msg,am_rendezvous,frames_sent_with_code,frames_sent_cached,"
             "rounds\n");
  for (const Row &R : Rows) {
    bool Lat = R.T == Test::Latency;
    const ServerResult &S = R.Server;
    fprintf(F, "%s,%s,%s,%s,%zu,%u,%llu", testName(R.T), variantName(R.V), R.Transport.c_str(),
            R.Mailbox.c_str(), R.Bytes, R.Ints, (unsigned long long)R.Iters);
    field(F, Lat, R.Latency.P50);
    field(F, Lat, R.Latency.P99);
    field(F, Lat, R.Latency.P999);
    field(F, Lat, R.Latency.Mean);
    field(F, Lat, R.Latency.Spread, "%.4f");
    field(F, !Lat, R.Rate, "%.0f");
    fprintf(F, ",%s,%s", workloadName(R.W), R.Wait.c_str());
    field(F, S.Messages, perMessage(S.CpuNs, S));
    field(F, S.Messages, perMessage(S.WallNs, S));
    field(F, S.WallNs > 0, S.WallNs > 0 ? S.CpuNs / S.WallNs : 0, "%.3f");
    // The executor thread's polls are the runtime's, not counted.
    field(F, S.Messages && R.T != Test::Wait, perMessage(double(S.Polls), S), "%.2f");
    field(F, S.Messages && S.CyclesValid, perMessage(double(S.Cycles), S));
    fprintf(F, ",%llu,%llu,%llu,", (unsigned long long)S.Rendezvous,
            (unsigned long long)R.SentWithCode, (unsigned long long)R.SentCached);
    // Each round's p50 or rate, ';' between them (no comma: one field).
    for (size_t I = 0; I < R.Rounds.size(); ++I)
      fprintf(F, I ? ";%.1f" : "%.1f", R.Rounds[I]);
    fprintf(F, "\n");
  }
  bool Ok = fclose(F) == 0;
  if (!Ok)
    perror(("tc-perf: " + Path).c_str());
  return Ok;
}

} // namespace tcperf
