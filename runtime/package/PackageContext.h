//===- PackageContext.h - The package layer's part of a context -----------===//
#ifndef TWOCHAINS_RUNTIME_PACKAGE_PACKAGECONTEXT_H
#define TWOCHAINS_RUNTIME_PACKAGE_PACKAGECONTEXT_H

#include "control/ControlContext.h"
#include "package/Package.h"
#include "Signature.h"

#include <atomic>
#include <list>
#include <string>
#include <thread>
#include <vector>

namespace twochains::rt {

struct PackageContext {
  /// Who may put code here (tc_code_trust_t, never DEFAULT once created).
  tc_code_trust_t CodeTrust = TC_CODE_TRUST_PACKAGE;
  /// TC_CODE_TRUST_SIGNED: the keys whose signed packages may be deployed,
  /// and the file they came from (for messages).
  std::vector<twochains::format::TrustedSigner> TrustedSigners;
  std::string TrustedSignersSource;

  /// Loaded packages (tc_context_add_package): only ever added; the last
  /// added of a tag is the one that runs.
  std::vector<tc_package *> Packages;

  /// Rieds peers pushed (package/RiedPush.cpp): received, to load, then
  /// answer.
  struct PushedRied {
    ucp_ep_h Reply;
    tc_status_t Status;
    std::vector<uint8_t> Bytes;
    std::string Reason; // a refusal's, for the pusher
  };
  std::vector<PushedRied> PushedRieds;
  /// The endpoints of pushes whose bytes are on their way, one each: at
  /// most MaxRiedsArriving, MaxRiedsArrivingPerPeer of one peer.
  std::vector<ucp_ep_h> RiedsArriving;
  /// Rieds loading on threads of their own, answered when done.
  struct RiedLoad {
    ucp_ep_h Reply = nullptr;
    tc_status_t Status = TC_OK;
    std::string Reason; // why it is not loaded, for the pusher
    std::atomic<bool> Done{false};
    std::thread Thread;
  };
  std::list<RiedLoad> RiedLoads;
  /// Answers to our pushes: the receiver's status, and its reason in words
  /// (bounded on arrival, not yet sanitised).
  struct RiedAnswer {
    ucp_ep_h From;
    tc_status_t Status;
    std::string Reason;
  };
  std::vector<RiedAnswer> RiedAcks;
};

/// Ried pushes: registers their handlers and housekeeping; joins what is
/// still loading (at the context's end).
ucs_status_t setupRiedPush(CoreContext *Ctx);
void finishRiedLoads(CoreContext *Ctx);

} // namespace twochains::rt

#endif
