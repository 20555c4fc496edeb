//===- Stashing.cpp - Is LLC stashing of the mailbox possible here? -------===//
//
// Stashing arriving frames into the receiver's last-level cache is a
// property of the hardware path. rdma-core 59 and later expose it as DMA
// handles with PCIe TPH steering (ibv_alloc_dmah); it also needs an RDMA
// device. Both are looked for at run time, without linking libibverbs.
//
//===----------------------------------------------------------------------===//
#include "base/Stashing.h"

#include <dlfcn.h>
#include <string>

namespace twochains::rt {

std::string detectStashing() {
  void *Verbs = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!Verbs)
    return "unavailable: libibverbs is not installed";
  std::string Status;
  using GetList = void **(*)(int *);
  using FreeList = void (*)(void **);
  auto Get = reinterpret_cast<GetList>(dlsym(Verbs, "ibv_get_device_list"));
  auto Free = reinterpret_cast<FreeList>(dlsym(Verbs, "ibv_free_device_list"));
  int Devices = 0;
  if (Get && Free) {
    if (void **List = Get(&Devices))
      Free(List);
  }
  if (!dlsym(Verbs, "ibv_alloc_dmah"))
    Status = "unavailable: this rdma-core has no ibv_alloc_dmah (PCIe TPH steering "
             "needs rdma-core 59 or later)";
  else if (Devices == 0)
    Status = "unavailable: no RDMA device";
  else
    // The mailbox is allocated and registered by UCX, which offers no way
    // to attach a DMA handle: reported, not used.
    Status = "available (" + std::to_string(Devices) +
             " RDMA devices, ibv_alloc_dmah) but not used: UCX registers the mailbox";
  dlclose(Verbs);
  return Status;
}

} // namespace twochains::rt
