//===- Driver.cpp - twochains-pkg-gen: a package folder to an installed package
//
//   twochains-pkg-gen --package NAME --source DIR --prefix DIR [--isa x86_64,aarch64] [-j N]
//                     [--sign-key KEY.pem]
//   twochains-pkg-gen --check-manifest PREFIX/lib/twochains/packages/NAME/manifest.tcm
//                     [--trusted-signers FILE]
//   twochains-pkg-gen --print-signer KEY.pem [--signer-comment TEXT]
//
// Steps: find elements -> assign stable IDs -> compile (parallel,
// incremental) -> link images and the Local-Function library -> manifest
// (signed with --sign-key) and header -> install, all or nothing.
//
//===----------------------------------------------------------------------===//
#include "Build.h"
#include "Isa.h"
#include "ElementIDs.h"
#include "Header.h"
#include "ImportCheck.h"
#include "Install.h"
#include "PackageSource.h"

#include "InputObject.h"
#include "JamImage.h"
#include "ManifestFormat.h"
#include "Sha256.h"
#include "Signature.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace twochains;
using namespace twochains::pkggen;

static cl::OptionCategory Category("twochains-pkg-gen options");
static cl::opt<std::string> PackageName("package", cl::desc("Package name"),
                                        cl::value_desc("name"), cl::cat(Category));
static cl::opt<std::string> SourceDir("source",
                                      cl::desc("Folder of jam_*.amc and ried_*.rdc files"),
                                      cl::value_desc("dir"), cl::cat(Category));
static cl::opt<std::string> InstallPrefix("prefix", cl::desc("Install prefix"),
                                   cl::value_desc("dir"), cl::cat(Category));
static cl::opt<std::string> ISAList("isa",
                                    cl::desc("Target ISAs, comma-separated "
                                             "(x86_64, aarch64; default: this machine's)"),
                                    cl::value_desc("list"), cl::cat(Category));
static cl::opt<bool> SandboxOpt("sandbox",
                                cl::desc("Build the jams for the verified sandbox of untrusted "
                                         "peers, on every ISA (docs/verified.md)"),
                                cl::cat(Category));
static cl::opt<std::string> BuildDirOpt("build-dir",
                                        cl::desc("Where intermediate files live between "
                                                 "builds (default: .twochains-build/<package>)"),
                                        cl::value_desc("dir"), cl::cat(Category));
static cl::opt<unsigned> Jobs("j", cl::desc("Parallel compilations (default: all cores)"),
                              cl::value_desc("N"), cl::init(0), cl::cat(Category));
static cl::opt<bool> Verbose("v", cl::desc("Also list what was up to date and what was left out"),
                             cl::cat(Category));
static cl::opt<std::string> CheckManifest("check-manifest",
                                          cl::desc("Validate an installed manifest and exit"),
                                          cl::value_desc("file"), cl::cat(Category));
static cl::opt<std::string> TrustedSigners(
    "trusted-signers",
    cl::desc("With --check-manifest: check that manifest.tcm.sig is a valid signature by "
             "a signer this file lists (one 'tc-ed25519 <key> [comment]' a line)"),
    cl::value_desc("file"), cl::cat(Category));
static cl::opt<std::string> SignKey(
    "sign-key",
    cl::desc("Sign the installed manifest with this Ed25519 private key (PEM, from "
             "`openssl genpkey -algorithm ed25519`): writes manifest.tcm.sig beside it"),
    cl::value_desc("key.pem"), cl::cat(Category));
static cl::opt<std::string> PrintSigner(
    "print-signer",
    cl::desc("Print the trusted-signers line of this key (private or public PEM) and exit"),
    cl::value_desc("key.pem"), cl::cat(Category));
static cl::opt<std::string> SignerComment(
    "signer-comment",
    cl::desc("With --print-signer: the line's comment (default: the key file's name)"),
    cl::value_desc("text"), cl::cat(Category));
static cl::opt<std::string> ClangPath("clang", cl::desc("clang to compile with"),
                                      cl::init(TWOCHAINS_CLANG), cl::cat(Category));
static cl::list<std::string> IncludeDirs("I", cl::Prefix,
                                         cl::desc("Add a header folder for every element"),
                                         cl::value_desc("dir"), cl::cat(Category));
