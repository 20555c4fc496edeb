//===- SharedLibrary.h - jamlink --shared: the Local-Function library -----===//
#ifndef TWOCHAINS_JAMLINK_SHAREDLIBRARY_H
#define TWOCHAINS_JAMLINK_SHAREDLIBRARY_H

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace twochains::jamlink {

struct SharedOptions {
  std::vector<std::string> Inputs;   // local-mode objects
  std::string Output;
  std::string Package;               // must match the objects' if given
  /// Element ID by element name; empty means "in input order".
  llvm::StringMap<unsigned> IDs;
};

/// Links the local-mode objects and a generated vector of entry pointers
/// indexed by element ID (symbol tc_local_vector) into a shared library,
/// with LLD running in this process.
llvm::Error linkSharedLibrary(const SharedOptions &Opts);

} // namespace twochains::jamlink

#endif
