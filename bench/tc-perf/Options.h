//===- Options.h - tc-perf's command line ----------------------------------===//
#ifndef TC_PERF_OPTIONS_H
#define TC_PERF_OPTIONS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tcperf {

enum class Test : uint32_t { Latency, Rate, Wait };
enum class Workload : uint32_t { IndirectPut, ServerSideSum };
// TcLocalJob: tc-local into a second pair of contexts whose receiver runs
// under the job code-trust policy (payloads read in the ring).
enum class Variant : uint32_t { TcLocal, TcInjected, TcInjectedFull, UcxPut, UcxAm, TcLocalJob };
// How the server waits between empty polls of its own loop (and, for the
// wait test, the executor thread's tc_wait_mode_t).
enum class WaitKind : uint32_t { Poll, Pause, Auto };

struct Options {
  bool Server = true;             // no host given: listen
  std::string Host;               // the server, for the client
  uint16_t Port = 13370;          // Two-Chains; the bootstrap socket is Port + 1
  uint64_t Iters = 10000;         // timed ping-pongs per latency test
  uint64_t Warmup = 1000;         // untimed ones before them (also for rate)
  uint64_t RateIters = 20000;     // messages per rate test
  uint64_t GapNs = 20000;         // wait test: the client's pause between messages
  unsigned Rounds = 5;            // variants interleaved in this many rounds
  size_t SizesMax = 32768;        // largest payload in bytes
  std::vector<size_t> Sizes;      // --sizes: these payload sizes instead of the sweep
  std::vector<Test> Tests = {Test::Latency, Test::Rate};
  std::vector<Workload> Workloads = {Workload::IndirectPut, Workload::ServerSideSum};
  std::vector<Variant> Variants = {Variant::TcLocal, Variant::TcInjected,
                                   Variant::TcInjectedFull, Variant::UcxPut, Variant::UcxAm};
  std::string Prefix;             // the stdlib package's install prefix
  std::string Csv;
  WaitKind Wait = WaitKind::Poll;
  unsigned Stress = 0;            // server: memory-stress threads
  uint32_t Mailbox = 0;           // tc_mailbox_mode_t; 0: the server's choice
  uint32_t CodeCacheSize = 0;     // server: bytes; 0: the runtime's default
  uint32_t CodeTrust = 0;         // tc_code_trust_t; 0: TC_CODE_TRUST, else package
  bool Quick = false;
  bool Ordered = false;           // TC_CONTEXT_ORDERED_PLACEMENT
  int Cpu = -1;                   // pin this process to one CPU
  bool Verbose = false;
};

// Parses argv into *Out. Returns 0 to go on, or an exit code (0 after
// --help, 2 after a bad option, with the reason printed).
int parseOptions(int Argc, char **Argv, Options *Out, bool *Exit);

// The payload sizes in bytes a workload is swept over, up to SizesMax.
std::vector<size_t> payloadSizes(const Options &O, Workload W);

const char *testName(Test T);
const char *workloadName(Workload W);
const char *variantName(Variant V);
const char *waitName(WaitKind K);
// "code-cache", "no-cache" to tc_mailbox_mode_t; false if none.
bool mailboxFromName(const std::string &Name, uint32_t *Mode);
// "package", "job", "signed" to tc_code_trust_t; false if none.
bool codeTrustFromName(const std::string &Name, uint32_t *Trust);
bool isTwoChains(Variant V);
// Whether a payload of Bytes is one the workload can take (indirect_put:
// a count and whole items; server_side_sum: whole int32s).
bool fitsWorkload(Workload W, size_t Bytes);

} // namespace tcperf

#endif
