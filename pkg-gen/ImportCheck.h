//===- ImportCheck.h - Every import of a jam resolves on a receiver -------===//
//
// A jam's imports are looked up on the receiver in the package's rieds and
// then in the whole process (docs/jam-image-format.md). A name that is in
// neither is a source file left out of the jam, and would fail only when a
// receiver loads the package: this check makes it a build error.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_PKGGEN_IMPORTCHECK_H
#define TWOCHAINS_PKGGEN_IMPORTCHECK_H

#include "Build.h"

namespace twochains::pkggen {

/// Checks the images of every ISA against what a receiver provides: the
/// package's rieds, the C library (libc, libm, libgcc_s of the target, as
/// the compiler finds them), the jam API (tc_jam_*) and
/// Config.ExternSymbols. The error names each jam and the names it lacks.
llvm::Error checkImports(const BuildConfig &Config,
                         const std::vector<Element> &Elements,
                         const BuildResult &Built);

} // namespace twochains::pkggen

#endif
