//===- LowerLibcalls.h - Make the backend's library calls visible in IR ---===//
//
// The backend turns some IR into calls of library functions it names itself
// (memcpy for a large llvm.memcpy, sin for llvm.sin, __divti3 for a 128-bit
// division). Those calls would bypass the import table, so before the rewrite
// we turn them into ordinary calls of declared functions, which the rewrite
// then routes through GOTP like any other outside call.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_LOWERLIBCALLS_H
#define TWOCHAINS_CLANG_PLUGIN_LOWERLIBCALLS_H

#include "llvm/IR/Module.h"

namespace twochains {

/// Memory intrinsics with a constant length up to this many bytes are
/// expanded inline: memcpy and memset become their .inline variants, which
/// the backend must expand whatever the optimisation level and target
/// features (at -O0, -Oz or with -mno-sse it would otherwise call memcpy
/// even for a few bytes); memmove becomes one load and one store. Longer or
/// variable ones call the receiver's functions through the import table.
constexpr uint64_t MaxInlineMemOpBytes = 64;

/// Rewrites library-call-producing IR in the module's definitions. Reports
/// constructs that would need a library call it cannot route (fp128
/// arithmetic) through the context's diagnostics. Returns true on change.
bool lowerLibcalls(llvm::Module &M);

} // namespace twochains

#endif
