//===- SymbolTable.h - A jam's global names across its objects ------------===//
//
// A jam may be several objects (a library compiled by gcc, one object a
// file): their global names are resolved as a C linker resolves them, so
// a call from one object to a function of another stays inside the image.
// As in lld, each name has one symbol for the whole link: its strong
// definition, else its first weak one, else (an import) its first
// undefined reference. Local symbols stay with their object, so two files'
// statics of the same name never meet.
//
//===----------------------------------------------------------------------===//
#ifndef TWOCHAINS_JAMLINK_SYMBOLTABLE_H
#define TWOCHAINS_JAMLINK_SYMBOLTABLE_H

#include "InputObject.h"

#include "llvm/ADT/StringMap.h"
#include <string>
#include <vector>

namespace twochains::jamlink {

/// A symbol with the object that holds it.
struct SymbolRef {
  InputObject *File = nullptr;
  const Symbol *Sym = nullptr;
  explicit operator bool() const { return Sym != nullptr; }
};

class SymbolTable {
public:
  /// Adds File's global and weak symbols. A name two objects both define
  /// strongly is an error, appended to Errors, naming both places.
  void addFile(InputObject &File, std::vector<std::string> &Errors);
  /// What symbol Index of File refers to in the link: itself if it is
  /// local, else its name's symbol.
  SymbolRef resolve(InputObject &File, uint32_t Index) const;
  /// A global name's definition; empty if no object defines it.
  SymbolRef findDefined(llvm::StringRef Name) const;

private:
  llvm::StringMap<SymbolRef> Globals;
};

/// Whether S takes part in resolution by name.
bool isGlobal(const Symbol &S);

} // namespace twochains::jamlink

#endif
