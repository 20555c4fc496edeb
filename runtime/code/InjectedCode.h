//===- InjectedCode.h - Running injected code -----------------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_INJECTEDCODE_H
#define TWOCHAINS_RUNTIME_CODE_INJECTEDCODE_H

#include "code/CodeContext.h"
#include "containment/JamGuard.h"
#include "core/Stats.h"
#include "wire/Frame.h"

namespace twochains::rt {

/// Calls the jam installed at Code on the frame's payload, its code range
/// (the image's text) set for containment first.
inline void callJam(const uint8_t *Code, const PackageElement &E, const FrameView &V,
                    tc_jam_ctx *JamCtx) {
  JamCtx->Run->CodeBegin = uintptr_t(Code);
  JamCtx->Run->CodeEnd = uintptr_t(Code) + E.Image.TextSize;
  reinterpret_cast<JamEntry>(const_cast<uint8_t *>(Code) + E.Image.Entry)(
      JamCtx, const_cast<uint8_t *>(V.Payload), V.Header.PayloadSize);
}

/// A cached frame whose code this receiver holds, run: one table probe and
/// the call (the hot path of cached frames). False if the code is not held:
/// runInjected then says why.
inline bool runHeldCode(CoreContext *Ctx, const PackageElement &E, const FrameView &V,
                        tc_jam_ctx *JamCtx) {
  const CachedCode *C = Ctx->Image->Cache->find(V.Header.Code, V.Header.Package, V.Header.Element);
  if (!C)
    return false;
  callJam(Ctx->Image->Cache->executableCode(*C), E, V, JamCtx);
  countHeld(Ctx, &tc_stats_t::frames_executed_cached);
  return true;
}

/// An injected frame (or code shipped ahead) of a sandboxed image, in a
/// package this receiver runs natively: refused and said (limited).
tc_status_t refuseSandboxedImage(CoreContext *Ctx, const tc_package &Pkg, const PackageElement &E);

/// Runs a checked injected or cached frame as the context's mailbox mode
/// says. TC_ERR_NOT_CACHED: a cached frame names code this receiver does
/// not hold (the caller asks the sender for it).
tc_status_t runInjected(CoreContext *Ctx, const tc_package &Pkg, uint32_t Element,
                        const FrameView &V, tc_jam_ctx *JamCtx);

/// The element's image installed in the context's code cache for the
/// context's life (pinned; the cache is created if the mailbox mode has
/// none), or null and logged.
const CachedCode *installResident(CoreContext *Ctx, uint64_t Package, uint32_t Element,
                                  const PackageElement &E);

} // namespace twochains::rt

#endif
