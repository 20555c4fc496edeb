//===- Context.h - The code layer's part of a context ---------------------===//
#ifndef TWOCHAINS_RUNTIME_CODE_CONTEXT_H
#define TWOCHAINS_RUNTIME_CODE_CONTEXT_H

#include "image/CodeCache.h"
#include "package/Context.h"

#include <list>
#include <memory>
#include <vector>

namespace twochains::rt {

struct CodeContext : PackageContext {
  tc_mailbox_mode_t Mode = TC_MAILBOX_DEFAULT;
  uint32_t CodeCacheSize = 1u << 20;
  /// Code-cache mode: injected images installed once, by content hash.
  std::unique_ptr<CodeCache> Cache;
  /// Where injected code that is not cached runs (no-cache mode, or an
  /// image larger than the cache): one slot's worth of W^X memory.
  std::unique_ptr<CodeArena> Scratch;
  /// Images shipped to us ahead of their frames (CodeTransfer.cpp), to
  /// check, install and answer on the control turn.
  struct PushedCode {
    ucp_ep_h Reply;
    uint64_t Package;
    uint32_t Element;
    tc_status_t Status;
    std::vector<uint8_t> Bytes;
    bool Received;
    /// An offer taken, which holds one of the MaxPendingCode places (a
    /// refused one only waits for its answer).
    bool Taken = false;
  };
  std::list<PushedCode> PushedCodes;
  struct CodeAnswer {
    ucp_ep_h From;
    uint64_t Package;
    uint32_t Element;
    tc_status_t Status;
  };
  std::vector<CodeAnswer> CodeAcks; // answers to our shipments
};

} // namespace twochains::rt

#endif
