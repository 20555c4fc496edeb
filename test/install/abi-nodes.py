#!/usr/bin/env python3
"""The export map's released nodes never change, and the version follows it.

  abi-nodes.py <twochains.map> <twochains.released> <version.h>

A node of runtime/twochains.map recorded in runtime/twochains.released
must list exactly the functions recorded for it, inherit the same node,
and be tied to the same minor version: a program linked against a release
records the node of each function it calls, and finds it in every later
library of that major version. A node not recorded yet is the coming
release's. TC_VERSION_MINOR is the newest node's minor (TWOCHAINS_<n> is
minor 2 + n): a new node, a new minor. With --self-test the check is run
against altered copies and must fail on each.
"""
import re
import sys

FIRST_MINOR = 2  # TWOCHAINS_0 is 0.2


def fail(message):
    raise SystemExit(f"abi-nodes: FAIL: {message}")


def read_map(path):
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    nodes = {}
    for name, body, parent in re.findall(r"(\w+)\s*\{(.*?)\}\s*(\w*)\s*;", text, re.S):
        globals_part = body.split("local:")[0].replace("global:", "")
        functions = sorted(f.strip() for f in globals_part.split(";") if f.strip())
        nodes[name] = (parent or "-", functions)
    if not nodes:
        fail(f"{path}: no version node found")
    return nodes


def read_released(path):
    """Lines '<node> <minor> <parent|->', each followed by its functions,
    indented, any number to a line."""
    released, current = {}, None
    for number, raw in enumerate(open(path), 1):
        line = raw.split("#")[0]
        words = line.split()
        if not words:
            continue
        if line[0].isspace():
            if current is None:
                fail(f"{path}:{number}: functions before any node")
            released[current][2].extend(words)
            continue
        if len(words) != 3 or not words[1].isdigit():
            fail(f"{path}:{number}: expected '<node> <minor> <parent|->'")
        current = words[0]
        released[current] = (int(words[1]), words[2], [])
    return {k: (m, p, sorted(f)) for k, (m, p, f) in released.items()}


def read_version(path):
    text = open(path).read()
    found = {k: int(v) for k, v in re.findall(r"#define TC_VERSION_(MAJOR|MINOR) (\d+)", text)}
    return found["MAJOR"], found["MINOR"]


def node_number(name, where):
    match = re.fullmatch(r"TWOCHAINS_(\d+)", name)
    if not match:
        fail(f"{where}: node '{name}' is not TWOCHAINS_<n>")
    return int(match.group(1))


def check(nodes, released, version):
    errors = []
    for name, (minor, parent, functions) in sorted(released.items()):
        if name not in nodes:
            errors.append(f"released node {name} (0.{minor}) is gone from the map")
            continue
        map_parent, map_functions = nodes[name]
        if map_parent != parent:
            errors.append(f"released node {name} inherits {map_parent}, released inheriting {parent}")
        if map_functions != functions:
            added = sorted(set(map_functions) - set(functions))
            removed = sorted(set(functions) - set(map_functions))
            errors.append(f"released node {name} (0.{minor}) changed: "
                          f"added {added or 'nothing'}, removed {removed or 'nothing'}; "
                          "functions go into a new node")
        if minor != FIRST_MINOR + node_number(name, "released"):
            errors.append(f"released node {name} recorded as 0.{minor}, "
                          f"expected 0.{FIRST_MINOR + node_number(name, 'released')}")
    newest = max(node_number(name, "map") for name in nodes)
    for number in range(newest + 1):
        if f"TWOCHAINS_{number}" not in nodes:
            errors.append(f"the map has no node TWOCHAINS_{number} below TWOCHAINS_{newest}")
    major, minor = version
    if minor != FIRST_MINOR + newest:
        errors.append(f"TC_VERSION is {major}.{minor} but the newest node TWOCHAINS_{newest} "
                      f"is minor {FIRST_MINOR + newest}: a new node, a new minor")
    return errors


def self_test(nodes, released, version):
    """Each alteration must be caught; the unaltered inputs must pass."""
    name = min(released)
    parent, functions = nodes[name]
    cases = {
        "a function removed from a released node":
            dict(nodes, **{name: (parent, functions[1:])}),
        "a function added to a released node":
            dict(nodes, **{name: (parent, sorted(functions + ["tc_new_function"]))}),
        "a released node gone": {k: v for k, v in nodes.items() if k != name},
    }
    for what, altered in cases.items():
        if not check(altered, released, version):
            fail(f"self-test: {what} was not caught")
    newer = dict(nodes, **{f"TWOCHAINS_{len(nodes)}": (max(nodes), ["tc_new_function"])})
    if not check(newer, released, version):
        fail("self-test: a new node without a new minor was not caught")
    print(f"abi-nodes: self-test: {len(cases) + 1} alterations caught")


def main(argv):
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) != 3:
        raise SystemExit(__doc__)
    nodes, released, version = read_map(args[0]), read_released(args[1]), read_version(args[2])
    errors = check(nodes, released, version)
    for error in errors:
        print(f"abi-nodes: FAIL: {error}")
    if errors:
        return 1
    if "--self-test" in argv:
        self_test(nodes, released, version)
    print(f"abi-nodes: {len(nodes)} nodes, {len(released)} released and unchanged; "
          f"version {version[0]}.{version[1]} follows TWOCHAINS_{len(nodes) - 1}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
