//===- Build.cpp ----------------------------------------------------------===//
//
// A compilation is skipped when its key — the command line and the content
// of every file the compiler read for it (clang's -MD list) — matches the
// key stored beside its output by the previous build.
//
//===----------------------------------------------------------------------===//
#include "Build.h"

#include "JamImage.h"
#include "Linker.h"
#include "LocalObject.h"
#include "SharedLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include <atomic>
#include <mutex>
#include <set>

using namespace llvm;

namespace twochains::pkggen {
namespace {

struct Job {
  std::string What;                 // for progress lines
  std::string Output;
  std::vector<std::string> Args;    // Args[0] is the program
  std::string DepFile;              // empty: no dependency tracking
  std::string Element;
  std::string ToolKey = {};         // the plugin's content: a new plugin rebuilds all
  std::vector<std::string> Inputs = {}; // read by the compiler beyond -MD's list (parts)
};

std::string hashFile(StringRef Path) {
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return "missing";
  return toHex(SHA256::hash(arrayRefFromStringRef((*Buf)->getBuffer())));
}

/// The dependencies clang listed in a make-style .d file.
std::vector<std::string> readDepFile(StringRef Path) {
  std::vector<std::string> Deps;
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return Deps;
  std::string Text = (*Buf)->getBuffer().str();
  size_t Colon = Text.find(": ");
  if (Colon == std::string::npos)
    return Deps;
  std::string Rest;
  for (size_t I = Colon + 2; I < Text.size(); ++I) {
    if (Text[I] == '\\' && I + 1 < Text.size() && Text[I + 1] == '\n') {
      ++I;
      Rest.push_back(' ');
    } else if (Text[I] == '\\' && I + 1 < Text.size() && Text[I + 1] == ' ') {
      Rest.push_back('\x01'); // escaped space inside a path
      ++I;
    } else {
      Rest.push_back(Text[I]);
    }
  }
  SmallVector<StringRef, 32> Parts;
  StringRef(Rest).split(Parts, ' ', -1, false);
  for (StringRef P : Parts) {
    P = P.trim();
    if (P.empty())
      continue;
    std::string Dep = P.str();
    std::replace(Dep.begin(), Dep.end(), '\x01', ' ');
    Deps.push_back(Dep);
  }
  return Deps;
}

std::string jobKey(const Job &J) {
  SHA256 H;
  H.update(J.ToolKey);
  for (const std::string &A : J.Args) {
    H.update(A);
    H.update(ArrayRef<uint8_t>{0});
  }
  for (const std::string &In : J.Inputs) {
    H.update(In);
    H.update(hashFile(In));
  }
  if (!J.DepFile.empty())
    for (const std::string &Dep : readDepFile(J.DepFile)) {
      H.update(Dep);
      H.update(hashFile(Dep));
    }
  return toHex(H.final());
}

bool upToDate(const Job &J) {
  if (J.DepFile.empty() || !sys::fs::exists(J.Output) ||
      !sys::fs::exists(J.DepFile))
    return false;
  auto Stored = MemoryBuffer::getFile(J.Output + ".key");
  return Stored && (*Stored)->getBuffer() == jobKey(J);
}

class Runner {
public:
  Runner(const BuildConfig &Config, unsigned Total)
      : Config(Config), Total(Total) {}

  /// Runs Jobs in parallel; returns the names of elements that failed.
  std::vector<std::string> run(std::vector<Job> &Jobs, BuildResult &Result) {
    DefaultThreadPool Pool(hardware_concurrency(std::max(1u, Config.Jobs)));
    for (Job &J : Jobs)
      Pool.async([&] { runOne(J, Result); });
    Pool.wait();
    return Failed;
  }

private:
  const BuildConfig &Config;
  unsigned Total;
  std::atomic<unsigned> Done{0};
  std::mutex Lock;
  std::vector<std::string> Failed;

