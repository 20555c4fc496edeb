//===- verify_speed.cpp - What the sandbox's verifier costs a receiver ----===//
//
//   verify-speed IMAGE.jam...
//
// Sandboxed images (jamlink --sandbox), as a receiver under the verified
// policy takes them (docs/verified.md):
//   verifier  their texts one after another, repeated to at least 16 MiB,
//             verified in one pass, 7 times: the median's MB/s and
//             instructions per second
//   admit     one package's admission: a region made, then every image
//             whose imports the sandbox serves installed into it (imports
//             bound, fixups applied, verified as installed, made
//             executable), 15 times: the median, and the median install
//             of one image
// The verifier runs on any host; the install's regions work on x86_64 too
// (only running a jam needs aarch64).
//
//===----------------------------------------------------------------------===//
#include "calls/Calls.h"
#include "sandbox/Region.h"
#include "sandbox/Services.h"
#include "verify/Verify.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

using namespace twochains;
using Clock = std::chrono::steady_clock;

static double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

static double secondsSince(Clock::time_point T) {
  return std::chrono::duration<double>(Clock::now() - T).count();
}

int main(int Argc, char **Argv) {
  if (Argc < 2) {
    std::fprintf(stderr, "usage: verify-speed IMAGE.jam...\n");
    return 2;
  }
  std::vector<format::JamImageData> Images;
  std::vector<uint8_t> Texts;
  for (int I = 1; I < Argc; ++I) {
    format::JamImageData Image;
    std::string Error;
    if (format::readJamImageFile(Argv[I], Image, Error) != format::FormatError::None) {
      std::fprintf(stderr, "verify-speed: %s: %s\n", Argv[I], Error.c_str());
      return 1;
    }
    if (Image.Sandbox != format::JamSandboxScheme || Image.ISA != "aarch64") {
      std::fprintf(stderr, "verify-speed: %s is not a sandboxed aarch64 image\n", Argv[I]);
      return 1;
    }
    // The text as linked: its GOTP cell is zero, which decodes as udf.
    Texts.insert(Texts.end(), Image.Bytes.begin(), Image.Bytes.begin() + Image.TextSize);
    Images.push_back(std::move(Image));
  }
  size_t One = Texts.size();
  while (Texts.size() < (16u << 20))
    Texts.insert(Texts.end(), Texts.begin(), Texts.begin() + One);

  std::vector<double> Runs;
  for (int R = 0; R < 7; ++R) {
    verify::Violation V;
    auto T = Clock::now();
    bool Ok = verify::verifyAArch64(Texts.data(), Texts.size(), verify::SandboxLayout(), V);
    Runs.push_back(secondsSince(T));
    if (!Ok) {
      std::fprintf(stderr, "verify-speed: the texts do not verify at offset %llu: %s\n",
                   (unsigned long long)V.Offset, V.Detail.c_str());
      return 1;
    }
  }
  double S = median(Runs);
  std::printf("verifier: %zu images, %zu bytes of text, repeated to %.1f MiB: %.0f MB/s, "
              "%.0f M instructions/s (median of 7)\n",
              Images.size(), One, Texts.size() / 1048576.0, Texts.size() / S / 1e6,
              Texts.size() / 4 / S / 1e6);

  // The jam API's services, as a context adds them: images import them.
  // An image that imports a ried's symbol cannot be admitted (no ried runs
  // in a region yet): it is verified above, and left out here.
  rt::addJamSandboxServices();
  std::vector<const format::JamImageData *> Admitted;
  for (const format::JamImageData &Image : Images)
    if (std::all_of(Image.Imports.begin(), Image.Imports.end(),
                    [](const std::string &I) { return rt::sandboxServiceSlot(I) != 0; }))
      Admitted.push_back(&Image);
  std::vector<double> Admit, Create, Install;
  for (int R = 0; R < 15; ++R) {
    auto T = Clock::now();
    auto Region = std::make_unique<rt::SandboxRegion>();
    std::string Error;
    if (Region->create(Error) != TC_OK) {
      std::fprintf(stderr, "verify-speed: %s\n", Error.c_str());
      return 1;
    }
    Create.push_back(secondsSince(T));
    for (const format::JamImageData *Image : Admitted) {
      rt::SandboxedImage Out;
      auto I = Clock::now();
      if (Region->install(*Image, Out, Error) != TC_OK) {
        std::fprintf(stderr, "verify-speed: %s\n", Error.c_str());
        return 1;
      }
      Install.push_back(secondsSince(I));
    }
    Admit.push_back(secondsSince(T));
  }
  std::printf("admit: a region made in %.1f us, %zu images installed and verified in it: "
              "%.1f us in all, %.1f us an image (medians of 15)\n",
              median(Create) * 1e6, Admitted.size(), median(Admit) * 1e6, median(Install) * 1e6);
  return 0;
}
