//===- Install.cpp --------------------------------------------------------===//
//
//   <prefix>/include/twochains/packages/<package>.h
//   <prefix>/lib/twochains/packages/<package>/manifest.tcm
//   <prefix>/lib/twochains/packages/<package>/manifest.tcm.sig  (signed)
//   <prefix>/lib/twochains/packages/<package>/<isa>/jams/<element>.jam
//   <prefix>/lib/twochains/packages/<package>/<isa>/lib<package>_local.so
//   <prefix>/lib/twochains/packages/<package>/<isa>/libried_<element>.so
//
//===----------------------------------------------------------------------===//
#include "Install.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace twochains::pkggen {

static Error fsError(std::error_code EC, const Twine &What) {
  return createStringError(EC, What + ": " + EC.message());
}

static Error writeText(StringRef Path, StringRef Text) {
  std::error_code EC;
  raw_fd_ostream OS(Path, EC);
  if (EC)
    return fsError(EC, "cannot write " + Path);
  OS << Text;
  OS.close();
  if (OS.has_error())
    return fsError(OS.error(), "cannot write " + Path);
  return Error::success();
}

Error installPackage(const InstallPlan &Plan) {
  SmallString<256> PkgRoot(Plan.Prefix), IncDir(Plan.Prefix);
  sys::path::append(PkgRoot, "lib", "twochains", "packages");
  sys::path::append(IncDir, "include", "twochains", "packages");
  for (StringRef D : {StringRef(PkgRoot), StringRef(IncDir)})
    if (std::error_code EC = sys::fs::create_directories(D))
      return fsError(EC, "cannot create " + D);

  std::string Tag = std::to_string(sys::Process::getProcessId());
  SmallString<256> Final(PkgRoot), Staging(PkgRoot), Old(PkgRoot);
  sys::path::append(Final, Plan.Package);
  sys::path::append(Staging, "." + Plan.Package + ".new." + Tag);
  sys::path::append(Old, "." + Plan.Package + ".old." + Tag);
  SmallString<256> Header(IncDir), HeaderStaging(IncDir);
  sys::path::append(Header, Plan.Package + ".h");
  sys::path::append(HeaderStaging, "." + Plan.Package + ".h.new." + Tag);

  auto Cleanup = [&] {
    sys::fs::remove_directories(Staging);
    sys::fs::remove(HeaderStaging);
  };
  for (const auto &[From, Rel] : Plan.Files) {
    SmallString<256> To(Staging);
    sys::path::append(To, Rel);
    if (std::error_code EC = sys::fs::create_directories(sys::path::parent_path(To))) {
      Cleanup();
      return fsError(EC, "cannot create " + sys::path::parent_path(To));
    }
    if (std::error_code EC = sys::fs::copy_file(From, To)) {
      Cleanup();
      return fsError(EC, "cannot copy " + From + " to " + To);
    }
  }
  SmallString<256> ManifestPath(Staging);
  sys::path::append(ManifestPath, "manifest.tcm");
  if (Error E = writeText(ManifestPath, Plan.ManifestText)) {
    Cleanup();
    return E;
  }
  if (!Plan.SignatureText.empty())
    if (Error E = writeText(std::string(ManifestPath) + ".sig", Plan.SignatureText)) {
      Cleanup();
      return E;
    }
  if (Error E = writeText(HeaderStaging, Plan.HeaderText)) {
    Cleanup();
    return E;
  }

  // Swap: old package aside, new one in, header last; undo on failure.
  bool HadOld = sys::fs::exists(Final);
  if (HadOld)
    if (std::error_code EC = sys::fs::rename(Final, Old)) {
      Cleanup();
      return fsError(EC, "cannot move the installed package aside");
    }
  if (std::error_code EC = sys::fs::rename(Staging, Final)) {
    if (HadOld)
      sys::fs::rename(Old, Final);
    Cleanup();
    return fsError(EC, "cannot install " + Final);
  }
  if (std::error_code EC = sys::fs::rename(HeaderStaging, Header)) {
    sys::fs::remove_directories(Final);
    if (HadOld)
      sys::fs::rename(Old, Final);
    Cleanup();
    return fsError(EC, "cannot install " + Header);
  }
  if (HadOld)
    sys::fs::remove_directories(Old);
  return Error::success();
}

} // namespace twochains::pkggen