  void runOne(Job &J, BuildResult &Result) {
    if (upToDate(J)) {
      std::lock_guard<std::mutex> G(Lock);
      ++Result.UpToDate;
      unsigned N = ++Done;
      if (Config.Verbose)
        outs() << "[" << N << "/" << Total << "] up to date: " << J.What << "\n";
      return;
    }
    SmallString<128> ErrPath;
    sys::fs::createTemporaryFile("pkg-gen", "err", ErrPath);
    std::vector<StringRef> Args(J.Args.begin(), J.Args.end());
    std::optional<StringRef> Redirects[] = {StringRef(""), std::nullopt,
                                            StringRef(ErrPath)};
    std::string ExecError;
    int RC = sys::ExecuteAndWait(J.Args[0], Args, std::nullopt, Redirects, 0, 0,
                                 &ExecError);
    auto Diag = MemoryBuffer::getFile(ErrPath);
    sys::fs::remove(ErrPath);
    std::lock_guard<std::mutex> G(Lock);
    unsigned N = ++Done;
    ++Result.Compiled;
    outs() << "[" << N << "/" << Total << "] " << J.What << "\n";
    if (Diag && !(*Diag)->getBuffer().empty())
      errs() << (*Diag)->getBuffer();
    if (RC != 0) {
      if (!ExecError.empty())
        errs() << "twochains-pkg-gen: error: " << ExecError << "\n";
      Failed.push_back(J.Element);
      sys::fs::remove(J.Output);
      sys::fs::remove(J.Output + ".key");
      return;
    }
    if (!J.DepFile.empty()) {
      std::error_code EC;
      raw_fd_ostream Key(J.Output + ".key", EC);
      Key << jobKey(J);
    }
  }
};

/// The jobs of a package: the parts of jam folders, compiled to bitcode
/// first because the jams link it, then the jams (in both modes) and rieds.
struct JobList {
  std::vector<Job> PartJobs;
  std::vector<Job> ElementJobs;
};

/// A ried's constructor calls <name>_init() if the ried defines it. The
/// shim includes the ried, so the ried is one translation unit and clang's
/// -MD lists its source and headers (with the two compiled side by side,
/// the second's list replaced the first's, and an edited ried was never
/// rebuilt). Returns the shim's path.
std::string writeAutoInit(StringRef Dir, StringRef Name, StringRef Source) {
  SmallString<256> Path(Dir);
  sys::path::append(Path, "ried_" + Name + ".autoinit.c");
  std::error_code EC;
  raw_fd_ostream OS(Path, EC);
  OS << "/* Generated by twochains-pkg-gen: initialises ried '" << Name
     << "' when it is loaded. */\n"
     << "#include \"" << Source << "\"\n"
     << "extern void " << Name << "_init(void) __attribute__((weak));\n"
     << "__attribute__((constructor)) static void tc_ried_autoinit(void) {\n"
     << "  if (" << Name << "_init)\n    " << Name << "_init();\n}\n";
  return std::string(Path);
}

/// P absolute and without dots, as sources are named to clang.
std::string absolutePath(StringRef P) {
  SmallString<256> A(P);
  sys::fs::make_absolute(A);
  sys::path::remove_dots(A, /*remove_dot_dot=*/true);
  return std::string(A);
}

/// The command line every element's compilation for ISA starts with. The
/// prefix maps must match how sources are named to clang (absolutePath).
std::vector<std::string> commonArgs(const BuildConfig &Config, const std::string &ISA,
                                    const std::string &SourceRoot, const std::string &BuildRoot) {
  return {Config.Clang, "--target=" + ISA + "-linux-gnu", "-x", "c", "-O2",
          "-I" + Config.IncludeDir, "-fno-color-diagnostics",
          "-fdiagnostics-absolute-paths",
          // Reproducible outputs: no build or source folder in any byte
          // (__FILE__ in assert, debug info); the same sources give the same
          // image hashes wherever they are built.
          "-ffile-prefix-map=" + SourceRoot + "=.",
          "-ffile-prefix-map=" + BuildRoot + "=."};
}

/// A job of element E: its command line so far (Args), then More.
Job makeJob(const Element &E, const std::vector<std::string> &Args, std::string What,
            std::string Output, std::string DepFile, std::initializer_list<std::string> More) {
  Job J{std::move(What), std::move(Output), Args, std::move(DepFile), E.Name};
  J.Args.insert(J.Args.end(), More);
  return J;
}

/// Jam E for one ISA: each part of a jam folder to bitcode, then the jam in
/// inject mode and in local mode, both linking the parts' bitcode. Base is
/// the ISA's build folder with a trailing '/'.
void addJamJobs(const BuildConfig &Config, const Element &E, const std::string &ISA,
                const std::string &Base, const std::vector<std::string> &Args, ISAOutputs &Out,
                JobList &Jobs) {
  // A jam folder's other files: bitcode that both modes link.
  std::vector<std::string> Links, PartOutputs;
  for (const std::string &Part : E.Parts) {
    StringRef Rel = StringRef(Part).drop_front(sys::path::parent_path(E.Source).size() + 1);
    std::string Flat = Rel.str();
    std::replace(Flat.begin(), Flat.end(), '/', '+');
    std::string Out = Base + "jam_" + E.Name + ".parts/" + Flat + ".bc";
    sys::fs::create_directories(sys::path::parent_path(Out));
    Job P = makeJob(E, Args, "compile jam_" + E.Name + "/" + Rel.str() + " (" + ISA + ", part)",
                    Out, Out + ".d",
                    {"-fplugin=" + Config.Plugin, "-fplugin-arg-twochains-part", "-emit-llvm",
                     "-MD", "-MF", Out + ".d", "-c", Part, "-o", Out});
    Links.push_back("-fplugin-arg-twochains-link=" + Out);
    PartOutputs.push_back(Out);
    Jobs.PartJobs.push_back(std::move(P));
  }
  std::string InjectOut = Base + "jam_" + E.Name + ".o";
  std::string LocalOut = Base + "jam_" + E.Name + ".local.o";
  Job Inject = makeJob(E, Args, "compile jam_" + E.Name + ".amc (" + ISA + ", inject)", InjectOut,
                       Base + "jam_" + E.Name + ".d", {"-fplugin=" + Config.Plugin});
  if (Config.sandboxes(ISA))
    for (std::string A : {std::string("-fplugin-arg-twochains-sandbox"),
                          std::string("-fno-integrated-as"), "-B" + Config.SandboxDir})
      Inject.Args.push_back(std::move(A));
  Job Local = makeJob(E, Args, "compile jam_" + E.Name + ".amc (" + ISA + ", local)", LocalOut,
                      Base + "jam_" + E.Name + ".local.d",
                      {"-fPIC", "-fplugin=" + Config.Plugin, "-fplugin-arg-twochains-mode=local",
                       "-fplugin-arg-twochains-package=" + Config.Package});
  for (Job *J : {&Inject, &Local}) {
    J->Args.insert(J->Args.end(), Links.begin(), Links.end());
    J->Inputs = PartOutputs;
    for (std::string A : {std::string("-MD"), std::string("-MF"), J->DepFile, std::string("-c"),
                          E.Source, std::string("-o"), J->Output})
      J->Args.push_back(std::move(A));
  }
  Out.Images[E.Name] = Base + E.Name + ".jam";
  Out.Objects[E.Name] = Inject.Output;
  Out.LocalObjects[E.Name] = Local.Output;
  Jobs.ElementJobs.push_back(std::move(Inject));
  Jobs.ElementJobs.push_back(std::move(Local));
}

/// Ried E for one ISA: its autoinit shim compiled and linked into a shared
/// library.
void addRiedJob(StringRef Dir, const Element &E, const std::string &ISA, const std::string &Base,
                const std::vector<std::string> &Args, ISAOutputs &Out, JobList &Jobs) {
  std::string Shim = writeAutoInit(Dir, E.Name, E.Source);
  std::string Lib = Base + "libried_" + E.Name + ".so";
  std::string Dep = Base + "ried_" + E.Name + ".d";
  Job Ried = makeJob(E, Args, "build ried_" + E.Name + ".rdc (" + ISA + ")", Lib, Dep,
                     {"-fPIC", "-shared", "-fuse-ld=lld", "-MD", "-MF", Dep, Shim, "-o", Lib});
  Out.Rieds[E.Name] = Ried.Output;
  Jobs.ElementJobs.push_back(std::move(Ried));
}

/// Every compilation of the package for every ISA, in the ISA's folder
/// under the build directory; Result gets each ISA's output paths.
Error planJobs(const BuildConfig &Config, const std::vector<Element> &Elements, BuildResult &Result,
               JobList &Jobs) {
  const std::string SourceRoot = absolutePath(Config.SourceRoot);
  const std::string BuildRoot = absolutePath(Config.BuildDir);
  for (const std::string &ISA : Config.ISAs) {
    SmallString<256> Dir(Config.BuildDir);
    sys::path::append(Dir, ISA);
    if (std::error_code EC = sys::fs::create_directories(Dir))
      return createStringError(EC, "cannot create " + Dir + ": " + EC.message());
    ISAOutputs &Out = Result.PerISA[ISA];
    std::vector<std::string> Common = commonArgs(Config, ISA, SourceRoot, BuildRoot);
    for (const Element &E : Elements) {
      std::string Base = (Dir + "/").str();
      std::vector<std::string> Args = Common;
      Args.insert(Args.end(), Config.Flags.begin(), Config.Flags.end());
      Args.insert(Args.end(), E.Flags.begin(), E.Flags.end());
      if (E.isPrebuilt()) {
        // Nothing to compile: linked from its objects (linkPackage).
        Out.Images[E.Name] = Base + E.Name + ".jam";
        Out.PrebuiltObjects[E.Name] = E.Objects.at(ISA);
        Out.LocalObjects[E.Name] = Base + "jam_" + E.Name + ".local.o";
        continue;
      }
      Args.push_back("-I" + sys::path::parent_path(E.Source).str());
      if (E.Kind == ElementKind::Jam)
        addJamJobs(Config, E, ISA, Base, Args, Out, Jobs);
      else
        addRiedJob(Dir, E, ISA, Base, Args, Out, Jobs);
    }
    Out.LocalLibrary = (Dir + "/lib" + Config.Package + "_local.so").str();
  }
  return Error::success();
}

/// Runs the part jobs, then, if none failed, the others. Returns the
/// elements whose jobs failed.
std::vector<std::string> runJobs(const BuildConfig &Config, JobList &Jobs, BuildResult &Result) {
  // The compiler's own output depends on the plugin, which -MD does not
  // list: its content is part of every key.
  std::string ToolKey = hashFile(Config.Plugin) + "\n" + Config.Clang;
  for (std::vector<Job> *Phase : {&Jobs.PartJobs, &Jobs.ElementJobs})
    for (Job &J : *Phase)
      J.ToolKey = ToolKey;
  Runner R(Config, Jobs.PartJobs.size() + Jobs.ElementJobs.size());
  std::vector<std::string> Failed = R.run(Jobs.PartJobs, Result);
  if (Failed.empty())
    Failed = R.run(Jobs.ElementJobs, Result);
  return Failed;
}

/// What a build system must watch to rerun pkg-gen: every source and part,
/// and what clang listed for them (but the generated shims), sorted.
std::vector<std::string> buildInputs(const JobList &Jobs, const std::vector<Element> &Elements) {
  std::set<std::string> Inputs;
  for (const std::vector<Job> *Phase : {&Jobs.PartJobs, &Jobs.ElementJobs})
    for (const Job &J : *Phase)
      for (std::string &Dep : readDepFile(J.DepFile))
        if (!StringRef(Dep).ends_with(".autoinit.c"))
          Inputs.insert(std::move(Dep));
  for (const Element &E : Elements) {
    if (!E.Source.empty())
      Inputs.insert(E.Source);
    Inputs.insert(E.Parts.begin(), E.Parts.end());
    for (const auto &[ISA, Objects] : E.Objects)
      Inputs.insert(Objects.begin(), Objects.end());
  }
  return std::vector<std::string>(Inputs.begin(), Inputs.end());
}

/// Jam E given as objects, for one ISA: its image, linked from them as one
/// jam, and its object for the Local-Function library.
Error linkPrebuilt(const BuildConfig &Config, const Element &E, const std::string &ISA,
                   ISAOutputs &Out) {
  const std::vector<std::string> &Paths = Out.PrebuiltObjects.at(E.Name);
  outs() << "link jam " << E.Name << " from " << Paths.size() << " object"
         << (Paths.size() == 1 ? "" : "s") << " (" << ISA << ")\n";
  std::vector<std::unique_ptr<jamlink::InputObject>> Objs;
  std::vector<jamlink::InputObject *> Files;
  for (const std::string &Path : Paths) {
    auto Obj = jamlink::InputObject::open(Path);
    if (!Obj)
      return Obj.takeError();
    Files.push_back(Obj->get());
    Objs.push_back(std::move(*Obj));
  }
  jamlink::LinkOptions Opts{E.Name, ""};
  Opts.Sandbox = Config.sandboxes(ISA);
  auto Image = jamlink::linkImage(Files, Opts);
  if (!Image)
    return Image.takeError();
  if (Error Err = writeJamImage(*Image, Out.Images.at(E.Name)))
    return Err;
  return jamlink::makeLocalObject({Paths, Out.LocalObjects.at(E.Name), Config.Package, E.Name, ""});
}

/// Every jam's image and each ISA's Local-Function library. Linking is
/// fast and in process: always redone. The error lists every failure.
Error linkPackage(const BuildConfig &Config, const std::vector<Element> &Elements,
                  BuildResult &Result) {
  std::vector<std::string> Errors;
  for (auto &[ISA, Out] : Result.PerISA) {
    jamlink::SharedOptions Shared;
    Shared.Output = Out.LocalLibrary;
    Shared.Package = Config.Package;
    for (const Element &E : Elements) {
      if (E.Kind != ElementKind::Jam)
        continue;
      if (E.isPrebuilt()) {
        if (Error Err = linkPrebuilt(Config, E, ISA, Out))
          Errors.push_back(toString(std::move(Err)));
        Shared.Inputs.push_back(Out.LocalObjects[E.Name]);
        Shared.IDs[E.Name] = E.ID;
        continue;
      }
      auto Obj = jamlink::InputObject::open(Out.Objects[E.Name]);
      if (!Obj) {
        Errors.push_back(toString(Obj.takeError()));
        continue;
      }
      jamlink::LinkOptions Opts;
      Opts.Sandbox = Config.sandboxes(ISA);
      auto Image = jamlink::linkImage(**Obj, Opts);
      if (!Image) {
        Errors.push_back(toString(Image.takeError()));
        continue;
      }
      if (Error Err = writeJamImage(*Image, Out.Images[E.Name]))
        Errors.push_back(toString(std::move(Err)));
      Shared.Inputs.push_back(Out.LocalObjects[E.Name]);
      Shared.IDs[E.Name] = E.ID;
    }
    if (!Shared.Inputs.empty() && Errors.empty()) {
      outs() << "link " << sys::path::filename(Out.LocalLibrary) << " (" << ISA << ")\n";
      if (Error Err = jamlink::linkSharedLibrary(Shared))
        Errors.push_back(toString(std::move(Err)));
    }
  }
  if (!Errors.empty())
    return createStringError(inconvertibleErrorCode(), join(Errors, "\n"));
  return Error::success();
}

} // namespace

Expected<BuildResult> buildPackage(const BuildConfig &Config,
                                   const std::vector<Element> &Elements) {
  BuildResult Result;
  JobList Jobs;
  if (Error E = planJobs(Config, Elements, Result, Jobs))
    return E;
  std::vector<std::string> Failed = runJobs(Config, Jobs, Result);
  Result.Inputs = buildInputs(Jobs, Elements);
  if (!Failed.empty()) {
    llvm::sort(Failed);
    Failed.erase(std::unique(Failed.begin(), Failed.end()), Failed.end());
    return createStringError(inconvertibleErrorCode(),
                             "elements failed to build: " + join(Failed, ", "));
  }
  if (Error E = linkPackage(Config, Elements, Result))
    return E;
  return Result;
}

} // namespace twochains::pkggen
