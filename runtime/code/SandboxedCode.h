//===- SandboxedCode.h - Running the jams of a sandboxed package ----------===//
#ifndef TWOCHAINS_RUNTIME_CODE_SANDBOXEDCODE_H
#define TWOCHAINS_RUNTIME_CODE_SANDBOXEDCODE_H

#include "code/CodeContext.h"
#include "containment/JamGuard.h"
#include "wire/Frame.h"

namespace twochains::rt {

/// Whether a frame of a sandboxed package may run its element's installed
/// copy: a Local frame names only the element; an injected one must carry
/// the package's image byte for byte, a cached one name its code. TC_OK,
/// or the status the frame is refused with.
tc_status_t checkSandboxedFrame(const PackageElement &E, const FrameView &V);

/// Runs element E of the sandboxed package Pkg on Payload (Size bytes) in
/// the package's region (docs/verified.md): the payload copied in and back
/// out, the jam API's services acting on JamCtx, Run's code range the
/// region's. Called inside a recovery point: a jam that faults or overruns
/// its time limit jumps back there, and the abandonment calls
/// leaveSandboxAfterAbandon; so does one a service refused (its arguments
/// named memory outside it: logged, then abandoned as SIGSYS).
tc_status_t runSandboxed(const tc_package &Pkg, const PackageElement &E, tc_jam_ctx *JamCtx,
                         uint8_t *Payload, size_t Size);

/// After a jam was abandoned on this thread: if it was a sandboxed one,
/// the process's sandbox, which it held, is free again.
void leaveSandboxAfterAbandon();

} // namespace twochains::rt

#endif
