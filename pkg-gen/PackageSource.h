//===- PackageSource.h - The elements of a package source tree ------------===//
#ifndef TWOCHAINS_PKGGEN_PACKAGESOURCE_H
#define TWOCHAINS_PKGGEN_PACKAGESOURCE_H

#include "Exclusion.h"

#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace twochains::pkggen {

enum class ElementKind { Jam, Ried };

struct Element {
  ElementKind Kind;
  std::string Name;     // from jam_<name>.amc / ried_<name>.rdc
  std::string Source;   // absolute path
  /// A jam folder's other C files (jam_<name>/**/*.c), absolute and sorted:
  /// linked into the jam as a C linker would.
  std::vector<std::string> Parts;
  /// Compiler flags for this element only, after the package's.
  std::vector<std::string> Flags;
  /// A jam given as objects of another compiler (--jam-object) rather than
  /// as source: its objects for each ISA, in the order given. Source and
  /// Parts are then empty.
  std::map<std::string, std::vector<std::string>> Objects;
  unsigned ID = 0;
  bool isPrebuilt() const { return !Objects.empty(); }
};

/// What a package source holds, and what it leaves out.
struct SourceTree {
  std::vector<Element> Elements;
  /// Files and folders left out, each with the pattern that did it
  /// ("jam_md5/md5_test.c (jam_md5/.tcignore:2: '*_test.c')"), in walk order.
  std::vector<std::string> LeftOut;
  /// The .tcignore files read (absolute): a build depends on them.
  std::vector<std::string> ExcludeFiles;
};

/// The name of the file in a jam folder that lists what it leaves out.
constexpr const char *JamExcludeFile = ".tcignore";

/// Walks Root and its subfolders for jam_*.amc and ried_*.rdc, sorted by
/// name, but what Excludes (patterns relative to Root) leaves out. A folder
/// jam_<name>/ is one jam of several files: its entry is
/// jam_<name>/jam_<name>.amc and every .c file under it is a part, but
/// what its .tcignore (patterns relative to the folder) leaves out.
/// Reports every bad or duplicate name, with both paths. The tree may have
/// no elements (a package of jams given as objects).
llvm::Expected<SourceTree> findElements(llvm::StringRef Root, const ExcludeList &Excludes);

} // namespace twochains::pkggen

#endif
