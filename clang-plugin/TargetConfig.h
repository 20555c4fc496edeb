//===- TargetConfig.h - Per-ISA code generation settings for jams ---------===//
//
// Each supported ISA adjusts clang's code generation options so that the
// backend emits only byte-exact PC-relative references to the jam's own
// bytes, and reports user options that would defeat that. The IR passes are
// the same for every ISA; only these settings differ.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_TARGETCONFIG_H
#define TWOCHAINS_CLANG_PLUGIN_TARGETCONFIG_H

#include "clang/Frontend/CompilerInstance.h"
#include <memory>

namespace twochains {

class TargetConfig {
public:
  virtual ~TargetConfig() = default;
  /// Adjusts CI's code generation options; reports through CI's diagnostics
  /// and returns false if the user's options cannot produce a valid jam.
  virtual bool adjust(clang::CompilerInstance &CI) const = 0;
  /// Adjusts code generation for the sandbox (docs/sandbox.md), once
  /// configureJamTarget has checked what every ISA's sandbox needs; reports
  /// and returns false where the ISA cannot.
  virtual bool adjustForSandbox(clang::CompilerInstance &CI) const = 0;
};

std::unique_ptr<TargetConfig> createX86_64TargetConfig();
std::unique_ptr<TargetConfig> createAArch64TargetConfig();

/// Chooses the configuration for CI's target and applies it together with
/// the settings every ISA shares. Returns false after reporting an error.
/// Sandbox: the jam is built for the verified sandbox.
bool configureJamTarget(clang::CompilerInstance &CI, bool Sandbox);

} // namespace twochains

#endif
