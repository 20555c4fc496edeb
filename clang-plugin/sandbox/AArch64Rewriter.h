//===- AArch64Rewriter.h - Confining clang's aarch64 assembly -------------===//
//
// The compiler half of the sandbox (docs/sandbox.md): clang, with x26-x28
// reserved by the plugin, emits assembly; each instruction that reaches
// memory, moves sp, loads x30 or branches through a register is rewritten
// into the guard sequences the verifier accepts. Everything else passes
// unchanged. The rewriter is not trusted: the receiver's verifier checks
// what comes out, and jamlink --sandbox runs it at link time.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_SANDBOX_AARCH64REWRITER_H
#define TWOCHAINS_CLANG_PLUGIN_SANDBOX_AARCH64REWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace twochains::sandbox {

/// Rewrites a whole assembly file. Name locates errors ("file:line: ...").
llvm::Expected<std::string> rewriteAArch64(llvm::StringRef Assembly, llvm::StringRef Name);

} // namespace twochains::sandbox

#endif
