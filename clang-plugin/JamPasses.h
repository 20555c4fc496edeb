//===- JamPasses.h - The jam IR passes ------------------------------------===//
//
//   twochains-jam-rewrite  inject mode: the bytes must run anywhere
//   twochains-jam-local    local mode: the Local-Function library's copy
//
// Both are module passes meant to run last in the optimisation pipeline,
// after every pass that may introduce new outside references.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_JAMPASSES_H
#define TWOCHAINS_CLANG_PLUGIN_JAMPASSES_H

#include "JamOptions.h"
#include "llvm/IR/PassManager.h"

namespace twochains {

class JamRewritePass : public llvm::PassInfoMixin<JamRewritePass> {
public:
  explicit JamRewritePass(JamOptions Opts) : Opts(std::move(Opts)) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &AM);
  static bool isRequired() { return true; }

private:
  JamOptions Opts;
};

class JamLocalPass : public llvm::PassInfoMixin<JamLocalPass> {
public:
  explicit JamLocalPass(JamOptions Opts) : Opts(std::move(Opts)) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &AM);
  static bool isRequired() { return true; }

private:
  JamOptions Opts;
};

} // namespace twochains

#endif