static cl::list<std::string> Defines("D", cl::Prefix,
                                     cl::desc("Define a macro for every element"),
                                     cl::value_desc("macro[=value]"), cl::cat(Category));
static cl::list<std::string> Undefines("U", cl::Prefix,
                                       cl::desc("Undefine a macro for every element (after -D)"),
                                       cl::value_desc("macro"), cl::cat(Category));
static cl::opt<std::string> OptLevel("O", cl::Prefix,
                                     cl::desc("Optimisation level for every element (default 2)"),
                                     cl::value_desc("level"), cl::cat(Category));
static cl::opt<std::string> Standard("std", cl::desc("C standard for every element"),
                                     cl::value_desc("c11|gnu17|..."), cl::cat(Category));
static cl::list<std::string> PackageFlags(
    "flag",
    cl::desc("Another compiler flag for every element: -W<warning> or "
             "-f<option>, e.g. --flag=-fno-strict-aliasing (repeatable)"),
    cl::value_desc("flag"), cl::cat(Category));
static cl::list<std::string> ElementFlags(
    "element-flag",
    cl::desc("A compiler flag for one element only, after the package's: "
             "<element>=<flag>, e.g. crc=-O3 or json=-DJSON_NO_FLOAT (repeatable)"),
    cl::value_desc("element=flag"), cl::cat(Category));
static cl::list<std::string> ExternSymbols(
    "extern-symbol",
    cl::desc("A name the receiving program provides, which jams may import "
             "although no ried or library of the package defines it (repeatable)"),
    cl::value_desc("name"), cl::CommaSeparated, cl::cat(Category));
static cl::list<std::string> ExcludePatterns(
    "exclude",
    cl::desc("Leave out the files and folders of --source a .gitignore-style "
             "pattern matches, e.g. '*_test.c' or 'jam_md5/examples/' "
             "(repeatable; a jam folder's .tcignore lists its own)"),
    cl::value_desc("pattern"), cl::cat(Category));
static cl::list<std::string> JamObjects(
    "jam-object",
    cl::desc("A jam given as objects of another compiler (gcc -O2 -fPIC -fno-plt -c) "
             "instead of source: <jam>=<object>, once per object, for each ISA "
             "the package is built for (its ISA is read from the object; the "
             "entry is <jam>_main)"),
    cl::value_desc("jam=object"), cl::cat(Category));
static cl::opt<std::string> DepFilePath(
    "depfile",
    cl::desc("Write a make-style dependency file listing every file the build "
             "read (sources, headers, included files), for CMake's DEPFILE"),
    cl::value_desc("file"), cl::cat(Category));

static int fail(const Twine &Msg) {
  std::string Text = Msg.str();
  SmallVector<StringRef, 8> Lines;
  StringRef(Text).split(Lines, '\n', -1, false);
  for (StringRef L : Lines)
    WithColor::error(errs(), "twochains-pkg-gen") << L << '\n';
  return 1;
}

/// The flags an element may add: what changes how its C is read and
/// optimised, nothing that changes what is produced or where.
static bool isAllowedFlag(StringRef Flag) {
  for (StringRef Prefix : {"-I", "-D", "-U", "-O", "-std=", "-W", "-f"})
    if (Flag.starts_with(Prefix) && Flag.size() > Prefix.size())
      return !Flag.starts_with("-flto") && !Flag.starts_with("-fplugin=") &&
             !Flag.starts_with("-Wl,") && !Flag.starts_with("-Wa,") &&
             !Flag.starts_with("-Wp,");
  return false;
}

/// A make-style rule: the package's header and manifest depend on Inputs.
static Error writeDepFile(StringRef Path, StringRef Prefix, StringRef Package,
                          const std::vector<std::string> &Inputs) {
  auto Escape = [](StringRef P) {
    std::string Out;
    for (char C : P) {
      if (C == ' ' || C == '#' || C == '\\')
        Out.push_back('\\');
      if (C == '$')
        Out.push_back('$');
      Out.push_back(C);
    }
    return Out;
  };
  std::error_code EC;
  raw_fd_ostream OS(Path, EC);
  if (EC)
    return createStringError(EC, "cannot write " + Path + ": " + EC.message());
  SmallString<256> Header(Prefix), Manifest(Prefix);
  sys::path::append(Header, "include/twochains/packages", Package + ".h");
  sys::path::append(Manifest, "lib/twochains/packages", Package, "manifest.tcm");
  OS << Escape(Header) << " " << Escape(Manifest) << ":";
  for (const std::string &In : Inputs)
    OS << " \\\n  " << Escape(In);
  OS << "\n";
  return Error::success();
}

