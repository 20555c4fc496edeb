//===- JamGuardAArch64.cpp - The faulting PC on aarch64 --------------------===//
#include "containment/JamGuard.h"

#include <ucontext.h>

namespace twochains::rt {

uintptr_t signalPC(const void *UContext) {
  auto *U = static_cast<const ucontext_t *>(UContext);
  return U ? uintptr_t(U->uc_mcontext.pc) : 0;
}

} // namespace twochains::rt
