//===- UcxRkeyGuard.cpp - Around a bug of UCX before 1.19 in rkey unpacking -===//
//
// ucp_ep_rkey_unpack unpacks a peer's memory key one memory domain at a
// time. In UCX 1.13 to 1.18, when one domain fails (a shared-memory
// segment the peer already removed: shmat fails), its error path destroys
// the half-built key as if every domain had been unpacked, and so releases
// entries that hold stale bytes from the key pool: a crash, or the release
// of another peer's live mapping. A peer decides whether its segment still
// exists when we unpack, so a hostile or dying sender could crash a
// receiver (upstream fixed it in 1.19: openucx/ucx 8721af17d3, "UCP/RKEY:
// Keep md_map consistent with tl_rkey").
//
// The two UCT calls libucp makes for this are interposed: a key bundle is
// released only if uct_rkey_unpack filled that very bundle and it has not
// been released since. This file is a library of its own, libtwochains-ucx,
// the first that libtwochains needs, so it comes before libuct in the
// process's lookup order and libucp's calls come here; the real functions
// are the next definitions (RTLD_NEXT). Programs built on the runtime's
// objects have it in the executable, first of all. Test: tc-security
// offer gone-key (docs/security.md).
//
//===----------------------------------------------------------------------===//
#include "ucx/UcxMappings.h"

#include <dlfcn.h>
#include <mutex>
#include <unordered_map>
#include <uct/api/uct.h>

namespace {

using UnpackFn = ucs_status_t (*)(uct_component_h, const void *, uct_rkey_bundle_t *);
using ReleaseFn = ucs_status_t (*)(uct_component_h, const uct_rkey_bundle_t *);

struct Guard {
  std::mutex Lock;
  /// Bundles uct_rkey_unpack filled and nothing released yet, with the key.
  std::unordered_map<const uct_rkey_bundle_t *, uct_rkey_t> Live;
  UnpackFn Unpack = reinterpret_cast<UnpackFn>(dlsym(RTLD_NEXT, "uct_rkey_unpack"));
  ReleaseFn Release = reinterpret_cast<ReleaseFn>(dlsym(RTLD_NEXT, "uct_rkey_release"));
};

Guard &guard() {
  static Guard *G = new Guard; // never destroyed: UCX releases keys at exit
  return *G;
}

} // namespace

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_rkey_unpack(uct_component_h Component, const void *Buffer, uct_rkey_bundle_t *Bundle) {
  Guard &G = guard();
  if (!G.Unpack)
    return UCS_ERR_UNSUPPORTED;
  ucs_status_t St = G.Unpack(Component, Buffer, Bundle);
  // Whether this domain may have mapped other than where UcxMappings.cpp
  // sees it.
  twochains::rt::noteKeyUnpacked(Component);
  if (St == UCS_OK) {
    std::lock_guard<std::mutex> L(G.Lock);
    G.Live[Bundle] = Bundle->rkey;
  }
  return St;
}

extern "C" __attribute__((visibility("default"))) ucs_status_t
uct_rkey_release(uct_component_h Component, const uct_rkey_bundle_t *Bundle) {
  Guard &G = guard();
  {
    std::lock_guard<std::mutex> L(G.Lock);
    auto It = G.Live.find(Bundle);
    // Never filled by an unpack, or filled and released already: the
    // entries UCX's error path releases by mistake. Nothing to release.
    if (It == G.Live.end() || It->second != Bundle->rkey)
      return UCS_OK;
    G.Live.erase(It);
  }
  return G.Release ? G.Release(Component, Bundle) : UCS_ERR_UNSUPPORTED;
}