/// The plugin and headers of the Two-Chains install this tool belongs to.
static std::string besideTool(const char *Argv0, StringRef Rel) {
  std::string Exe = sys::fs::getMainExecutable(Argv0, (void *)&fail);
  SmallString<256> P(sys::path::parent_path(sys::path::parent_path(Exe)));
  sys::path::append(P, Rel);
  return std::string(P);
}

static Error driverError(const Twine &Msg) {
  return createStringError(inconvertibleErrorCode(), Msg);
}

/// --check-manifest's signature part: manifest.tcm.sig beside the
/// manifest, a valid signature of Bytes by a signer in the --trusted-signers
/// file (or, without one, by the key it names, said as such).
static int checkSignature(const std::string &ManifestPath, const std::string &Bytes) {
  std::string SigPath = ManifestPath + ".sig", Error;
  format::ManifestSignature Sig;
  format::FormatError Read = format::readManifestSignatureFile(SigPath, Sig, Error);
  if (Read == format::FormatError::Io && TrustedSigners.empty() && !sys::fs::exists(SigPath))
    return 0; // unsigned, and no one asked for a signature
  if (Read != format::FormatError::None)
    return fail(Error + (Read == format::FormatError::Io ? "\nthe package is not signed" : ""));
  std::string Key = std::string(format::Ed25519KeyType) + " " + format::hexOfKey(Sig.PublicKey);
  std::vector<format::TrustedSigner> Signers;
  const format::TrustedSigner *Signer = nullptr;
  if (!TrustedSigners.empty()) {
    if (format::readTrustedSignersFile(TrustedSigners, Signers, Error) != format::FormatError::None)
      return fail(Error);
    for (const format::TrustedSigner &S : Signers)
      if (S.PublicKey == Sig.PublicKey)
        Signer = &S;
    if (!Signer)
      return fail(SigPath + ": signed by " + Key + ", which " + TrustedSigners + " does not list");
  }
  if (!format::verifyEd25519(Sig.PublicKey.data(), Bytes.data(), Bytes.size(),
                             Sig.Signature.data()))
    return fail(SigPath + ": the signature does not match the manifest (changed after "
                          "signing, or signed for another manifest)");
  if (Signer)
    outs() << "signed by trusted signer '" << Signer->Comment << "' (" << Key << ")\n";
  else
    outs() << "signed by " << Key
           << " (the signature matches; no --trusted-signers to say whether to trust it)\n";
  return 0;
}

/// --check-manifest: the manifest checked as the loader checks it, and its
/// signature if it has one or --trusted-signers asks for one.
static int checkManifest(const std::string &Path) {
  // The bytes read once: the signature is checked against what was parsed.
  std::vector<uint8_t> Data;
  std::string Error;
  if (!format::readFileBytes(Path, Data, Error, format::ManifestMaxBytes))
    return fail(Path + ": " + Error);
  std::string Bytes(Data.begin(), Data.end());
  StringRef Dir = sys::path::parent_path(Path);
  format::ManifestData M;
  if (format::parseManifest(Bytes, Path, Dir.empty() ? "." : Dir.str(),
                            format::manifestFilesOnDisk(), M, Error) != format::FormatError::None)
    return fail(Error);
  outs() << "manifest of package '" << M.Package << "' is valid: "
         << M.Elements.size() << " entries, " << M.ISAs.size() << " ISAs\n";
  return checkSignature(Path, Bytes);
}

/// --print-signer: the line a trusted-signers file takes for the key.
static int printSigner(const std::string &KeyPath) {
  std::string Comment = SignerComment.getNumOccurrences() ? SignerComment.getValue()
                                                          : sys::path::filename(KeyPath).str();
  std::string Line, Error;
  if (format::signerLine(KeyPath, Comment, Line, Error) != format::FormatError::None)
    return fail(Error);
  outs() << Line << "\n";
  return 0;
}

