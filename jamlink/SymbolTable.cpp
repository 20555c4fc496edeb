//===- SymbolTable.cpp ----------------------------------------------------===//
#include "SymbolTable.h"

#include "llvm/BinaryFormat/ELF.h"

using namespace llvm;

namespace twochains::jamlink {

bool isGlobal(const Symbol &S) {
  return S.Binding != ELF::STB_LOCAL && S.Type != ELF::STT_SECTION && S.Type != ELF::STT_FILE &&
         !S.Name.empty();
}

/// Where a definition lies, for messages: "a.o:(.text.f+0x10)", or the
/// object alone for symbols outside its sections (common, absolute).
static std::string placeOf(const SymbolRef &R) {
  if (R.Sym->SectionIndex < R.File->Sections.size())
    return R.File->location(R.Sym->SectionIndex, R.Sym->Value);
  return R.File->Path;
}

void SymbolTable::addFile(InputObject &File, std::vector<std::string> &Errors) {
  for (const Symbol &S : File.Symbols) {
    if (!isGlobal(S))
      continue;
    SymbolRef New{&File, &S};
    auto [It, Inserted] = Globals.try_emplace(S.Name, New);
    if (Inserted || S.isUndefined())
      continue;
    SymbolRef &Old = It->second;
    if (Old.Sym->isUndefined()) {
      Old = New;
    } else if (S.Binding == ELF::STB_WEAK) {
      // A weak definition yields to the one already there.
    } else if (Old.Sym->Binding == ELF::STB_WEAK) {
      Old = New;
    } else if (Old.File != &File) {
      Errors.push_back("duplicate symbol '" + S.Name + "': defined in " + placeOf(Old) +
                       " and in " + placeOf(New) +
                       "; a jam's objects share one name space, as in a C link");
    }
  }
}

SymbolRef SymbolTable::resolve(InputObject &File, uint32_t Index) const {
  const Symbol &S = File.Symbols[Index];
  if (!isGlobal(S))
    return {&File, &S};
  auto It = Globals.find(S.Name);
  // Every global name was added with its object.
  return It != Globals.end() ? It->second : SymbolRef{&File, &S};
}

SymbolRef SymbolTable::findDefined(StringRef Name) const {
  auto It = Globals.find(Name);
  if (It == Globals.end() || It->second.Sym->isUndefined())
    return {};
  return It->second;
}

} // namespace twochains::jamlink
