//===- ElementIDs.cpp -----------------------------------------------------===//
#include "ElementIDs.h"
#include "ManifestFormat.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include <map>

using namespace llvm;

namespace twochains::pkggen {

Error assignElementIDs(StringRef Root, std::vector<Element> &Elements,
                       bool &Changed) {
  SmallString<256> Path(Root);
  sys::path::append(Path, "twochains.ids");
  std::map<unsigned, std::string> ByID;   // retired names start with '-'
  StringMap<unsigned> ByName;
  if (auto Buf = MemoryBuffer::getFile(Path)) {
    SmallVector<StringRef, 64> Lines;
    (*Buf)->getBuffer().split(Lines, '\n');
    for (auto [N, Line] : enumerate(Lines)) {
      Line = Line.trim();
      if (Line.empty() || Line.starts_with("#"))
        continue;
      auto [IDText, Name] = Line.split(' ');
      unsigned ID;
      Name = Name.trim();
      if (!to_integer(IDText, ID, 10) || Name.empty() || ByID.count(ID) ||
          ByName.count(Name.ltrim('-')))
        return createStringError(inconvertibleErrorCode(),
                                 Path + ":" + Twine(N + 1) +
                                     ": expected '<id> <name>' with each id "
                                     "and name once");
      if (ID >= format::ElementIDLimit)
        return createStringError(inconvertibleErrorCode(),
                                 Path + ":" + Twine(N + 1) + ": element ID " + Twine(ID) +
                                     " is not below the limit of " +
                                     Twine(format::ElementIDLimit));
      ByID[ID] = Name.str();
      ByName[Name.ltrim('-')] = ID;
    }
  }

  Changed = false;
  StringMap<bool> Present;
  for (Element &E : Elements) {
    Present[E.Name] = true;
    auto It = ByName.find(E.Name);
    if (It != ByName.end()) {
      E.ID = It->second;
      if (ByID[E.ID] != E.Name) { // it had been retired and came back
        ByID[E.ID] = E.Name;
        Changed = true;
      }
      continue;
    }
    unsigned ID = ByID.empty() ? 0 : ByID.rbegin()->first + 1;
    // IDs are never reused, so the highest one bounds what is left; the
    // bound is checked above for every ID read, so this cannot wrap.
    if (ID >= format::ElementIDLimit)
      return createStringError(inconvertibleErrorCode(),
                               Path + ": no element ID below " + Twine(format::ElementIDLimit) +
                                   " is left for '" + E.Name +
                                   "' (IDs are never reused, and " +
                                   Twine(ByID.rbegin()->first) + " is taken)");
    E.ID = ID;
    ByID[ID] = E.Name;
    ByName[E.Name] = ID;
    Changed = true;
  }
  for (auto &[ID, Name] : ByID)
    if (Name[0] != '-' && !Present.count(Name)) {
      Name = "-" + Name;
      Changed = true;
    }
  if (!Changed)
    return Error::success();

  std::string Text = "# Element IDs of this package: an element keeps its ID; "
                     "retired IDs (-name)\n# are never reused. Written by "
                     "twochains-pkg-gen; commit it with the sources.\n";
  for (auto &[ID, Name] : ByID)
    Text += std::to_string(ID) + " " + Name + "\n";
  std::error_code EC;
  raw_fd_ostream OS(Path, EC);
  if (EC)
    return createStringError(EC, "cannot write " + Path + ": " + EC.message());
  OS << Text;
  return Error::success();
}

} // namespace twochains::pkggen