/// What the command line asks for, read before anything runs: LLD, which
/// links the Local-Function library in this process, resets every
/// command-line option when it starts.
struct Request {
  std::string Prefix;
  std::string Source;
  std::string DepFile;
  std::string SignKey; // --sign-key, or ""
  BuildConfig Config;
  /// --element-flag, in order: (element, flag), an -I flag made absolute.
  std::vector<std::pair<std::string, std::string>> PerElement;
  /// --exclude, relative to the source folder.
  ExcludeList Excludes;
  /// --jam-object: jam name -> ISA -> its objects (absolute), in order.
  std::map<std::string, std::map<std::string, std::vector<std::string>>> JamObjects;
};

/// --jam-object=<jam>=<object>: each object's ISA read from it.
static Error readJamObjects(Request &R) {
  std::vector<std::string> Errors;
  for (StringRef Arg : JamObjects) {
    auto [Name, Path] = Arg.split('=');
    if (Name.empty() || Path.empty()) {
      Errors.push_back("--jam-object=" + Arg.str() + ": expected <jam>=<object>");
      continue;
    }
    if (!format::isValidName(Name)) {
      Errors.push_back("--jam-object=" + Arg.str() + ": invalid element name '" + Name.str() +
                       "': use letters, digits and '_'");
      continue;
    }
    auto Obj = jamlink::InputObject::open(Path);
    if (!Obj) {
      Errors.push_back("--jam-object=" + Arg.str() + ": " + toString(Obj.takeError()));
      continue;
    }
    uint16_t Machine = (*Obj)->Machine;
    if (Machine != ELF::EM_X86_64 && Machine != ELF::EM_AARCH64) {
      Errors.push_back("--jam-object=" + Arg.str() + ": machine " + std::to_string(Machine) +
                       " is not an ISA of jams (x86_64, aarch64)");
      continue;
    }
    SmallString<256> Abs(Path);
    sys::fs::make_absolute(Abs);
    std::string ISA(
        format::isaName(Machine == ELF::EM_X86_64 ? format::IsaX86_64 : format::IsaAArch64));
    R.JamObjects[Name.str()][ISA].push_back(std::string(Abs));
  }
  if (!Errors.empty())
    return driverError(join(Errors, "\n"));
  return Error::success();
}

/// The jams --jam-object gives, added to the source's elements: each needs
/// objects for every ISA the package is built for, and a name no source
/// element has.
static Error addPrebuiltJams(const Request &R, SourceTree &Tree) {
  std::vector<std::string> Errors;
  for (const auto &[Name, PerISA] : R.JamObjects) {
    auto Same = find_if(Tree.Elements, [&](const Element &E) { return E.Name == Name; });
    if (Same != Tree.Elements.end()) {
      Errors.push_back("--jam-object: jam '" + Name + "' is also " + Same->Source);
      continue;
    }
    std::vector<std::string> Lacking;
    for (const std::string &ISA : R.Config.ISAs)
      if (!PerISA.count(ISA))
        Lacking.push_back(ISA);
    if (!Lacking.empty()) {
      Errors.push_back("--jam-object: jam '" + Name + "' has no objects for " +
                       join(Lacking, ", ") + ", which the package is built for (--isa)");
      continue;
    }
    Element E;
    E.Kind = ElementKind::Jam;
    E.Name = Name;
    for (const std::string &ISA : R.Config.ISAs)
      E.Objects[ISA] = PerISA.at(ISA);
    Tree.Elements.push_back(std::move(E));
  }
  if (!Errors.empty())
    return driverError(join(Errors, "\n"));
  llvm::sort(Tree.Elements, [](const Element &A, const Element &B) { return A.Name < B.Name; });
  return Error::success();
}

/// --isa, or this machine's ISA.
static Expected<std::vector<std::string>> targetISAs() {
  std::string ISAText = ISAList;
  if (ISAText.empty())
    ISAText = format::isaName(
        StringRef(sys::getDefaultTargetTriple()).starts_with(format::isaName(format::IsaX86_64))
            ? format::IsaX86_64
            : format::IsaAArch64);
  SmallVector<StringRef, 2> ISAs;
  StringRef(ISAText).split(ISAs, ',', -1, false);
  std::vector<std::string> Out;
  for (StringRef ISA : ISAs) {
    if (!format::isaOf(std::string_view(ISA.data(), ISA.size())))
      return driverError("unknown ISA '" + ISA + "': expected " + format::KnownIsaNames);
    Out.push_back(ISA.str());
  }
  return Out;
}

