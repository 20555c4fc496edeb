//===- InjectedCode.cpp - Running injected code in each mailbox mode ------===//
//
// A frame whose code runs on this receiver is run as the mailbox mode says
// (docs/code-cache.md):
//
//   code-cache  The first frame of an image carries it: the bytes are hashed
//               (GOTP read as zero) and must match the hash the frame claims
//               and the package's own image before they are installed into
//               the cache, through its writable alias. Later frames name the
//               hash and run the installed copy from the executable alias.
//   no-cache    Every frame carries its code, which is checked and the
//               package's own copy installed into W^X scratch memory and
//               run from there.
//
// A jam with static data (writable data or bss) is installed once per
// context in either mode, into an entry of the code cache that is never
// evicted, because its statics live there for the life of the context
// (docs/code-cache.md, "Static data"); in no-cache mode its frames still
// carry the code and are still checked against it. So is an image larger
// than a slot, which is shipped ahead of its frames (CodeTransfer.cpp):
// its frames name it, in either mode.
//
// In every mode only code this receiver already trusts runs, and only its
// own copy of it: an arrived image must be the package's, byte for byte
// (GOTP zero), and is compared, never run. (The paper's in-place mode ran
// code where it landed, in memory the peer could still write: gone.)
//
//===----------------------------------------------------------------------===//
#include "code/InjectedCode.h"

#include "base/Log.h"
#include "image/ImageInstall.h"
#include "wire/Formats.h"

#include <algorithm>
#include <cstring>

using namespace twochains::rt;

/// The arrived image is the package's as it was built: GOTP is zero (the
/// receiver sets it in its own copy; senders learn no table address).
static bool isPackageImage(const PackageElement &E, const FrameView &V) {
  const std::vector<uint8_t> &Known = E.Image.Bytes;
  return V.Header.ImageSize == Known.size() &&
         std::memcmp(V.Image, Known.data(), Known.size()) == 0;
}

static tc_status_t runFromScratch(CoreContext *Ctx, const PackageElement &E, const FrameView &V,
                                  tc_jam_ctx *JamCtx) {
  if (!Ctx->Image->Scratch || Ctx->Image->Scratch->size() < E.Image.TextSize) {
    auto A = std::make_unique<CodeArena>();
    std::string Error;
    if (A->create(std::max<size_t>(Ctx->SlotSize, E.Image.TextSize), Error) != TC_OK) {
      logError(Error);
      return TC_ERR_NO_MEMORY;
    }
    Ctx->Image->Scratch = std::move(A);
  }
  CodeArena &A = *Ctx->Image->Scratch;
  installImage(A.writable(), A.executable(), A.data(), E.Image, E.ImportTable.data());
  callJam(A.executable(), E, V, JamCtx);
  return TC_OK;
}

static tc_status_t runCached(CoreContext *Ctx, const tc_package &Pkg, uint32_t Element,
                             const FrameView &V, tc_jam_ctx *JamCtx) {
  const FrameHeader &H = V.Header;
  const PackageElement &E = Pkg.Elements[Element];
  CodeCache &Cache = *Ctx->Image->Cache;
  if (const CachedCode *C = Cache.find(H.Code, H.Package, Element)) {
    // Held. A frame that carries the code anyway (TC_SEND_INJECTED_FULL)
    // must still carry exactly what it claims.
    if (H.Kind == FrameInjected && !isPackageImage(E, V)) {
      countHeld(Ctx, &tc_stats_t::cache_hash_mismatches);
      return TC_ERR_HASH_MISMATCH;
    }
    callJam(Cache.executableCode(*C), E, V, JamCtx);
    if (H.Kind == FrameCached)
      countHeld(Ctx, &tc_stats_t::frames_executed_cached);
    return TC_OK;
  }
  if (H.Kind == FrameCached) {
    // A hash that is not this element's code can never be installed: no
    // resend would help. The element's own hash, not held (never sent, or
    // evicted): the sender must send the code again.
    if (H.Code != E.CodeKey) {
      countHeld(Ctx, &tc_stats_t::cache_hash_mismatches);
      return TC_ERR_HASH_MISMATCH;
    }
    return TC_ERR_NOT_CACHED;
  }
  // First arrival: the bytes must hash to what the frame claims, and be
  // the package's own image, before anything is installed.
  std::string Digest = codeDigest(V.Image, H.ImageSize, E.Image.GOTP);
  if (identityTag(Digest) != H.Code) {
    countHeld(Ctx, &tc_stats_t::cache_hash_mismatches);
    return TC_ERR_HASH_MISMATCH;
  }
  if (Digest != E.CodeDigest || !isPackageImage(E, V))
    return TC_ERR_UNKNOWN_ELEMENT;
  if (E.Image.hasData()) {
    const CachedCode *C = installResident(Ctx, H.Package, Element, E);
    if (!C)
      return TC_ERR_NO_MEMORY;
    callJam(Cache.executableCode(*C), E, V, JamCtx);
    return TC_OK;
  }
  unsigned Evicted = 0;
  CachedCode *C = Cache.reserve(H.Code, H.Package, Element, uint32_t(installedSize(E.Image)),
                                uint32_t(E.Image.Align), false, &Evicted);
  countHeld(Ctx, &tc_stats_t::cache_evictions, Evicted);
  if (!C) // larger than the whole cache: run it like no-cache mode
    return runFromScratch(Ctx, E, V, JamCtx);
  installImage(Cache.writableCode(*C), Cache.executableCode(*C), Cache.dataArea(*C), E.Image,
               E.ImportTable.data());
  countHeld(Ctx, &tc_stats_t::cache_installs);
  callJam(Cache.executableCode(*C), E, V, JamCtx);
  return TC_OK;
}

