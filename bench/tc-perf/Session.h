//===- Session.h - What one side of a run holds ----------------------------===//
#ifndef TC_PERF_SESSION_H
#define TC_PERF_SESSION_H

#include "Control.h"
#include "Options.h"
#include "TwoChains.h"
#include "UcxBaseline.h"

#include <memory>

namespace tcperf {

struct Session {
  Options Opts;
  Control Ctl;
  UcxEndpoint Ucx;
  TcEndpoint Tc;
  // tc-local-job's contexts (code trust job), made only if the client
  // asks for that variant.
  TcEndpoint TcJob;

  // The Two-Chains endpoint a variant runs on.
  TcEndpoint &endpoint(Variant V) { return V == Variant::TcLocalJob ? TcJob : Tc; }

  // A fresh channel of the variant, over this session's endpoints.
  std::unique_ptr<Channel> channel(Variant V) {
    switch (V) {
    case Variant::TcLocal: return std::make_unique<TcChannel>(Tc, TC_SEND_LOCAL);
    case Variant::TcInjected: return std::make_unique<TcChannel>(Tc, TC_SEND_INJECTED);
    case Variant::TcInjectedFull: return std::make_unique<TcChannel>(Tc, TC_SEND_INJECTED_FULL);
    case Variant::UcxPut: return std::make_unique<UcxPutChannel>(Ucx);
    case Variant::UcxAm: return std::make_unique<UcxAmChannel>(Ucx);
    case Variant::TcLocalJob: return std::make_unique<TcChannel>(TcJob, TC_SEND_LOCAL);
    }
    return nullptr;
  }
};

// The UCX_TLS both sides run with ("default" when unset: UCX's choice,
// shared memory between processes of one host).
const char *transportName();

int runServer(const Options &O);
int runClient(const Options &O);

} // namespace tcperf

#endif