/// --build-dir, or .twochains-build/<package>; absolute.
static std::string buildDirectory(StringRef Package) {
  SmallString<256> BuildDir(BuildDirOpt.empty() ? ".twochains-build" : BuildDirOpt.getValue());
  if (BuildDirOpt.empty())
    sys::path::append(BuildDir, Package);
  sys::fs::make_absolute(BuildDir);
  return std::string(BuildDir);
}

/// The compiler flags for every element: -I (made absolute), -D, -U, -O,
/// -std= and --flag, in that order.
static Error addPackageFlags(std::vector<std::string> &Flags) {
  for (const std::string &Dir : IncludeDirs) {
    SmallString<256> Abs(Dir);
    sys::fs::make_absolute(Abs);
    Flags.push_back("-I" + std::string(Abs));
  }
  for (const std::string &D : Defines)
    Flags.push_back("-D" + D);
  for (const std::string &U : Undefines)
    Flags.push_back("-U" + U);
  if (!OptLevel.empty())
    Flags.push_back("-O" + OptLevel);
  if (!Standard.empty())
    Flags.push_back("-std=" + Standard);
  for (StringRef Flag : PackageFlags) {
    if (!isAllowedFlag(Flag))
      return driverError("--flag=" + Flag + ": not one of -I<dir>, -D<macro>, "
                         "-U<macro>, -O<level>, -std=<std>, -W<warning>, -f<option>");
    Flags.push_back(Flag.str());
  }
  return Error::success();
}

/// --element-flag=<element>=<flag>, each flag one an element may add.
static Expected<std::vector<std::pair<std::string, std::string>>> readElementFlags() {
  std::vector<std::pair<std::string, std::string>> PerElement;
  for (StringRef Arg : ElementFlags) {
    auto [Name, Flag] = Arg.split('=');
    if (Name.empty() || Flag.empty())
      return driverError("--element-flag=" + Arg + ": expected <element>=<flag>");
    if (!isAllowedFlag(Flag))
      return driverError("--element-flag=" + Arg + ": '" + Flag +
                         "' is not one of -I<dir>, -D<macro>, -U<macro>, -O<level>, "
                         "-std=<std>, -W<warning>, -f<option>");
    std::string F = Flag.str();
    if (Flag.starts_with("-I")) {
      SmallString<256> Abs(Flag.drop_front(2));
      sys::fs::make_absolute(Abs);
      F = "-I" + std::string(Abs);
    }
    PerElement.emplace_back(Name.str(), F);
  }
  return PerElement;
}

/// The command line, checked: the package, its folders, the ISAs, the
/// compiler and plugin, and every flag.
static Expected<Request> readRequest(const char *Argv0) {
  if (PackageName.empty() || SourceDir.empty() || InstallPrefix.empty())
    return driverError("--package, --source and --prefix are required (see --help)");
  StringRef Pkg = PackageName;
  if (!format::isValidName(Pkg))
    return driverError("invalid package name '" + Pkg + "': use letters, digits and '_'");

  Request R;
  R.Prefix = InstallPrefix;
  R.Source = SourceDir;
  R.DepFile = DepFilePath;
  R.SignKey = SignKey;
  // The key checked now, not after the build: an unusable one fails at once.
  format::ManifestSignature Trial;
  std::string KeyError;
  if (!R.SignKey.empty() &&
      format::signManifest(R.SignKey, "", Trial, KeyError) != format::FormatError::None)
    return driverError("--sign-key: " + KeyError);
  BuildConfig &Config = R.Config;
  Config.Package = PackageName;
  Config.SourceRoot = SourceDir;
  Config.Clang = ClangPath;
  Config.Plugin = besideTool(Argv0, "lib/twochains/TwoChainsJam.so");
  Config.IncludeDir = besideTool(Argv0, "include");
  Config.Jobs = Jobs ? Jobs : get_physical_cores() > 0 ? unsigned(get_physical_cores()) : 2;
  Config.Verbose = Verbose;
  auto ISAs = targetISAs();
  if (!ISAs)
    return ISAs.takeError();
  Config.ISAs = std::move(*ISAs);
  Config.Sandbox = SandboxOpt;
  Config.SandboxDir = besideTool(Argv0, "lib/twochains/sandbox");
  if (Config.Sandbox && !sys::fs::exists(Config.SandboxDir + "/as"))
    return driverError("cannot find the sandbox's assembler " + Config.SandboxDir + "/as");
  Config.BuildDir = buildDirectory(Config.Package);
  for (const std::string &Tool : {Config.Plugin, Config.Clang})
    if (!sys::fs::exists(Tool))
      return driverError("cannot find " + Tool);
  if (Error E = addPackageFlags(Config.Flags))
    return E;
  Config.ExternSymbols.assign(ExternSymbols.begin(), ExternSymbols.end());
  auto PerElement = readElementFlags();
  if (!PerElement)
    return PerElement.takeError();
  R.PerElement = std::move(*PerElement);
  for (const std::string &Pattern : ExcludePatterns)
    if (Error E = R.Excludes.add(Pattern, "--exclude"))
      return E;
  if (Error E = readJamObjects(R))
    return E;
  return R;
}

