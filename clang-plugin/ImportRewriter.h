//===- ImportRewriter.h - Route outside references through GOTP -----------===//
//
// Every reference to a symbol the jam does not define becomes
//
//   %tab = load ptr, ptr @__tc_gotp        ; PC-relative: GOTP is in the image
//   %p   = load ptr, ptr (gep %tab, i)     ; entry i of the receiver's table
//
// Both loads are invariant. Each is placed once per function, at the nearest
// block that dominates all its uses and lies outside every loop, so a call
// inside a loop costs only the indirect call.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_IMPORTREWRITER_H
#define TWOCHAINS_CLANG_PLUGIN_IMPORTREWRITER_H

#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include <string>
#include <vector>

namespace twochains {

/// Declarations named with this prefix import the symbol named by the rest.
/// The pass uses it where the module must also define a local symbol of the
/// same name (the __stack_chk_fail trampoline).
constexpr llvm::StringLiteral RenamedImportPrefix = "tc.import.";

/// The symbol an import declaration stands for on the receiver.
llvm::StringRef importName(const llvm::GlobalValue &GV);

/// Outside symbols the module references, in import-table order (sorted by
/// import name, so the order depends only on the set of imports).
std::vector<llvm::GlobalValue *> collectImports(llvm::Module &M);

/// Creates GOTP and rewrites every use of Imports[i] into loads of table
/// entry i. The import declarations are erased afterwards.
void rewriteImports(llvm::Module &M, llvm::ArrayRef<llvm::GlobalValue *> Imports,
                    llvm::FunctionAnalysisManager &FAM);

} // namespace twochains

#endif
