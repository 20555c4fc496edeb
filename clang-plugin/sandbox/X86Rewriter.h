//===- X86Rewriter.h - Confining clang's x86-64 assembly ------------------===//
//
// The compiler half of the x86-64 sandbox (docs/sandbox.md, "x86-64"):
// clang emits assembly for a jam without jump tables, red zone, stack
// protector or frame pointer; each instruction that reaches memory, moves
// %rsp, returns or branches through a register or memory is rewritten
// into the guard sequences the verifier accepts, in 32-byte bundles.
// The rewriter is not trusted: the receiver's verifier checks what comes
// out, and jamlink --sandbox runs it at link time.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_SANDBOX_X86REWRITER_H
#define TWOCHAINS_CLANG_PLUGIN_SANDBOX_X86REWRITER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace twochains::sandbox {

/// Rewrites a whole assembly file. Name locates errors ("file:line: ...").
llvm::Expected<std::string> rewriteX86_64(llvm::StringRef Assembly, llvm::StringRef Name);

} // namespace twochains::sandbox

#endif