/// The package's elements with their stable IDs, each with the flags
/// --element-flag gives it.
static Expected<SourceTree> findPackageElements(const Request &R) {
  auto Tree = findElements(R.Source, R.Excludes);
  if (!Tree)
    return Tree.takeError();
  if (Error E = addPrebuiltJams(R, *Tree))
    return E;
  if (Tree->Elements.empty())
    return driverError(R.Source + ": no jam_*.amc or ried_*.rdc files");
  if (R.Config.Verbose)
    for (const std::string &Out : Tree->LeftOut)
      outs() << "left out " << Out << "\n";
  std::vector<Element> *Elements = &Tree->Elements;
  bool IDsChanged = false;
  if (Error E = assignElementIDs(R.Source, *Elements, IDsChanged))
    return E;
  if (IDsChanged)
    outs() << "element IDs updated in " << R.Source << "/twochains.ids\n";
  for (const auto &[Name, Flag] : R.PerElement) {
    auto It = find_if(*Elements, [&](const Element &E) { return E.Name == Name; });
    if (It == Elements->end())
      return driverError("--element-flag: package '" + R.Config.Package +
                         "' has no element '" + Name + "'");
    It->Flags.push_back(Flag);
  }
  return Tree;
}

/// Element E's manifest entry for one ISA. The file it names is added to
/// Plan and, for a jam, its argument types to Args (for the header).
static Expected<format::ManifestElement> manifestEntry(const Element &E, const std::string &ISA,
                                                       const ISAOutputs &Out, InstallPlan &Plan,
                                                       std::map<std::string, JamArgs> &Args) {
  format::ManifestElement Entry;
  Entry.ID = E.ID;
  Entry.Name = E.Name;
  Entry.Fields["isa"] = ISA;
  if (E.Kind == ElementKind::Jam) {
    auto Image = readJamImage(Out.Images.at(E.Name));
    if (!Image)
      return Image.takeError();
    std::string Rel = ISA + "/jams/" + E.Name + ".jam";
    Entry.Kind = "jam";
    Entry.Fields["image"] = Rel;
    Entry.Fields["hash"] = Image->Hash;
    Entry.Fields["imports"] = join(Image->Imports, ",");
    if (auto Obj = jamlink::InputObject::open(Out.LocalObjects.at(E.Name))) {
      std::string Type = (*Obj)->Info.lookup(format::fact::Args);
      std::replace(Type.begin(), Type.end(), ' ', '+');
      Entry.Fields["args"] = Type;
      Args[E.Name] = {(*Obj)->Info.lookup(format::fact::Args),
                      (*Obj)->Info.lookup(format::fact::ArgsDecl)};
    } else {
      consumeError(Obj.takeError());
    }
    Plan.Files.push_back({Out.Images.at(E.Name), Rel});
  } else {
    std::string Rel = ISA + "/libried_" + E.Name + ".so";
    Entry.Kind = "ried";
    Entry.Fields["lib"] = Rel;
    Entry.Fields["hash"] = format::sha256File(Out.Rieds.at(E.Name));
    Plan.Files.push_back({Out.Rieds.at(E.Name), Rel});
  }
  return Entry;
}

