//===- Build.h - Compiling and linking a package's elements ---------------===//
#ifndef TWOCHAINS_PKGGEN_BUILD_H
#define TWOCHAINS_PKGGEN_BUILD_H

#include "PackageSource.h"

#include "llvm/Support/Error.h"
#include <map>
#include <string>
#include <vector>

namespace twochains::pkggen {

struct BuildConfig {
  std::string Package;
  std::string SourceRoot;
  std::string BuildDir;
  std::vector<std::string> ISAs;
  std::string Clang;
  std::string Plugin;
  std::string IncludeDir;
  unsigned Jobs = 1;
  bool Verbose = false;
  /// Compiler flags for every element (-I, -D, -U, -O, -std=), after the
  /// defaults; an element's own flags follow them.
  std::vector<std::string> Flags;
  /// Names the receiving program provides (beyond rieds, the C library and
  /// the jam API): imports of these are not build errors.
  std::vector<std::string> ExternSymbols;
  /// --sandbox: jams for the verified sandbox (docs/sandbox.md), compiled
  /// through its assembler (SandboxDir/as) and linked with jamlink --sandbox.
  bool Sandbox = false;
  std::string SandboxDir;
  /// Whether ISA's jams are built for the sandbox: with --sandbox, those of
  /// the ISAs that have one (aarch64); the others' are built plain.
  bool sandboxes(const std::string &ISA) const {
    return Sandbox && (ISA == "aarch64" || ISA == "x86_64");
  }
};

/// What the build produced for one ISA, as paths in the build directory.
struct ISAOutputs {
  std::map<std::string, std::string> Objects;     // jam name -> inject .o
  /// Jams given as objects: jam name -> its objects for this ISA.
  std::map<std::string, std::vector<std::string>> PrebuiltObjects;
  std::map<std::string, std::string> Images;      // jam name -> .jam
  std::map<std::string, std::string> LocalObjects;
  std::map<std::string, std::string> Rieds;       // ried name -> .so
  std::string LocalLibrary;
};

struct BuildResult {
  std::map<std::string, ISAOutputs> PerISA;
  unsigned Compiled = 0;      // compilations actually run
  unsigned UpToDate = 0;      // compilations skipped
  /// Every file the build read: sources, parts, and what clang listed for
  /// them (headers, included .c files), for a build system's depfile.
  std::vector<std::string> Inputs;
};

/// Compiles every jam (inject and local mode) and ried for every ISA, in
/// parallel and incrementally, then links images and the Local-Function
/// library. Compiler diagnostics are printed as they come; the error lists
/// every element that failed.
llvm::Expected<BuildResult> buildPackage(const BuildConfig &Config,
                                         const std::vector<Element> &Elements);

} // namespace twochains::pkggen

#endif
