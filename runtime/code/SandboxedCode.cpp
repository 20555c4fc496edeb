//===- SandboxedCode.cpp - Running the jams of a sandboxed package --------===//
//
// A package admitted by the verified policy holds its jams in a sandbox
// region of its own, verified as they were installed (package/Package.cpp).
// Whatever a frame of it carries, only that installed copy runs: an
// injected image is compared with the package's, never run or installed.
//
// One jam runs in a process's regions at a time: the entry's saved state
// is the process's (sandbox/Region.h). The runner takes the sandbox's lock
// and keeps it in a thread's variable rather than on its stack, since a
// jam that faults leaves through the recovery point below this frame; so
// does one whose service call a service refused.
//
//===----------------------------------------------------------------------===//
#include "code/SandboxedCode.h"

#include "base/Log.h"
#include "sandbox/Services.h"

#include <csignal>
#include <cstring>

using namespace twochains::rt;

/// The sandbox's lock, while this thread runs a sandboxed jam.
__attribute__((tls_model("initial-exec"))) static thread_local std::mutex *HeldSandbox = nullptr;

tc_status_t twochains::rt::checkSandboxedFrame(const PackageElement &E, const FrameView &V) {
  const FrameHeader &H = V.Header;
  if (H.Kind == FrameInjected) {
    const std::vector<uint8_t> &Known = E.Image.Bytes;
    if (H.ImageSize != Known.size() || std::memcmp(V.Image, Known.data(), Known.size()) != 0)
      return TC_ERR_UNKNOWN_ELEMENT;
  } else if (H.Kind == FrameCached && H.Code != E.CodeKey) {
    return TC_ERR_HASH_MISMATCH;
  }
  return TC_OK;
}

tc_status_t twochains::rt::runSandboxed(const tc_package &Pkg, const PackageElement &E,
                                        tc_jam_ctx *JamCtx, uint8_t *Payload, size_t Size) {
  SandboxRegion &Region = *Pkg.Region;
  HeldSandbox = SandboxRegion::hold().release();
  JamCtx->Run->CodeBegin = Region.codeBegin();
  JamCtx->Run->CodeEnd = Region.codeEnd();
  // The jam's context argument is the region's base, which the jam can
  // neither read usefully nor pass anywhere: the services act on the frame
  // being run, whatever it passes.
  std::string Error;
  sandboxAreas().Caller = JamCtx;
  tc_status_t St = Region.run(E.Sandboxed, Region.base(), Payload, Size, Error);
  sandboxAreas().Caller = nullptr;
  HeldSandbox->unlock();
  HeldSandbox = nullptr;
  if (St == TC_OK)
    return St;
  logLimited(JamCtx->Peer->RefusedMessageLog, TC_LOG_ERROR,
             "jam '" + E.Name + "' of package '" + Pkg.Name + "' from " + JamCtx->Peer->Name +
                 ": " + Error);
  if (St != TC_ERR_JAM_FAULT)
    return St;
  // A service refused the jam's arguments: abandoned as a jam that made a
  // call it may not (SIGSYS, as seccomp says it), by the path a fault
  // takes, so that its sender, its call and quarantine hear of it alike.
  JamRun &Run = *JamCtx->Run;
  Run.Active.store(false, std::memory_order_relaxed);
  Run.Signal = SIGSYS;
  Run.FaultPC = 0;
  Run.FaultAddress = 0;
  resumeAtRecoveryPoint(Run.Recover, int(JamEnd::Faulted));
}

void twochains::rt::leaveSandboxAfterAbandon() {
  if (!HeldSandbox)
    return;
  sandboxAreas().Caller = nullptr;
  HeldSandbox->unlock();
  HeldSandbox = nullptr;
}
