//===- UcxMappings.h - The segments UCX maps while a peer's key unpacks ---===//
//
// Unpacking a peer's memory key makes UCX map the peer's shared-memory
// segment here (path/Mailbox.cpp checks what it mapped). libtwochains-ucx
// (UcxMappings.cpp) watches one thread's unpacks: the mappings libuct made
// through ucs_mmap, as mmap returned them, and whether every memory domain
// that unpacked is one known to map only so, or nothing. What it says is
// taken only where the kernel's count of this process's virtual memory
// grew by exactly what it lists (base/Mappings.h, virtualSize).
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_RUNTIME_UCX_UCXMAPPINGS_H
#define TWOCHAINS_RUNTIME_UCX_UCXMAPPINGS_H

#include <stddef.h>
#include <stdint.h>

extern "C" {

/// One mapping libuct made through ucs_mmap, as mmap made it.
struct twochains_ucx_mapping {
  uintptr_t Begin;
  size_t Length; // as asked for: the kernel maps whole pages
  int Prot, Flags;
  uint64_t Inode;  // of the descriptor mapped (0: anonymous)
  uint64_t Device; // of its file system (st_dev)
};

/// Starts watching this thread's key unpacks (forgetting earlier ones).
void twochains_ucx_watch_begin();
/// Stops watching. True if every memory domain that unpacked a key is one
/// that maps nothing or maps through ucs_mmap (posix, cma, tcp, self, ib,
/// ...: not sysv, xpmem or unknown ones) and at most Max mappings were
/// made; the mappings are then in Out[0, *Count).
bool twochains_ucx_watch_end(twochains_ucx_mapping *Out, size_t Max, size_t *Count);
}

struct uct_component;

namespace twochains::rt {
/// libtwochains-ucx's own (UcxRkeyGuard.cpp): a memory domain of Component
/// unpacked a key on this thread.
void noteKeyUnpacked(uct_component *Component);
} // namespace twochains::rt

#endif
