//===- ImportCheck.cpp ----------------------------------------------------===//
#include "ImportCheck.h"

#include "JamImage.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace llvm;

namespace twochains::pkggen {
namespace {

/// Adds the names a shared library defines to Names.
Error addDefinedSymbols(StringRef Path, StringSet<> &Names) {
  auto Bin = object::createBinary(Path);
  if (!Bin)
    return createStringError(inconvertibleErrorCode(),
                             "cannot read " + Path + ": " +
                                 toString(Bin.takeError()));
  auto *ELF = dyn_cast<object::ELFObjectFileBase>(Bin->getBinary());
  if (!ELF)
    return createStringError(inconvertibleErrorCode(),
                             Path + ": not an ELF shared library");
  for (const object::ELFSymbolRef &Sym : ELF->getDynamicSymbolIterators()) {
    Expected<uint32_t> Flags = Sym.getFlags();
    Expected<StringRef> Name = Sym.getName();
    if (!Flags || !Name) {
      consumeError(Flags.takeError());
      consumeError(Name.takeError());
      continue;
    }
    if (!(*Flags & object::SymbolRef::SF_Undefined) && !Name->empty())
      Names.insert(*Name);
  }
  return Error::success();
}

/// Where the compiler finds a library for the target, or "" if it does not.
std::string findTargetLibrary(const BuildConfig &Config, StringRef ISA,
                              StringRef Lib) {
  SmallString<128> OutPath;
  sys::fs::createTemporaryFile("pkg-gen", "lib", OutPath);
  std::string Target = "--target=" + ISA.str() + "-linux-gnu";
  std::string Query = "-print-file-name=" + Lib.str();
  StringRef Args[] = {Config.Clang, Target, Query};
  std::optional<StringRef> Redirects[] = {StringRef(""), StringRef(OutPath),
                                          StringRef("")};
  int RC = sys::ExecuteAndWait(Config.Clang, Args, std::nullopt, Redirects);
  auto Buf = MemoryBuffer::getFile(OutPath);
  sys::fs::remove(OutPath);
  if (RC != 0 || !Buf)
    return "";
  std::string Path = (*Buf)->getBuffer().trim().str();
  // Not found: clang echoes the bare name.
  if (!sys::path::is_absolute(Path) || !sys::fs::exists(Path))
    return "";
  return Path;
}

} // namespace

Error checkImports(const BuildConfig &Config,
                   const std::vector<Element> &Elements,
                   const BuildResult &Built) {
  std::vector<std::string> Errors;
  for (const auto &[ISA, Out] : Built.PerISA) {
    StringSet<> Provided;
    for (const std::string &Name : Config.ExternSymbols)
      Provided.insert(Name);
    std::vector<std::string> Missing;
    for (StringRef Lib : {"libc.so.6", "libm.so.6", "libgcc_s.so.1"}) {
      std::string Path = findTargetLibrary(Config, ISA, Lib);
      if (Path.empty()) {
        Missing.push_back(Lib.str());
        continue;
      }
      if (Error Err = addDefinedSymbols(Path, Provided))
        return Err;
    }
    if (!Missing.empty()) {
      errs() << "twochains-pkg-gen: warning: cannot find " << join(Missing, ", ")
             << " for " << ISA << ": the imports of its jams are not checked\n";
      continue;
    }
    for (const auto &[Name, Lib] : Out.Rieds)
      if (Error Err = addDefinedSymbols(Lib, Provided))
        return Err;
    for (const Element &E : Elements) {
      if (E.Kind != ElementKind::Jam)
        continue;
      auto Image = readJamImage(Out.Images.at(E.Name));
      if (!Image)
        return Image.takeError();
      std::vector<std::string> Unresolved;
      for (const std::string &Import : Image->Imports)
        if (!Provided.contains(Import) && !StringRef(Import).starts_with("tc_jam_"))
          Unresolved.push_back("'" + Import + "'");
      if (Unresolved.empty())
        continue;
      Errors.push_back("jam '" + E.Name + "' (" + ISA + ") uses " + join(Unresolved, ", ") +
                       ", which no file of the jam, no ried of package '" + Config.Package +
                       "', the C library or the jam API defines: add the " +
                       (E.isPrebuilt() ? "object" : "source") + " that defines " +
                       (Unresolved.size() == 1 ? "it" : "them") + " to the jam (" +
                       (E.isPrebuilt() ? "another --jam-object=" + E.Name + "=<object>"
                                       : "a folder jam_" + E.Name + "/") +
                       ", docs/packages.md), or, if the receiving program provides it, "
                       "name it with --extern-symbol");
    }
  }
  if (!Errors.empty())
    return createStringError(inconvertibleErrorCode(), join(Errors, "\n"));
  return Error::success();
}

} // namespace twochains::pkggen
