//===- PackageSource.cpp --------------------------------------------------===//
#include "PackageSource.h"
#include "JamAbi.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace twochains::pkggen {


/// Gives each jam folder's entry the folder's .c files as parts.
static Error attachParts(const std::vector<std::string> &Folders,
                         std::vector<Element> &Elements,
                         std::vector<std::string> &Errors) {
  for (const std::string &Folder : Folders) {
    StringRef Name = sys::path::filename(Folder).drop_front(4);
    SmallString<256> Entry(Folder);
    sys::path::append(Entry, "jam_" + Name + ".amc");
    sys::fs::make_absolute(Entry);
    auto E = llvm::find_if(Elements, [&](const Element &El) {
      return El.Kind == ElementKind::Jam && El.Source == Entry.str();
    });
    if (E == Elements.end()) {
      Errors.push_back(Folder + ": a jam folder needs its entry file jam_" +
                       Name.str() + ".amc");
      continue;
    }
    std::error_code EC;
    for (sys::fs::recursive_directory_iterator It(Folder, EC), End;
         It != End && !EC; It.increment(EC)) {
      if (!StringRef(It->path()).ends_with(".c") ||
          It->type() == sys::fs::file_type::directory_file)
        continue;
      SmallString<256> Abs(It->path());
      sys::fs::make_absolute(Abs);
      E->Parts.push_back(std::string(Abs));
    }
    if (EC)
      return createStringError(EC, "cannot walk " + Folder + ": " + EC.message());
    llvm::sort(E->Parts);
  }
  return Error::success();
}

Expected<std::vector<Element>> findElements(StringRef Root) {
  if (!sys::fs::is_directory(Root))
    return createStringError(inconvertibleErrorCode(),
                             Root + ": not a directory");
  std::vector<Element> Elements;
  std::vector<std::string> Errors;
  std::vector<std::string> JamFolders;
  std::error_code EC;
  for (sys::fs::recursive_directory_iterator It(Root, EC), End; It != End && !EC;
       It.increment(EC)) {
    StringRef Path = It->path();
    StringRef File = sys::path::filename(Path);
    if (It->type() == sys::fs::file_type::directory_file) {
      StringRef Stem = File;
      if (Stem.consume_front("jam_") && !Stem.contains('.'))
        JamFolders.push_back(Path.str());
      continue;
    }
    Element E;
    StringRef Stem = File;
    if (Stem.consume_front("jam_") && Stem.consume_back(".amc"))
      E.Kind = ElementKind::Jam;
    else if (Stem = File, Stem.consume_front("ried_") && Stem.consume_back(".rdc"))
      E.Kind = ElementKind::Ried;
    else
      continue;
    if (!format::isValidName(Stem)) {
      Errors.push_back(Path.str() + ": invalid element name '" + Stem.str() +
                       "': use letters, digits and '_'");
      continue;
    }
    SmallString<256> Abs(Path);
    sys::fs::make_absolute(Abs);
    E.Name = Stem.str();
    E.Source = std::string(Abs);
    Elements.push_back(std::move(E));
  }
  if (EC)
    return createStringError(EC, "cannot walk " + Root + ": " + EC.message());
  if (Error Err = attachParts(JamFolders, Elements, Errors))
    return std::move(Err);
  llvm::sort(Elements, [](const Element &A, const Element &B) {
    return std::tie(A.Name, A.Source) < std::tie(B.Name, B.Source);
  });
  StringMap<const Element *> Seen;
  for (const Element &E : Elements) {
    auto [It, Inserted] = Seen.try_emplace(E.Name, &E);
    if (!Inserted)
      Errors.push_back(E.Source + ": duplicate element name '" + E.Name +
                       "' (also " + It->second->Source + ")");
  }
  if (Elements.empty() && Errors.empty())
    Errors.push_back(Root.str() + ": no jam_*.amc or ried_*.rdc files");
  if (!Errors.empty())
    return createStringError(inconvertibleErrorCode(), join(Errors, "\n"));
  return Elements;
}

} // namespace twochains::pkggen
