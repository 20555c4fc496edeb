#!/usr/bin/env python3
"""Keeps the runtime's layering (runtime/LAYERS).

The runtime's sources live in folders, runtime/<folder>/; runtime/LAYERS
puts the folders on levels, bottom to top. A folder may use its own files
and those of lower levels; folders of one level may not use each other.

  1. Includes (always): a file of folder F includes only F's files, files
     of lower levels (path-qualified from runtime/: "wire/Frame.h", or bare
     when the file is in F), public headers (include/: "twochains/...") and
     the format library's (format/). An include with "..", of a file that
     does not exist, or of a runtime file in no layer is an error, and so
     is a file in runtime/ outside the listed folders (but for
     CMakeLists.txt, *.map, *.released, *.in, README.md and LAYERS).
  2. Calls (with --build or --objects): from the built objects (nm), each
     symbol an object uses that exactly one other runtime source defines
     (strongly: weak definitions, i.e. inline functions and templates
     emitted in every user, make no edge) must come from the user's folder
     or a lower level.
  3. Runtime code calls no tc_* function (the public C API) that the
     runtime defines, but for those LAYERS lists in "allow-public:" lines.
  4. No loop of calls among runtime files (the graph of check 2, whatever
     the folders): each strongly connected component of more than one file
     is an error, shown by one cycle through it.

Each violation is one line, "path[:line]: error: ...", followed for loops by
"note:" lines naming a symbol per step. Exit status: 0 (and a one-line
summary) when the runtime keeps its layers, 1 when it does not, 2 when the
checker cannot run (no LAYERS, unknown directory, no nm).

runtime/LAYERS:
  # comment (to the end of a line)
  0: base ucx wire          the folders of level 0 (any integer; higher is above)
  1: core
  allow-public: tc_foo tc_bar   public functions the runtime may call itself
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

# Files that may lie in runtime/ outside a layer folder.
UNLAYERED_NAMES = {"CMakeLists.txt", "README.md", "LAYERS"}
UNLAYERED_SUFFIXES = (".map", ".released", ".in")
# Files whose includes are read.
SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".c", ".cc", ".cpp", ".cxx", ".inc", ".def", ".ipp")
# Where includes resolve besides the including file's folder, as the
# runtime's include path has them: runtime/ itself, the public headers and
# the format library.
PUBLIC_DIR = "include"
FORMAT_DIR = "format"

# nm's symbol types (GNU): strong global definitions, weak definitions and
# references (U; w and v are weak references).
STRONG_DEFS = set("TDBRGSCi")
WEAK_DEFS = set("WVu")
REFERENCES = set("Uwv")

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]*)[>"]')
FOLDER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
PUBLIC_RE = re.compile(r"^tc_[A-Za-z0-9_]*$")


def fatal(message):
    """The checker cannot run: exit status 2 (1 is for violations)."""
    print("check-layers: " + message, file=sys.stderr)
    sys.exit(2)


class Layers:
    def __init__(self, path, shown):
        self.path = path            # the file
        self.shown = shown          # its name in messages
        self.level = {}             # folder -> level
        self.allow_public = {}      # tc_* name -> line in LAYERS


def parse_layers(path, shown, errors):
    layers = Layers(path, shown)
    seen_levels = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            key, colon, rest = text.partition(":")
            key = key.strip()
            words = rest.split()
            where = "%s:%d" % (shown, number)
            if not colon:
                errors.append("%s: error: expected \"LEVEL: folder...\" or "
                              "\"allow-public: tc_name...\"" % where)
            elif key == "allow-public":
                for name in words:
                    if not PUBLIC_RE.match(name):
                        errors.append("%s: error: allow-public: \"%s\" is not a tc_* name"
                                      % (where, name))
                    else:
                        layers.allow_public[name] = number
            elif re.match(r"^-?[0-9]+$", key):
                level = int(key)
                if level in seen_levels:
                    errors.append("%s: error: level %d is given on line %d already: "
                                  "a level's folders are one line"
                                  % (where, level, seen_levels[level]))
                seen_levels[level] = number
                if not words:
                    errors.append("%s: error: level %d has no folders" % (where, level))
                for folder in words:
                    if not FOLDER_RE.match(folder):
                        errors.append("%s: error: \"%s\" is not a folder name" % (where, folder))
                    elif folder in layers.level:
                        errors.append("%s: error: folder \"%s\" is on level %d already"
                                      % (where, folder, layers.level[folder]))
                    else:
                        layers.level[folder] = level
            else:
                errors.append("%s: error: unknown entry \"%s\"" % (where, key))
    if not layers.level and not errors:
        errors.append("%s: error: lists no folders" % shown)
    return layers


def rule_broken(layers, user, used):
    """Why folder `user` may not use folder `used`, or None when it may."""
    if user == used:
        return None
    lu, ld = layers.level[user], layers.level[used]
    if ld < lu:
        return None
    if ld == lu:
        return ("%s and %s are one level (%d) and may not use each other"
                % (user, used, lu))
    return "%s (level %d) may not use %s (level %d)" % (user, lu, used, ld)


def strip_comments(text):
    """The text with comments blanked (newlines kept, strings left alone)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:end]))
            i = end
        elif c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


