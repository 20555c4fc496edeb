//===- Driver.cpp - jamlink: the jam linker -------------------------------===//
//
//   jamlink jam_x.o -o x.jam                    image mode
//   jamlink jam_x.o lib_a.o lib_b.o -o x.jam    a jam of several objects
//   jamlink --shared a.local.o b.local.o -o libpkg_local.so
//   jamlink --dump x.jam
//   jamlink --sandbox jam_x.o -o x.jam          for the verified sandbox
//
//===----------------------------------------------------------------------===//
#include "Dump.h"
#include "JamImage.h"
#include "Linker.h"
#include "SharedLibrary.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace twochains;
using namespace twochains::jamlink;

static cl::OptionCategory Category("jamlink options");

static cl::list<std::string> Inputs(cl::Positional, cl::desc("<input files>"),
                                    cl::cat(Category));
static cl::opt<std::string> Output("o", cl::desc("Output file"),
                                   cl::value_desc("path"), cl::cat(Category));
static cl::opt<bool> Shared("shared",
                            cl::desc("Build the Local-Function library from "
                                     "local-mode objects"),
                            cl::cat(Category));
static cl::opt<bool> Dump("dump",
                          cl::desc("Print an image's header, imports, fixups "
                                   "and disassembled code"),
                          cl::cat(Category));
static cl::opt<std::string> Element("element",
                                    cl::desc("Element name (default: from the "
                                             "object's .tc.jam or jam_<name>.o)"),
                                    cl::value_desc("name"), cl::cat(Category));
static cl::opt<std::string> Entry("entry",
                                  cl::desc("Entry symbol (default: from .tc.jam "
                                           "or <element>_main)"),
                                  cl::value_desc("symbol"), cl::cat(Category));
static cl::opt<std::string> OutputDir(
    "output-dir",
    cl::desc("Image mode: link each input into <dir>/<element>.jam, in one "
             "process (none is written if any fails)"),
    cl::value_desc("dir"), cl::cat(Category));
static cl::opt<std::string> Package("package",
                                    cl::desc("--shared: package name (default: "
                                             "from the objects)"),
                                    cl::value_desc("name"), cl::cat(Category));
static cl::list<std::string> IDs("id",
                                 cl::desc("--shared: element ID, as name=N "
                                          "(default: input order)"),
                                 cl::value_desc("name=N"), cl::cat(Category));

static cl::opt<bool> Sandbox("sandbox",
                             cl::desc("Image mode: link for the verified sandbox of untrusted "
                                      "peers (aarch64, objects of twochains-jamcc --sandbox); "
                                      "the code is verified as the receiver will "
                                      "(docs/sandbox.md)"),
                             cl::cat(Category));

static int fail(const Twine &Msg) {
  std::string Text = Msg.str();
  SmallVector<StringRef, 8> Lines;
  StringRef(Text).split(Lines, '\n', -1, false);
  for (StringRef L : Lines)
    WithColor::error(errs(), "jamlink") << L << '\n';
  return 1;
}

/// --output-dir: many images in one process, so the cost of starting the
/// tool (loading libLLVM) is paid once per package rather than per jam.
static int linkAll() {
  if (!Output.empty())
    return fail("-o and --output-dir cannot be combined");
  if (!Element.empty() || !Entry.empty())
    return fail("--element and --entry name one jam; they cannot be used "
                "with --output-dir");
  std::vector<JamImage> Images;
  std::string Errors;
  for (const std::string &In : Inputs) {
    auto Obj = InputObject::open(In);
    if (!Obj) {
      Errors += toString(Obj.takeError()) + "\n";
      continue;
    }
    LinkOptions Opts;
    Opts.Sandbox = Sandbox;
    auto Image = linkImage(**Obj, Opts);
    if (!Image) {
      Errors += toString(Image.takeError()) + "\n";
      continue;
    }
    for (const JamImage &Other : Images)
      if (Other.Element == Image->Element)
        Errors += In + ": element '" + Image->Element +
                  "' is also linked from " + Other.Source + "\n";
    Images.push_back(std::move(*Image));
  }
  if (!Errors.empty())
    return fail(Errors);
  if (std::error_code EC = sys::fs::create_directories(OutputDir))
    return fail("cannot create " + OutputDir + ": " + EC.message());
  for (const JamImage &Image : Images) {
    SmallString<128> Path(OutputDir);
    sys::path::append(Path, Image.Element + ".jam");
    if (Error E = writeJamImage(Image, Path))
      return fail(toString(std::move(E)));
  }
  return 0;
}

int main(int Argc, char **Argv) {
  InitLLVM X(Argc, Argv);
  cl::HideUnrelatedOptions(Category);
  cl::ParseCommandLineOptions(
      Argc, Argv,
      "jamlink: links Two-Chains jam objects into jam images (the bytes that\n"
      "travel in a message) and builds a package's Local-Function library.\n\n"
      "  jamlink jam_x.o -o x.jam\n"
      "  jamlink jam_x.o md5.o sha1.o -o x.jam      (one jam of several objects)\n"
      "  jamlink jam_a.o jam_b.o --output-dir images/\n"
      "  jamlink --shared jam_a.local.o jam_b.local.o -o libpkg_local.so\n"
      "  jamlink --dump x.jam\n");

  if (Sandbox && (Shared || Dump))
    return fail("--sandbox links jam images; it cannot be combined with --shared or --dump");
  if (Shared && Dump)
    return fail("--shared and --dump cannot be combined");
  if (Inputs.empty())
    return fail("no input files");

  if (Dump) {
    if (Inputs.size() != 1)
      return fail("--dump takes one image");
    auto Image = readJamImage(Inputs[0]);
    if (!Image)
      return fail(toString(Image.takeError()));
    if (Error E = dumpImage(*Image, outs()))
      return fail(toString(std::move(E)));
    return 0;
  }

  if (!Shared && !OutputDir.empty())
    return linkAll();

  if (Output.empty())
    return fail("no output file (-o)");

  if (Shared) {
    SharedOptions Opts;
    Opts.Inputs.assign(Inputs.begin(), Inputs.end());
    Opts.Output = Output;
    Opts.Package = Package;
    for (const std::string &Spec : IDs) {
      auto [Name, Num] = StringRef(Spec).split('=');
      unsigned N;
      if (Name.empty() || !to_integer(Num, N, 10))
        return fail("--id expects name=N, got '" + Spec + "'");
      Opts.IDs[Name] = N;
    }
    if (Error E = linkSharedLibrary(Opts))
      return fail(toString(std::move(E)));
    return 0;
  }

  // The objects of one jam: its name and entry come from the one named
  // jam_<name>.o (or --element), its global names are resolved between them.
  std::vector<std::unique_ptr<InputObject>> Objs;
  std::string Errors;
  for (const std::string &In : Inputs) {
    auto Obj = InputObject::open(In);
    if (!Obj)
      Errors += toString(Obj.takeError()) + "\n";
    else
      Objs.push_back(std::move(*Obj));
  }
  if (!Errors.empty())
    return fail(Errors);
  std::vector<InputObject *> Files;
  for (auto &O : Objs)
    Files.push_back(O.get());
  LinkOptions Opts{Element, Entry};
  Opts.Sandbox = Sandbox;
  auto Image = linkImage(Files, Opts);
  if (!Image)
    return fail(toString(Image.takeError()));
  if (Error E = writeJamImage(*Image, Output))
    return fail(toString(std::move(E)));
  return 0;
}
