//===- JamPasses.h - The jam IR passes ------------------------------------===//
//
//   twochains-jam-rewrite  inject mode: the bytes must run anywhere
//   twochains-jam-local    local mode: the Local-Function library's copy
//   twochains-jam-link     links a jam's other source files (bitcode) into
//                          the entry's module, as a C linker would
//
// The first two are module passes meant to run last in the optimisation
// pipeline, after every pass that may introduce new outside references;
// the link pass runs first, so the whole jam is optimised as one module.
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

class JamLinkPartsPass : public llvm::PassInfoMixin<JamLinkPartsPass> {
public:
  explicit JamLinkPartsPass(std::vector<std::string> Parts)
      : Parts(std::move(Parts)) {}
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &AM);
  static bool isRequired() { return true; }

private:
  std::vector<std::string> Parts;
};

} // namespace twochains

#endif
