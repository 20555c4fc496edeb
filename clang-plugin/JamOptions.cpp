//===- JamOptions.cpp -----------------------------------------------------===//
#include "JamOptions.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace twochains {

bool isValidJamName(StringRef Name) { return format::isValidName(Name); }

std::string elementNameFromPath(StringRef Path) {
  StringRef File = sys::path::filename(Path);
  if (!File.consume_front("jam_") || !File.consume_back(".amc"))
    return "";
  return File.str();
}

std::string localSymbol(StringRef Package, StringRef Element, StringRef Role) {
  return format::localSymbol(Package, Element, Role);
}

Expected<JamOptions> parseJamPassParams(StringRef Params, JamMode Mode) {
  JamOptions Opts;
  Opts.Mode = Mode;
  while (!Params.empty()) {
    StringRef Param;
    std::tie(Param, Params) = Params.split(';');
    auto [Key, Value] = Param.split('=');
    if (Key == "element")
      Opts.Element = Value.str();
    else if (Key == "package")
      Opts.Package = Value.str();
    else if (Key == "entry")
      Opts.Entry = Value.str();
    else if (Key == "payload-size")
      Opts.PayloadSize = Value.str();
    else if (Key == "payload-init")
      Opts.PayloadInit = Value.str();
    else if (Key == "link" && !Value.empty())
      Opts.LinkParts.push_back(Value.str());
    else if (Key == "no-rewrite" && Value.empty())
      Opts.SkipRewrite = true;
    else
      return createStringError(inconvertibleErrorCode(),
                               "unknown twochains jam pass parameter '%s'",
                               Param.str().c_str());
  }
  return Opts;
}

} // namespace twochains
