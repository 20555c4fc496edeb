//===- JamAbi.h - The contract between the plugin, jamlink, pkg-gen and the runtime
//
// One definition of every constant and name rule the parts of Two-Chains
// must agree on (docs/jam-object-format.md, docs/jam-image-format.md,
// docs/packages.md). Dependency-free: the C++ standard library only.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_FORMAT_JAMABI_H
#define TWOCHAINS_FORMAT_JAMABI_H

#include <cstdint>
#include <string>
#include <string_view>

namespace twochains::format {

/// Version of the jam ABI: the metadata sections, the GOTP convention and
/// the entry signature. Recorded as the `tc.abi` fact of objects and images.
constexpr unsigned JamABIVersion = 1;
constexpr std::string_view JamABIFact = "tc.abi";

/// Sections and symbols of a jam object (the plugin writes them, jamlink
/// reads them) and of an image container.
constexpr std::string_view GOTPSymbol = "__tc_gotp";
constexpr std::string_view GOTPSection = ".tc.gotp";
constexpr std::string_view InfoSection = ".tc.jam";
constexpr std::string_view ImportsSection = ".tc.imports";
constexpr std::string_view ImageSection = ".tc.image";
constexpr std::string_view FixupsSection = ".tc.fixups";

/// Keys of the key=value facts the plugin records in an object's .tc.jam
/// (docs/jam-object-format.md), which jamlink and pkg-gen read.
namespace fact {
constexpr std::string_view Mode = "mode";          // ModeInject or ModeLocal
constexpr std::string_view Package = "package";    // local mode
constexpr std::string_view Element = "element";
constexpr std::string_view Entry = "entry";
constexpr std::string_view ISA = "isa";
constexpr std::string_view GOTP = "gotp";
constexpr std::string_view Imports = "imports";
constexpr std::string_view PayloadSize = "payload-size";
constexpr std::string_view PayloadInit = "payload-init";
constexpr std::string_view Args = "args";
constexpr std::string_view ArgsDecl = "args-decl";
constexpr std::string_view Hash = "hash";
constexpr std::string_view ModeInject = "inject";
constexpr std::string_view ModeLocal = "local";
} // namespace fact

/// An element's entry (Role "main") and helpers in the Local-Function
/// library: tc.<package>.<element>.<role>. Dots cannot appear in a C
/// name, so these never clash with the library's other symbols.
inline std::string localSymbol(std::string_view Package, std::string_view Element,
                               std::string_view Role) {
  std::string S = "tc.";
  S.append(Package).append(".").append(Element).append(".").append(Role);
  return S;
}

/// The `format` fact of an image container.
constexpr std::string_view JamImageFormatName = "tc-jam-image";

/// Frames and images come in whole lines of this many bytes.
constexpr unsigned JamLine = 64;

/// Package and element names: [A-Za-z_][A-Za-z0-9_]*.
constexpr bool isValidName(std::string_view Name) {
  if (Name.empty())
    return false;
  for (size_t I = 0; I < Name.size(); ++I) {
    char C = Name[I];
    bool Alpha = (C >= 'a' && C <= 'z') || (C >= 'A' && C <= 'Z') || C == '_';
    if (!(Alpha || (I > 0 && C >= '0' && C <= '9')))
      return false;
  }
  return true;
}
static_assert(isValidName("put_2") && !isValidName("2put") && !isValidName("a-b"));

} // namespace twochains::format

#endif