class Tree:
    def __init__(self, root, layers):
        self.root = root
        self.runtime = os.path.join(root, "runtime")
        self.layers = layers

    def shown(self, path):
        return os.path.relpath(path, self.root)

    def folder_of(self, path):
        """The layer folder a file under runtime/ is in, or None."""
        rel = os.path.relpath(path, self.runtime).split(os.sep)
        if len(rel) > 1 and rel[0] in self.layers.level:
            return rel[0]
        return None

    def resolve(self, includer, spec, quoted):
        """Where an include leads: (kind, path). Kinds: runtime, unlayered,
        public, format, other, missing, system."""
        candidates = [os.path.dirname(includer)] if quoted else []
        candidates += [self.runtime, os.path.join(self.root, PUBLIC_DIR),
                       os.path.join(self.root, FORMAT_DIR)]
        for base in candidates:
            path = os.path.normpath(os.path.join(base, spec))
            if os.path.isfile(path):
                for kind, top in (("runtime", self.runtime),
                                  ("public", os.path.join(self.root, PUBLIC_DIR)),
                                  ("format", os.path.join(self.root, FORMAT_DIR))):
                    if path.startswith(top + os.sep):
                        if kind == "runtime" and not self.folder_of(path):
                            kind = "unlayered"
                        return kind, path
                return "other", path
        return ("missing" if quoted else "system"), None


def walk_files(top):
    for base, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if not name.startswith("."):
                yield os.path.join(base, name)


