//===- ExcludeListFuzzer.cpp - pkg-gen's .tcignore reader and matcher -----===//
//
// The input is a .tcignore, then a NUL, then paths to match, one a line (a
// trailing '/' asks about a folder). ExcludeList::addFile reads the list as
// pkg-gen reads a jam folder's; every path is matched against it. A list
// it refuses must be an error, and matching must stay linear in pattern
// by path however many '**' a pattern has (the run's timeout catches a
// matcher that backtracks).
//
//===----------------------------------------------------------------------===//
#include "Exclusion.h"

#include "llvm/ADT/StringRef.h"
#include <cstdlib>

using namespace llvm;
using namespace twochains::pkggen;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  StringRef Input(reinterpret_cast<const char *>(Data), Size);
  auto [Text, Paths] = Input.split('\0');
  ExcludeList List;
  if (Error E = List.addFile(Text, "jam_fuzz/.tcignore")) {
    consumeError(std::move(E));
    return 0;
  }
  while (!Paths.empty()) {
    auto [Path, Rest] = Paths.split('\n');
    Paths = Rest;
    bool IsFolder = Path.consume_back("/");
    if (const std::string *Why = List.excludedBy(Path, IsFolder))
      // A pattern that decides names where it was written.
      if (!StringRef(*Why).starts_with("jam_fuzz/.tcignore:"))
        std::abort();
  }
  return 0;
}