/// What to install: the manifest with the package identity, the header,
/// and every file built with where it goes.
static Expected<InstallPlan> planInstall(const Request &R, const std::vector<Element> &Elements,
                                         const BuildResult &Built) {
  format::ManifestData M;
  M.Package = R.Config.Package;
  InstallPlan Plan;
  Plan.Prefix = R.Prefix;
  Plan.Package = R.Config.Package;
  std::map<std::string, JamArgs> Args;
  for (const auto &[ISA, Out] : Built.PerISA) {
    std::string LocalRel = ISA + "/" + sys::path::filename(Out.LocalLibrary).str();
    bool HasJams = !Out.Images.empty();
    M.ISAs[ISA] = {{"local", HasJams ? LocalRel : ""},
                   {"local-hash", HasJams ? format::sha256File(Out.LocalLibrary) : ""}};
    if (HasJams)
      Plan.Files.push_back({Out.LocalLibrary, LocalRel});
    for (const Element &E : Elements) {
      auto Entry = manifestEntry(E, ISA, Out, Plan, Args);
      if (!Entry)
        return Entry.takeError();
      M.Elements.push_back(std::move(*Entry));
    }
  }
  M.Identity = format::manifestIdentity(M);
  Plan.ManifestText = format::manifestText(M);
  if (!R.SignKey.empty()) {
    format::ManifestSignature Sig;
    std::string Error;
    if (format::signManifest(R.SignKey, Plan.ManifestText, Sig, Error) != format::FormatError::None)
      return driverError("--sign-key: " + Error);
    Plan.SignatureText = format::manifestSignatureText(Sig);
  }
  Plan.HeaderText = packageHeader(M.Package, M.Identity, Elements, Args);
  return Plan;
}

/// The last line: what was built, for which ISAs, and where it went.
static void printSummary(const Request &R, const std::vector<Element> &Elements,
                         const BuildResult &Built) {
  unsigned NumJams = count_if(Elements, [](const Element &E) {
    return E.Kind == ElementKind::Jam;
  });
  outs() << "package " << R.Config.Package << ": " << NumJams << " jams, "
         << Elements.size() - NumJams << " rieds, for " << join(R.Config.ISAs, ", ")
         << "; " << Built.Compiled << " compiled, " << Built.UpToDate
         << " up to date; installed under " << R.Prefix << "\n";
}

int main(int Argc, char **Argv) {
  InitLLVM X(Argc, Argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(
      Argc, Argv,
      "twochains-pkg-gen: builds a folder of jams and rieds into an installed\n"
      "Two-Chains package (header, manifest, jam images, Local-Function and\n"
      "ried libraries). See docs/packages.md.\n");
  if (!PrintSigner.empty())
    return printSigner(PrintSigner);
  if (!CheckManifest.empty())
    return checkManifest(CheckManifest);
  if (!TrustedSigners.empty())
    return fail("--trusted-signers goes with --check-manifest");
  auto R = readRequest(Argv[0]);
  if (!R)
    return fail(toString(R.takeError()));

  // 1. Elements and their stable IDs.
  auto Tree = findPackageElements(*R);
  if (!Tree)
    return fail(toString(Tree.takeError()));
  std::vector<Element> *Elements = &Tree->Elements;

  // 2. Compile and link.
  auto Built = buildPackage(R->Config, *Elements);
  if (!Built)
    return fail(toString(Built.takeError()) + "\nnothing was installed");
  // A changed .tcignore changes the parts.
  Built->Inputs.insert(Built->Inputs.end(), Tree->ExcludeFiles.begin(), Tree->ExcludeFiles.end());
  if (!R->DepFile.empty())
    if (Error E = writeDepFile(R->DepFile, R->Prefix, R->Config.Package, Built->Inputs))
      return fail(toString(std::move(E)));
  if (Error E = checkImports(R->Config, *Elements, *Built))
    return fail(toString(std::move(E)) + "\nnothing was installed");

  // 3. Manifest, identity, header.
  auto Plan = planInstall(*R, *Elements, *Built);
  if (!Plan)
    return fail(toString(Plan.takeError()) + "\nnothing was installed");

  // 4. Install, all or nothing.
  if (Error E = installPackage(*Plan))
    return fail(toString(std::move(E)) + "\nthe installed package was left as it was");
  printSummary(*R, *Elements, *Built);
  return 0;
}
