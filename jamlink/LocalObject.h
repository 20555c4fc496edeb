//===- LocalObject.h - Another compiler's jam, for the Local library ------===//
//
// A jam given as objects of another compiler (gcc) has no local-mode
// object from the plugin, yet Local frames of it call the receiver's own
// copy in the package's Local-Function library. This makes that object
// from the jam's objects as the plugin's local mode would have: one
// object whose only global name is the entry, renamed
// tc.<package>.<element>.main (two jams carrying one library never clash
// in the library), whose outside names are weak (a sender loads the
// library without the receiver's rieds), with the .tc.jam facts that
// `jamlink --shared` reads.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_LOCALOBJECT_H
#define TWOCHAINS_JAMLINK_LOCALOBJECT_H

#include "llvm/Support/Error.h"
#include <string>
#include <vector>

namespace twochains::jamlink {

struct LocalObjectOptions {
  std::vector<std::string> Inputs;   // the jam's objects, one ISA
  std::string Output;
  std::string Package;
  std::string Element;
  std::string Entry;                 // default: <element>_main
};

/// Links Opts.Inputs into one relocatable object (LLD, in process, -r) and
/// rewrites its symbols and facts (LLVM's objcopy library) into Output.
llvm::Error makeLocalObject(const LocalObjectOptions &Opts);

} // namespace twochains::jamlink

#endif
