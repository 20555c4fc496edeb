//===- X86Unavailable.cpp - A build without an x86-64 decoder -------------===//
//
// A runtime built for aarch64 without Zydis never runs x86-64 code; it
// rejects every x86-64 image, as it would any code it cannot decode.
//
//===----------------------------------------------------------------------===//
#include "verify/Verify.h"

bool twochains::verify::verifyX86_64(const uint8_t *, size_t, const SandboxLayout &,
                                     Violation &Out) {
  Violation V;
  V.Broken = Rule::Undecodable;
  V.Instruction = "x86-64 code";
  V.Detail = "this build has no x86-64 decoder (Zydis)";
  Out = std::move(V);
  return false;
}
