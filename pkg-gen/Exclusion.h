//===- Exclusion.h - Files a package source leaves out --------------------===//
//
// A vendored library brings its tests, examples and benchmarks along, each
// with its own main(); as parts of a jam they break its link. Patterns
// leave them out, with the rules of .gitignore, which users of the
// library's own repository already know (docs/porting.md):
//
//   - one pattern a line; blank lines and lines starting with '#' are
//     ignored ('\#' for a leading '#'); trailing spaces are dropped;
//   - '*' and '?' match within one path component, '[a-z]' a class;
//     '**' as a whole component matches any number of folders;
//   - a pattern with a '/' before its end is anchored to the folder the
//     list belongs to; one without matches a name at any depth;
//   - a trailing '/' matches folders only (and so everything under them);
//   - '!' in front re-includes what an earlier pattern left out; the last
//     pattern that matches decides. A file in a left-out folder stays out.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_PKGGEN_EXCLUSION_H
#define TWOCHAINS_PKGGEN_EXCLUSION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/GlobPattern.h"
#include <memory>
#include <string>
#include <vector>

namespace twochains::pkggen {

class ExcludeList {
public:
  /// One pattern; Origin names where it comes from in messages
  /// ("--exclude", "jam_md5/.tcignore:3").
  llvm::Error add(llvm::StringRef Pattern, llvm::StringRef Origin);
  /// Every line of a .tcignore-style Text, read from Path.
  llvm::Error addFile(llvm::StringRef Text, llvm::StringRef Path);

  /// Where the pattern that leaves out Path ('/'-separated, relative to
  /// the folder the list belongs to) comes from and the pattern, as
  /// "jam_md5/.tcignore:3: '*_test.c'"; null if Path stays in.
  const std::string *excludedBy(llvm::StringRef Path, bool IsFolder) const;
  bool empty() const { return Rules.empty(); }

private:
  struct Rule {
    std::string Why;                       // "<origin>: '<pattern>'", for messages
    bool Negated = false;
    bool FoldersOnly = false;
    std::vector<std::string> Components;   // "**" kept as is
    std::vector<llvm::GlobPattern> Globs;  // refer to Components' bytes
  };
  /// Rules keep their addresses: each Rule's globs point into its strings.
  std::vector<std::unique_ptr<Rule>> Rules;

  static bool matches(const Rule &R, llvm::ArrayRef<llvm::StringRef> Path);
};

/// Bounds on what a list may hold: a .tcignore is read whole, and each of
/// its patterns is matched against every path of the folder.
constexpr size_t ExcludeFileMaxBytes = 64 * 1024;
constexpr size_t ExcludePatternMaxComponents = 64;

} // namespace twochains::pkggen

#endif
