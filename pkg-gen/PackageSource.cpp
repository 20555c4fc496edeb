//===- PackageSource.cpp --------------------------------------------------===//
#include "PackageSource.h"
#include "JamAbi.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace llvm;

namespace twochains::pkggen {

/// Path relative to Base, '/'-separated; Path lies under Base.
static StringRef relativeTo(StringRef Path, StringRef Base) {
  return Path.drop_front(std::min(Path.size(), Base.size())).ltrim('/');
}

/// Folder's .tcignore, if it has one, read into List (bounded before it is
/// read: the file is the author's, but a stray large file there should
/// fail clearly).
static Error readExcludeFile(StringRef Folder, StringRef Root, ExcludeList &List,
                             SourceTree &Tree) {
  SmallString<256> Path(Folder);
  sys::path::append(Path, JamExcludeFile);
  sys::fs::file_status Status;
  if (sys::fs::status(Path, Status) || !sys::fs::exists(Status))
    return Error::success();
  if (Status.getSize() > ExcludeFileMaxBytes)
    return createStringError(inconvertibleErrorCode(), Path + ": larger than " +
                                                           Twine(ExcludeFileMaxBytes) +
                                                           " bytes; is it a list of patterns?");
  auto Buf = MemoryBuffer::getFile(Path);
  if (!Buf)
    return createStringError(Buf.getError(),
                             "cannot read " + Path + ": " + Buf.getError().message());
  SmallString<256> Abs(Path);
  sys::fs::make_absolute(Abs);
  Tree.ExcludeFiles.push_back(std::string(Abs));
  return List.addFile((*Buf)->getBuffer(), relativeTo(Path, Root));
}

/// Gives each jam folder's entry the folder's .c files as parts, but what
/// the package's and the folder's exclusions leave out.
static Error attachParts(StringRef Root, const std::vector<std::string> &Folders,
                         const ExcludeList &Excludes, SourceTree &Tree,
                         std::vector<std::string> &Errors) {
  std::vector<Element> &Elements = Tree.Elements;
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
    ExcludeList Own;
    if (Error Err = readExcludeFile(Folder, Root, Own, Tree)) {
      Errors.push_back(toString(std::move(Err)));
      continue;
    }
    std::error_code EC;
    for (sys::fs::recursive_directory_iterator It(Folder, EC), End;
         It != End && !EC; It.increment(EC)) {
      bool IsFolder = It->type() == sys::fs::file_type::directory_file;
      if (!IsFolder && !StringRef(It->path()).ends_with(".c"))
        continue;
      const std::string *Why = Own.excludedBy(relativeTo(It->path(), Folder), IsFolder);
      if (!Why)
        Why = Excludes.excludedBy(relativeTo(It->path(), Root), IsFolder);
      if (Why) {
        Tree.LeftOut.push_back(relativeTo(It->path(), Root).str() + (IsFolder ? "/" : "") + " (" +
                               *Why + ")");
        if (IsFolder)
          It.no_push();
        continue;
      }
      if (IsFolder)
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

Expected<SourceTree> findElements(StringRef Root, const ExcludeList &Excludes) {
  if (!sys::fs::is_directory(Root))
    return createStringError(inconvertibleErrorCode(),
                             Root + ": not a directory");
  SourceTree Tree;
  std::vector<Element> &Elements = Tree.Elements;
  std::vector<std::string> Errors;
  std::vector<std::string> JamFolders;
  std::error_code EC;
  for (sys::fs::recursive_directory_iterator It(Root, EC), End; It != End && !EC;
       It.increment(EC)) {
    StringRef Path = It->path();
    StringRef File = sys::path::filename(Path);
    bool IsFolder = It->type() == sys::fs::file_type::directory_file;
    if (const std::string *Why = Excludes.excludedBy(relativeTo(Path, Root), IsFolder)) {
      Tree.LeftOut.push_back(relativeTo(Path, Root).str() + (IsFolder ? "/" : "") + " (" + *Why +
                             ")");
      if (IsFolder)
        It.no_push();
      continue;
    }
    if (IsFolder) {
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
  if (Error Err = attachParts(Root, JamFolders, Excludes, Tree, Errors))
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
  if (!Errors.empty())
    return createStringError(inconvertibleErrorCode(), join(Errors, "\n"));
  return Tree;
}

} // namespace twochains::pkggen
