//===- JamSymbols.h - Find a jam's entry and sender-side helpers in IR ----===//
#ifndef TWOCHAINS_CLANG_PLUGIN_JAMSYMBOLS_H
#define TWOCHAINS_CLANG_PLUGIN_JAMSYMBOLS_H

#include "JamOptions.h"
#include "llvm/IR/Module.h"

namespace twochains {

struct JamSymbols {
  std::string Element;
  llvm::Function *Entry = nullptr;
  llvm::Function *PayloadSize = nullptr; // sender side, may be null
  llvm::Function *PayloadInit = nullptr; // sender side, may be null
};

/// Finds the entry and helpers named by Opts, else marked by the plugin's
/// attributes, else by canonical name (<element>_main, _payload_size,
/// _payload_init). The front end has already checked their signatures.
llvm::Expected<JamSymbols> findJamSymbols(llvm::Module &M,
                                          const JamOptions &Opts);

/// Drops llvm.global.annotations: it only carried the attribute marks, and
/// it would keep every annotated function alive.
void dropAnnotations(llvm::Module &M);

/// Gives every definition but those in Keep internal linkage, so that
/// references among them become PC-relative and nothing else is exported.
void internalizeAllBut(llvm::Module &M,
                       llvm::ArrayRef<const llvm::GlobalValue *> Keep);

/// Erases internal functions and variables that nothing references any more
/// (sender-side helpers in inject mode, declarations whose uses were
/// rewritten). Returns true if anything was erased.
bool eraseDeadGlobals(llvm::Module &M);

} // namespace twochains

#endif
