//===- JamOptions.h - What the front end tells the jam passes -------------===//
//
// The clang front end finds a jam's entry and sender-side helpers and checks
// them; the IR passes act on that result. Under `opt` the same options come
// from pass parameters, e.g. twochains-jam-rewrite<element=foo>.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_CLANG_PLUGIN_JAMOPTIONS_H
#define TWOCHAINS_CLANG_PLUGIN_JAMOPTIONS_H

#include "JamAbi.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace twochains {

// The ABI version and the section and symbol names shared with jamlink and
// the runtime (docs/jam-object-format.md) have one definition, in format/.
using format::GOTPSection;
using format::GOTPSymbol;
using format::ImportsSection;
using format::InfoSection;
using format::JamABIFact;
using format::JamABIVersion;

/// Annotations left by the plugin's attributes (jam_entry, ...).
inline constexpr char EntryAnnotation[] = "twochains.jam_entry";
inline constexpr char PayloadSizeAnnotation[] = "twochains.jam_payload_size";
inline constexpr char PayloadInitAnnotation[] = "twochains.jam_payload_init";

enum class JamMode { Inject, Local };

struct JamOptions {
  JamMode Mode = JamMode::Inject;
  /// Element name; empty means "derive it from the source file name".
  std::string Element;
  /// Package name; local mode builds package-unique symbols from it.
  std::string Package;
  /// IR names of the entry and the sender-side helpers. Empty means "find
  /// them by annotation or by canonical name".
  std::string Entry;
  std::string PayloadSize;
  std::string PayloadInit;
  /// C spelling of the type the helpers take their arguments as, recorded
  /// for the package generator. Empty when the jam has no helpers.
  std::string ArgsType;
  /// The C declaration of that type (struct definition, or typedef and the
  /// definition it names), so the package header can declare it.
  std::string ArgsDecl;
  /// Debugging aid: run everything but the rewrite of outside references.
  /// Used to show that the tests depend on the rewrite.
  bool SkipRewrite = false;
  /// This source is a part of a jam (a library file of a jam folder): it
  /// has no entry and is compiled to bitcode for the entry's compilation
  /// to link (`part`).
  bool Part = false;
  /// -fplugin-arg-twochains-sandbox: code for the sandbox (docs/sandbox.md).
  bool Sandbox = false;
  /// Bitcode of the jam's other parts, linked into the entry's module
  /// before optimisation (`link=<file.bc>`, repeatable).
  std::vector<std::string> LinkParts;
  /// Leave out the warning on writable static data (`no-static-warning`),
  /// for libraries whose statics are known to be meant that way.
  bool NoStaticWarning = false;
};

/// Parses `key=value;key=value` pass parameters as used by opt pipelines.
llvm::Expected<JamOptions> parseJamPassParams(llvm::StringRef Params,
                                              JamMode Mode);

/// Returns true if Name is a valid element or package name:
/// [A-Za-z_][A-Za-z0-9_]*.
bool isValidJamName(llvm::StringRef Name);

/// Derives the element name from a source path named jam_<name>.amc.
/// Returns an empty string if the path does not follow that pattern.
std::string elementNameFromPath(llvm::StringRef Path);

/// Package-unique symbol used for a Local-Function element, e.g.
/// localSymbol("stdlib", "put", "main") == "tc.stdlib.put.main". Dots cannot
/// occur in element or package names, so these never collide.
std::string localSymbol(llvm::StringRef Package, llvm::StringRef Element,
                        llvm::StringRef Role);

} // namespace twochains

#endif