namespace twochains::rt {

tc_status_t refuseSandboxedImage(CoreContext *Ctx, const tc_package &Pkg, const PackageElement &E) {
  logLimited(Ctx->Code->SandboxedImageLog, TC_LOG_ERROR,
             "refused an injected frame of jam '" + E.Name + "' of package '" + Pkg.Name +
                 "': its image is built for the sandbox, and this receiver runs the package "
                 "natively (its Local frames run; docs/verified.md)");
  return TC_ERR_REFUSED;
}

const CachedCode *installResident(CoreContext *Ctx, uint64_t Package, uint32_t Element,
                                  const PackageElement &E) {
  if (!Ctx->Image->Cache) {
    // No-cache mode keeps resident code too: jams with statics, and
    // images too large for a slot, which were shipped ahead of their frames.
    auto Cache = std::make_unique<CodeCache>();
    std::string Error;
    if (Cache->create(Ctx->Image->CodeCacheSize, Error) != TC_OK) {
      logError(Error);
      return nullptr;
    }
    Ctx->Image->Cache = std::move(Cache);
  }
  CodeCache &Cache = *Ctx->Image->Cache;
  if (const CachedCode *C = Cache.find(E.CodeKey, Package, Element))
    return C;
  unsigned Evicted = 0;
  CachedCode *C = Cache.reserve(E.CodeKey, Package, Element, uint32_t(installedSize(E.Image)),
                                uint32_t(E.Image.Align), true, &Evicted);
  countHeld(Ctx, &tc_stats_t::cache_evictions, Evicted);
  if (!C) {
    logError("cannot install jam '" + E.Name + "': its " + std::to_string(installedSize(E.Image)) +
             " bytes of code and static data do not fit in the " +
             std::to_string(Cache.capacity()) + "-byte code cache beside the resident jams "
             "already installed (code_cache_size)");
    return nullptr;
  }
  installImage(Cache.writableCode(*C), Cache.executableCode(*C), Cache.dataArea(*C), E.Image,
               E.ImportTable.data());
  countHeld(Ctx, &tc_stats_t::cache_installs);
  return C;
}

tc_status_t runInjected(CoreContext *Ctx, const tc_package &Pkg, uint32_t Element,
                        const FrameView &V, tc_jam_ctx *JamCtx) {
  const PackageElement &E = Pkg.Elements[Element];
  // An image built for the sandbox runs only in a region (its code takes
  // x27 for a region's base): in a package this receiver runs natively,
  // only its Local-Function copy runs, and no such image enters the cache.
  if (E.Image.Sandbox)
    return refuseSandboxedImage(Ctx, Pkg, E);
  if (Ctx->Code->Mode == TC_MAILBOX_CODE_CACHE)
    return runCached(Ctx, Pkg, Element, V, JamCtx);
  if (V.Header.Kind == FrameCached) {
    // Only code shipped ahead of its frames, because it is larger than a
    // slot, is named in this mode.
    return Ctx->Image->Cache && runHeldCode(Ctx, E, V, JamCtx) ? TC_OK : TC_ERR_NOT_CACHED;
  }
  if (!isPackageImage(E, V))
    return TC_ERR_UNKNOWN_ELEMENT;
  if (E.Image.hasData()) {
    const CachedCode *C = installResident(Ctx, V.Header.Package, Element, E);
    if (!C)
      return TC_ERR_NO_MEMORY;
    callJam(Ctx->Image->Cache->executableCode(*C), E, V, JamCtx);
    return TC_OK;
  }
  return runFromScratch(Ctx, E, V, JamCtx);
}

} // namespace twochains::rt
