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
// In every mode only code this receiver already trusts runs, and only its
// own copy of it: an arrived image must be the package's, byte for byte
// (GOTP zero), and is compared, never run. (The paper's in-place mode ran
// code where it landed, in memory the peer could still write: gone.)
//
//===----------------------------------------------------------------------===//
#include "Identity.h"
#include "Log.h"
#include "Runtime.h"

#include <cstring>

using namespace twochains::rt;

/// The arrived image is the package's as it was built: GOTP is zero (the
/// receiver sets it in its own copy; senders learn no table address).
static bool isPackageImage(const PackageElement &E, const FrameView &V) {
  const std::vector<uint8_t> &Known = E.Image.Bytes;
  return V.Header.ImageSize == Known.size() &&
         std::memcmp(V.Image, Known.data(), Known.size()) == 0;
}

static void syncInstructions(const uint8_t *Code, size_t Size) {
  // aarch64: DC CVAU / DSB / IC IVAU / DSB / ISB over the range; x86: the
  // executing thread wrote nothing it runs through this alias, and code is
  // never modified while another thread runs it, so nothing is needed.
  auto *C = reinterpret_cast<char *>(const_cast<uint8_t *>(Code));
  __builtin___clear_cache(C, C + Size);
}

static void call(const uint8_t *Code, const PackageElement &E, const FrameView &V,
                 tc_jam_ctx *JamCtx) {
  JamCtx->Run->CodeBegin = uintptr_t(Code);
  JamCtx->Run->CodeEnd = uintptr_t(Code) + E.Image.Bytes.size();
  reinterpret_cast<JamEntry>(const_cast<uint8_t *>(Code) + E.Image.Entry)(
      JamCtx, const_cast<uint8_t *>(V.Payload), V.Header.PayloadSize);
}

/// Copies the package's image into W^X memory at (Write, Run) and readies it.
static void install(uint8_t *Write, const uint8_t *Run, const PackageElement &E) {
  std::memcpy(Write, E.Image.Bytes.data(), E.Image.Bytes.size());
  prepareInjected(Write, Run, E);
  syncInstructions(Run, E.Image.Bytes.size());
}

static tc_status_t runFromScratch(tc_context *Ctx, const PackageElement &E,
                                  const FrameView &V, tc_jam_ctx *JamCtx) {
  if (!Ctx->Scratch) {
    auto A = std::make_unique<CodeArena>();
    std::string Error;
    if (A->create(Ctx->SlotSize, Error) != TC_OK) {
      logError(Error);
      return TC_ERR_NO_MEMORY;
    }
    Ctx->Scratch = std::move(A);
  }
  install(Ctx->Scratch->writable(), Ctx->Scratch->executable(), E);
  call(Ctx->Scratch->executable(), E, V, JamCtx);
  return TC_OK;
}

static tc_status_t runCached(tc_context *Ctx, const tc_package &Pkg, uint32_t Element,
                             const FrameView &V, tc_jam_ctx *JamCtx) {
  const FrameHeader &H = V.Header;
  const PackageElement &E = Pkg.Elements[Element];
  CodeCache &Cache = *Ctx->Cache;
  if (const CachedCode *C = Cache.find(H.Code, H.Package, Element)) {
    // Held. A frame that carries the code anyway (TC_SEND_INJECTED_FULL)
    // must still carry exactly what it claims.
    if (H.Kind == FrameInjected && !isPackageImage(E, V)) {
      ++Ctx->Stats.cache_hash_mismatches;
      return TC_ERR_HASH_MISMATCH;
    }
    call(Cache.executableCode(*C), E, V, JamCtx);
    if (H.Kind == FrameCached)
      ++Ctx->Stats.frames_executed_cached;
    return TC_OK;
  }
  if (H.Kind == FrameCached) {
    // A hash that is not this element's code can never be installed: no
    // resend would help. The element's own hash, not held (never sent, or
    // evicted): the sender must send the code again.
    if (H.Code != E.CodeKey) {
      ++Ctx->Stats.cache_hash_mismatches;
      return TC_ERR_HASH_MISMATCH;
    }
    return TC_ERR_NOT_CACHED;
  }
  // First arrival: the bytes must hash to what the frame claims, and be
  // the package's own image, before anything is installed.
  std::string Digest = codeDigest(V.Image, H.ImageSize, E.Image.GOTP);
  if (identityTag(Digest) != H.Code) {
    ++Ctx->Stats.cache_hash_mismatches;
    return TC_ERR_HASH_MISMATCH;
  }
  if (Digest != E.CodeDigest || !isPackageImage(E, V))
    return TC_ERR_UNKNOWN_ELEMENT;
  unsigned Evicted = 0;
  CachedCode *C = Cache.reserve(H.Code, H.Package, Element, H.ImageSize, &Evicted);
  Ctx->Stats.cache_evictions += Evicted;
  if (!C) // larger than the whole cache: run it like no-cache mode
    return runFromScratch(Ctx, E, V, JamCtx);
  install(Cache.writableCode(*C), Cache.executableCode(*C), E);
  ++Ctx->Stats.cache_installs;
  call(Cache.executableCode(*C), E, V, JamCtx);
  return TC_OK;
}

namespace twochains::rt {

tc_status_t runInjected(tc_context *Ctx, const tc_package &Pkg, uint32_t Element,
                        const FrameView &V, tc_jam_ctx *JamCtx) {
  const PackageElement &E = Pkg.Elements[Element];
  if (Ctx->Mode == TC_MAILBOX_CODE_CACHE)
    return runCached(Ctx, Pkg, Element, V, JamCtx);
  if (V.Header.Kind == FrameCached)
    return TC_ERR_NOT_CACHED; // this receiver offered no cache: a broken sender
  if (!isPackageImage(E, V))
    return TC_ERR_UNKNOWN_ELEMENT;
  return runFromScratch(Ctx, E, V, JamCtx);
}

} // namespace twochains::rt
