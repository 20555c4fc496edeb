//===- Dump.h - jamlink --dump --------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_DUMP_H
#define TWOCHAINS_JAMLINK_DUMP_H

#include "JamImage.h"
#include "llvm/Support/raw_ostream.h"

namespace twochains::jamlink {

/// Header facts, imports, fixups, and a disassembly of the code through MC.
llvm::Error dumpImage(const JamImage &Image, llvm::raw_ostream &OS);

} // namespace twochains::jamlink

#endif
