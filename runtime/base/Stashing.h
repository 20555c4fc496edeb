//===- Stashing.h - Whether the NIC can stash frames into the LLC ---------===//
#ifndef TWOCHAINS_RUNTIME_BASE_STASHING_H
#define TWOCHAINS_RUNTIME_BASE_STASHING_H

#include <string>

namespace twochains::rt {

/// What this host offers for LLC stashing, said in a sentence (detected and
/// reported only: docs/runtime.md).
std::string detectStashing();

} // namespace twochains::rt

#endif
