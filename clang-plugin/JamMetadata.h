//===- JamMetadata.h - The .tc.jam and .tc.imports sections ---------------===//
//
// Everything jamlink needs besides code and data travels in two sections of
// the object, excluded from any final link (SHF_EXCLUDE, not allocated):
//
//   .tc.jam      NUL-terminated "key=value" strings: tc.abi, mode, element,
//                entry, isa, gotp, imports, hash, and in local mode package,
//                payload-size, payload-init; args when the helpers declare it
//   .tc.imports  NUL-terminated import names in table order
//
// `llvm-readelf -p .tc.jam jam_x.o` prints them. docs/jam-object-format.md
// is the reference.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_JAMMETADATA_H
#define TWOCHAINS_CLANG_PLUGIN_JAMMETADATA_H

#include "JamOptions.h"
#include "llvm/IR/Module.h"
#include <string>
#include <utility>
#include <vector>

namespace twochains {

using JamInfo = std::vector<std::pair<std::string, std::string>>;

/// SHA-256 over the module's printed IR: any change of code, data or
/// imports changes it. Must run before the metadata globals are added.
std::string contentHash(const llvm::Module &M);

/// Adds the .tc.jam section with Info and, if Imports is non-empty, the
/// .tc.imports section.
void emitJamMetadata(llvm::Module &M, const JamInfo &Info,
                     llvm::ArrayRef<std::string> Imports);

} // namespace twochains

#endif
