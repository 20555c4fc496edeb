//===- PassRegistration.h -------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_PASSREGISTRATION_H
#define TWOCHAINS_CLANG_PLUGIN_PASSREGISTRATION_H

#include "JamOptions.h"
#include "llvm/IR/PassManager.h"

namespace llvm {
class PassBuilder;
}

namespace twochains {

/// Appends the pass for Opts.Mode to MPM.
void addJamPass(llvm::ModulePassManager &MPM, const JamOptions &Opts);

/// Lets textual pipelines name twochains-jam-rewrite and twochains-jam-local.
void registerJamPipelineParsing(llvm::PassBuilder &PB);

} // namespace twochains

#endif
