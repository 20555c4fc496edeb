//===- Exclusion.cpp ------------------------------------------------------===//
#include "Exclusion.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

using namespace llvm;

namespace twochains::pkggen {

static Error patternError(StringRef Origin, StringRef Pattern, const Twine &Why) {
  return createStringError(inconvertibleErrorCode(), Origin + ": pattern '" + Pattern + "' " + Why);
}

Error ExcludeList::add(StringRef Pattern, StringRef Origin) {
  auto R = std::make_unique<Rule>();
  R->Why = (Origin + ": '" + Pattern + "'").str();
  StringRef P = Pattern;
  if (P.consume_front("!"))
    R->Negated = true;
  if (P.consume_back("/"))
    R->FoldersOnly = true;
  // A '/' anywhere but at the end anchors the pattern to the list's folder;
  // without one it is a name, matched at any depth.
  bool Anchored = P.contains('/');
  P.consume_front("/");
  SmallVector<StringRef, 8> Parts;
  P.split(Parts, '/', -1, /*KeepEmpty=*/false);
  if (Parts.empty())
    return patternError(Origin, Pattern, "names no file or folder");
  if (Parts.size() > ExcludePatternMaxComponents)
    return patternError(Origin, Pattern,
                        "has more than " + Twine(ExcludePatternMaxComponents) + " components");
  if (!Anchored)
    R->Components.push_back("**");
  for (StringRef Part : Parts)
    R->Components.push_back(Part.str());
  // "dir/**" is everything inside dir, not dir itself: at least one more
  // component ('*' matches any one, never an empty one).
  if (Parts.size() > 1 && Parts.back() == "**")
    R->Components.insert(R->Components.end() - 1, "*");
  // The globs refer to the strings: made once Components stops growing.
  for (const std::string &C : R->Components) {
    if (C == "**") {
      R->Globs.emplace_back(); // never used: "**" is matched by the walk
      continue;
    }
    // Brace expansion off: .gitignore has none, and it multiplies patterns.
    Expected<GlobPattern> G = GlobPattern::create(C);
    if (!G)
      return patternError(Origin, Pattern, "is not a valid glob: " + toString(G.takeError()));
    R->Globs.push_back(std::move(*G));
  }
  Rules.push_back(std::move(R));
  return Error::success();
}

Error ExcludeList::addFile(StringRef Text, StringRef Path) {
  if (Text.size() > ExcludeFileMaxBytes)
    return createStringError(inconvertibleErrorCode(), Path + ": larger than " +
                                                           Twine(ExcludeFileMaxBytes) +
                                                           " bytes; is it a list of patterns?");
  unsigned LineNo = 0;
  while (!Text.empty()) {
    auto [Line, Rest] = Text.split('\n');
    Text = Rest;
    ++LineNo;
    Line.consume_back("\r");
    // Trailing spaces go unless escaped: "name\ " keeps one.
    while (Line.ends_with(" ") && !Line.ends_with("\\ "))
      Line = Line.drop_back();
    if (Line.empty() || Line.starts_with("#"))
      continue;
    if (Error E = add(Line, (Path + ":" + Twine(LineNo)).str()))
      return E;
  }
  return Error::success();
}

/// Whether R's components match Path's, '**' standing for any number of
/// folders. Dynamic programming over (component, path position): linear
/// in their product, however many '**' the pattern has.
bool ExcludeList::matches(const Rule &R, ArrayRef<StringRef> Path) {
  const size_t M = R.Components.size(), N = Path.size();
  // Next[j]: components i+1.. match Path[j..]; Cur[j]: components i.. do.
  std::vector<char> Next(N + 1, 0), Cur(N + 1, 0);
  Next[N] = 1;
  for (size_t I = M; I-- > 0;) {
    bool Any = R.Components[I] == "**";
    Cur[N] = Any && Next[N];
    for (size_t J = N; J-- > 0;)
      Cur[J] = Any ? (Next[J] || Cur[J + 1]) : (R.Globs[I].match(Path[J]) && Next[J + 1]);
    std::swap(Cur, Next);
  }
  return Next[0];
}

const std::string *ExcludeList::excludedBy(StringRef Path, bool IsFolder) const {
  SmallVector<StringRef, 16> Components;
  Path.split(Components, '/', -1, /*KeepEmpty=*/false);
  const Rule *Decided = nullptr;
  for (const std::unique_ptr<Rule> &R : Rules)
    if ((!R->FoldersOnly || IsFolder) && matches(*R, Components))
      Decided = R.get();
  if (!Decided || Decided->Negated)
    return nullptr;
  return &Decided->Why;
}

} // namespace twochains::pkggen
