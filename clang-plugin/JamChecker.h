//===- JamChecker.h - Source-level checks of a jam ------------------------===//
//
// Finds the entry and the sender-side helpers, checks their signatures, and
// diagnoses what cannot travel, all with source locations. Fills the options
// the IR pass reads once the translation unit is complete.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_JAMCHECKER_H
#define TWOCHAINS_CLANG_PLUGIN_JAMCHECKER_H

#include "JamOptions.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/CompilerInstance.h"
#include <memory>

namespace twochains {

std::unique_ptr<clang::ASTConsumer>
createJamChecker(clang::CompilerInstance &CI, std::shared_ptr<JamOptions> Opts);

} // namespace twochains

#endif