def check_includes(tree, errors):
    """Check 1. Returns (files, includes) counted."""
    layers = tree.layers
    runtime_files = list(walk_files(tree.runtime))
    by_name = defaultdict(list)
    for path in runtime_files:
        if tree.folder_of(path):
            by_name[os.path.basename(path)].append(path)
    counted_files = counted_includes = 0
    for path in runtime_files:
        shown = tree.shown(path)
        name = os.path.basename(path)
        folder = tree.folder_of(path)
        if not folder:
            if name in UNLAYERED_NAMES or name.endswith(UNLAYERED_SUFFIXES):
                continue
            rel = os.path.relpath(path, tree.runtime).split(os.sep)
            if len(rel) == 1:
                errors.append("%s: error: in no layer: runtime's files live in the "
                              "folders %s lists" % (shown, layers.shown))
            else:
                errors.append("%s: error: in no layer: %s does not list folder \"%s\""
                              % (shown, layers.shown, rel[0]))
            continue
        if not name.endswith(SOURCE_SUFFIXES):
            continue
        counted_files += 1
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for number, line in enumerate(text.split("\n"), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            counted_includes += 1
            quoted, spec = m.group(1) == '"', m.group(2).strip()
            where = "%s:%d: error: includes %s" % (
                shown, number, ('"%s"' if quoted else "<%s>") % spec)
            parts = spec.split("/")
            if ".." in parts or spec.startswith("/"):
                kind, target = tree.resolve(path, spec, quoted)
                hint = ""
                if kind == "runtime" or kind == "unlayered":
                    hint = ': write "%s"' % os.path.relpath(target, tree.runtime)
                errors.append("%s: include paths are written from runtime/, without "
                              "\"..\" or a leading \"/\"%s" % (where, hint))
                continue
            kind, target = tree.resolve(path, spec, quoted)
            if kind == "runtime":
                broken = rule_broken(layers, folder, tree.folder_of(target))
                if broken:
                    errors.append("%s: %s" % (where, broken))
            elif kind == "unlayered":
                errors.append("%s: %s is in no layer" % (where, tree.shown(target)))
            elif kind == "other":
                errors.append("%s: %s is neither a runtime, public nor format header"
                              % (where, tree.shown(target)))
            elif kind == "missing":
                same = by_name.get(os.path.basename(spec), [])
                hint = ""
                if same:
                    hint = ": did you mean %s?" % " or ".join(
                        '"%s"' % os.path.relpath(p, tree.runtime) for p in same)
                errors.append("%s: no such file in %s/, runtime/, %s/ or %s/%s"
                              % (where, os.path.relpath(os.path.dirname(path), tree.root),
                                 PUBLIC_DIR, FORMAT_DIR, hint))
    return counted_files, counted_includes


def find_objects(tree, build_dir, objects_dir):
    """{runtime source path: [object paths]} of the objects of sources in
    layer folders, and how many objects were passed over (sources in no
    layer, or gone: objects of files since moved)."""
    found = defaultdict(list)
    skipped = 0
    if build_dir:
        top = os.path.join(build_dir, "runtime")
    else:
        top = objects_dir
    for obj in walk_files(top):
        if not obj.endswith(".o"):
            continue
        rel = os.path.relpath(obj, top).split(os.sep)
        if build_dir:
            # runtime/<sub>/CMakeFiles/<target>.dir/<path of the source in sub>.o
            if "CMakeFiles" not in rel:
                skipped += 1
                continue
            i = rel.index("CMakeFiles")
            if i + 2 >= len(rel) or not rel[i + 1].endswith(".dir"):
                skipped += 1
                continue
            rel = rel[:i] + rel[i + 2:]
        source = os.path.join(tree.runtime, *rel)[:-2]
        if not source.endswith(SOURCE_SUFFIXES):
            for suffix in (".cpp", ".c", ".cc", ".cxx"):
                if os.path.isfile(source + suffix):
                    source += suffix
                    break
        if not os.path.isfile(source) or not tree.folder_of(source):
            skipped += 1
            continue
        found[source].append(obj)
    return found, skipped


def read_symbols(nm, obj):
    """(strong definitions, weak definitions, references) of an object."""
    try:
        out = subprocess.run([nm, "-P", obj], check=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, universal_newlines=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fatal("%s %s: %s" % (nm, obj, (getattr(e, "stderr", "") or str(e)).strip()))
    strong, weak, refs = set(), set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2 or len(fields[1]) != 1:
            continue
        name, kind = fields[0], fields[1]
        if kind in STRONG_DEFS:
            strong.add(name)
        elif kind in WEAK_DEFS:
            weak.add(name)
        elif kind in REFERENCES:
            refs.add(name)
    return strong, weak, refs


def demangler(cxxfilt, names):
    names = sorted(names)
    if not names:
        return {}
    try:
        out = subprocess.run([cxxfilt], input="\n".join(names) + "\n", check=True,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             universal_newlines=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = []
    if len(out) != len(names):
        out = names
    return dict(zip(names, out))


def strongly_connected(graph):
    """Tarjan's components of `graph` {node: set(node)}, iteratively."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                comps.append(sorted(comp))
    return comps


def cycle_through(graph, comp):
    """A shortest cycle through the component's first file (BFS)."""
    members = set(comp)
    start = comp[0]
    parent = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child not in members:
                    continue
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return list(reversed(path)) + [start]
                if child not in parent:
                    parent[child] = node
                    following.append(child)
        frontier = following
    return [start, start]


def check_calls(tree, build_dir, objects_dir, nm, cxxfilt, errors, warnings):
    """Checks 2, 3 and 4. Returns (sources, uses between files)."""
    layers = tree.layers
    objects, skipped = find_objects(tree, build_dir, objects_dir)
    if not objects:
        errors.append("%s: error: no objects of sources in %s's folders%s: build the runtime first"
                      % (os.path.join(build_dir, "runtime") if build_dir else objects_dir,
                         layers.shown, " (%d others)" % skipped if skipped else ""))
        return 0, 0
    strong_by = defaultdict(set)        # symbol -> sources defining it strongly
    weak_by = defaultdict(set)
    refs_of = {}
    stale = []
    for source, objs in sorted(objects.items()):
        refs = set()
        for obj in objs:
            if os.path.getmtime(obj) < os.path.getmtime(source):
                stale.append(source)
            strong, weak, r = read_symbols(nm, obj)
            for name in strong:
                strong_by[name].add(source)
            for name in weak:
                weak_by[name].add(source)
            refs |= r
        refs_of[source] = refs
    if stale:
        warnings.append("%s: warning: %s older than %s source%s: rebuild for an exact check"
                        % (tree.shown(stale[0]),
                           "its object is" if len(stale) == 1 else
                           "objects of %d files are" % len(set(stale)),
                           "its" if len(stale) == 1 else "their", "" if len(stale) == 1 else "s"))

    def rel(source):
        return os.path.relpath(source, tree.runtime)

    graph = {source: set() for source in refs_of}
    edge_symbols = defaultdict(set)     # (user, definer) -> symbols
    layer_uses = []                     # (user, symbol, definer, why)
    public_uses = []                    # (user, symbol, definer)
    used_allowances = set()
    uses = 0
    for user, refs in sorted(refs_of.items()):
        for name in sorted(refs):
            definers = strong_by.get(name, set())
            if PUBLIC_RE.match(name) and (definers or weak_by.get(name)):
                if name in layers.allow_public:
                    used_allowances.add(name)
                else:
                    definer = sorted(definers or weak_by[name])[0]
                    public_uses.append((user, name, definer))
            if len(definers) != 1:
                continue
            definer = next(iter(definers))
            if definer == user:
                continue
            uses += 1
            graph[user].add(definer)
            edge_symbols[(user, definer)].add(name)
            broken = rule_broken(layers, tree.folder_of(user), tree.folder_of(definer))
            if broken:
                layer_uses.append((user, name, definer, broken))

    loops = []
    for comp in strongly_connected(graph):
        if len(comp) > 1:
            loops.append((comp, cycle_through(graph, comp)))

    shown_names = {name for _, name, _, _ in layer_uses}
    shown_names |= {name for _, name, _ in public_uses}
    for comp, cycle in loops:
        for a, b in zip(cycle, cycle[1:]):
            shown_names.add(min(edge_symbols[(a, b)]))
    plain = demangler(cxxfilt, shown_names)

    for user, name, definer, broken in layer_uses:
        errors.append('%s: error: uses "%s" from %s: %s'
                      % (tree.shown(user), plain[name], rel(definer), broken))
    for user, name, definer in public_uses:
        errors.append('%s: error: calls the public API "%s" (defined in %s): runtime code '
                      'calls the internal function, or %s lists "allow-public: %s"'
                      % (tree.shown(user), name, rel(definer), layers.shown, name))
    for comp, cycle in loops:
        extra = ""
        if len(set(cycle)) < len(comp):
            extra = " (one cycle among its %d files: %s)" % (
                len(comp), ", ".join(rel(s) for s in comp))
        errors.append("%s: error: call loop among runtime files: %s%s"
                      % (tree.shown(cycle[0]), " -> ".join(rel(s) for s in cycle), extra))
        for a, b in zip(cycle, cycle[1:]):
            names = sorted(edge_symbols[(a, b)])
            more = " and %d more" % (len(names) - 1) if len(names) > 1 else ""
            errors.append('%s: note: uses "%s"%s from %s'
                          % (tree.shown(a), plain[min(names)], more, rel(b)))
    for name, number in sorted(layers.allow_public.items()):
        if name not in used_allowances:
            warnings.append("%s:%d: warning: allow-public: no runtime file calls %s"
                            % (layers.shown, number, name))
    return len(refs_of), uses


def plural(n, one, many=None):
    return "%d %s" % (n, one if n == 1 else many or one + "s")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(
        description="Check that the runtime keeps the layers of runtime/LAYERS.",
        epilog="Without --build or --objects only the includes are checked.")
    parser.add_argument("--root", default=os.path.dirname(here),
                        help="the source tree (default: this script's)")
    parser.add_argument("--layers", help="the layer map (default: ROOT/runtime/LAYERS)")
    objects = parser.add_mutually_exclusive_group()
    objects.add_argument("--build", metavar="BUILD_DIR",
                         help="check calls too, from the objects under "
                              "BUILD_DIR/runtime/**/CMakeFiles/*.dir/")
    objects.add_argument("--objects", metavar="DIR",
                         help="check calls too, from DIR/<folder>/<file>[.cpp].o")
    parser.add_argument("--nm", default=os.environ.get("NM", "nm"), help="nm (default: $NM or nm)")
    parser.add_argument("--cxxfilt", default="c++filt", help="c++filt (default: c++filt)")
    args = parser.parse_args()

    root = os.path.abspath(args.root)
    if not os.path.isdir(os.path.join(root, "runtime")):
        fatal("%s has no runtime/" % root)
    layers_path = os.path.abspath(args.layers or os.path.join(root, "runtime", "LAYERS"))
    if not os.path.isfile(layers_path):
        fatal("no layer map %s" % layers_path)
    for option, value in (("--build", args.build), ("--objects", args.objects)):
        if value and not os.path.isdir(value):
            fatal("%s %s: no such directory" % (option, value))
    layers_shown = os.path.relpath(layers_path, root)
    if layers_shown.startswith(".."):
        layers_shown = layers_path

    errors, warnings = [], []
    layers = parse_layers(layers_path, layers_shown, errors)
    if errors:
        print("\n".join(errors))
        print("check-layers: %s is not a layer map" % layers_shown)
        return 1
    tree = Tree(root, layers)
    for folder in sorted(layers.level):
        if not os.path.isdir(os.path.join(tree.runtime, folder)):
            warnings.append("%s: warning: folder runtime/%s does not exist"
                            % (layers_shown, folder))
    files, includes = check_includes(tree, errors)
    include_errors = len(errors)
    if args.build or args.objects:
        sources, uses = check_calls(tree, args.build and os.path.abspath(args.build),
                                    args.objects and os.path.abspath(args.objects),
                                    args.nm, args.cxxfilt, errors, warnings)
        calls = "%s, %s between them" % (plural(sources, "built file"),
                                          plural(uses, "use of a symbol", "uses of symbols"))
    else:
        calls = "calls not checked (no --build or --objects)"
    for line in warnings + errors:
        print(line)
    scope = "%s, %s, %s, %s; %s" % (
        plural(len(set(layers.level.values())), "level"), plural(len(layers.level), "folder"),
        plural(files, "file"), plural(includes, "include"), calls)
    count = sum(1 for e in errors if ": error: " in e)
    if count:
        print("check-layers: %s (%d in includes, %d in calls): %s"
              % (plural(count, "error"), include_errors, count - include_errors, scope))
        return 1
    print("check-layers: ok, the runtime keeps its layers: %s" % scope)
    return 0


if __name__ == "__main__":
    sys.exit(main())
