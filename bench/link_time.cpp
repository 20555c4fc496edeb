//===- link_time.cpp - How long jamlink takes to link an image ------------===//
//
//   link-time [--repeat N] jam_a.o jam_b.o ...
//
// Links each object into an image in this process, N times, and prints the
// median time of reading the object, linking it and serialising the image
// (to a temporary file). Process start-up of the jamlink tool is measured
// separately by bench/link_time.py. A benchmark: it asserts nothing.
//
//===----------------------------------------------------------------------===//
#include "InputObject.h"
#include "JamImage.h"
#include "Linker.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace llvm;
using namespace twochains;
using namespace twochains::jamlink;

int main(int Argc, char **Argv) {
  int Repeat = 200;
  std::vector<std::string> Inputs;
  for (int I = 1; I < Argc; ++I) {
    if (!std::strcmp(Argv[I], "--repeat") && I + 1 < Argc)
      Repeat = std::atoi(Argv[++I]);
    else
      Inputs.push_back(Argv[I]);
  }
  SmallString<128> Tmp;
  sys::fs::createTemporaryFile("link-time", "jam", Tmp);
  outs() << "object                               image B   median us   min us\n";
  std::vector<double> Medians;
  for (const std::string &Path : Inputs) {
    std::vector<double> Times;
    size_t ImageSize = 0;
    for (int R = 0; R < Repeat; ++R) {
      auto Start = std::chrono::steady_clock::now();
      auto Obj = InputObject::open(Path);
      if (!Obj) {
        errs() << toString(Obj.takeError()) << '\n';
        return 1;
      }
      auto Image = linkImage(**Obj, {});
      if (!Image) {
        errs() << toString(Image.takeError()) << '\n';
        return 1;
      }
      if (Error E = writeJamImage(*Image, Tmp)) {
        errs() << toString(std::move(E)) << '\n';
        return 1;
      }
      auto End = std::chrono::steady_clock::now();
      Times.push_back(std::chrono::duration<double, std::micro>(End - Start).count());
      ImageSize = Image->Bytes.size();
    }
    std::sort(Times.begin(), Times.end());
    double Median = Times[Times.size() / 2];
    Medians.push_back(Median);
    outs() << left_justify(sys::path::filename(Path), 36) << ' '
           << llvm::format("%7zu %11.1f %8.1f\n", ImageSize, Median, Times.front());
  }
  std::sort(Medians.begin(), Medians.end());
  if (!Medians.empty())
    outs() << llvm::format("in-process link, median over jams: %.1f us (worst %.1f us)\n",
                     Medians[Medians.size() / 2], Medians.back());
  sys::fs::remove(Tmp);
  return 0;
}
