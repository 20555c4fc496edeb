//===- UcxMappings.cpp - The segments UCX maps while a peer's key unpacks -===//
//
// Where libuct maps a peer's POSIX segment (uct_posix_rkey_unpack) it calls
// ucs_mmap, in libucs: interposed here, as the other UCS calls of
// UcxAsyncGuard.cpp, since libtwochains-ucx comes before libucs in the
// process's lookup order. While a thread watches (twochains_ucx_watch_begin),
// what mmap returned to that thread's ucs_mmap is listed; other threads and
// other times pass straight through. A domain that maps otherwise (sysv:
// shmat; xpmem) or that this file does not know makes the list unusable:
// the caller then lists the process's mappings instead (path/Mailbox.cpp).
// A process that did not put this library first reaches libucs's ucs_mmap
// directly: nothing is listed, the kernel's count disagrees, and the caller
// falls back the same way.
//
//===----------------------------------------------------------------------===//
#include "ucx/UcxMappings.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <uct/api/uct.h>
#include <vector>

namespace {

using MmapFn = void *(*)(void *, size_t, int, int, int, off_t, const char *);

/// This thread's watch: whether on, the mappings made, and whether a
/// domain unpacked that may map other than through ucs_mmap.
struct Watch {
  bool On = false, Unknown = false;
  std::vector<twochains_ucx_mapping> Made;
};

thread_local Watch ThisThread;

MmapFn realMmap() {
  static MmapFn Real = reinterpret_cast<MmapFn>(dlsym(RTLD_NEXT, "ucs_mmap"));
  return Real;
}

/// Domains whose key unpack maps nothing here (the key names memory the
/// transport reaches otherwise), or maps only through ucs_mmap (posix).
bool mapsOnlyThroughUcsMmap(uct_component *Component) {
  static const char *const Known[] = {"posix", "cma", "knem", "self", "tcp", "ib", "rdmacm"};
  uct_component_attr_t A = {};
  A.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
  if (!Component || uct_component_query(Component, &A) != UCS_OK)
    return false;
  for (const char *Name : Known)
    if (!std::strcmp(A.name, Name))
      return true;
  return false;
}

} // namespace

void twochains::rt::noteKeyUnpacked(uct_component *Component) {
  if (ThisThread.On && !mapsOnlyThroughUcsMmap(Component))
    ThisThread.Unknown = true;
}

extern "C" {

__attribute__((visibility("default"))) void *ucs_mmap(void *Address, size_t Length, int Prot,
                                                      int Flags, int Fd, off_t Offset,
                                                      const char *Name) {
  MmapFn Real = realMmap();
  if (!Real)
    return MAP_FAILED;
  void *Made = Real(Address, Length, Prot, Flags, Fd, Offset, Name);
  if (ThisThread.On && Made != MAP_FAILED) {
    struct stat St;
    bool Known = Fd >= 0 && fstat(Fd, &St) == 0;
    ThisThread.Made.push_back({uintptr_t(Made), Length, Prot, Flags,
                               Known ? uint64_t(St.st_ino) : 0, Known ? uint64_t(St.st_dev) : 0});
  }
  return Made;
}

__attribute__((visibility("default"))) void twochains_ucx_watch_begin() {
  ThisThread.On = true;
  ThisThread.Unknown = false;
  ThisThread.Made.clear();
}

__attribute__((visibility("default"))) bool twochains_ucx_watch_end(twochains_ucx_mapping *Out,
                                                                    size_t Max, size_t *Count) {
  ThisThread.On = false;
  *Count = ThisThread.Made.size();
  if (ThisThread.Unknown || *Count > Max)
    return false;
  std::copy(ThisThread.Made.begin(), ThisThread.Made.end(), Out);
  return true;
}

} // extern "C"
