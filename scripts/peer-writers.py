#!/usr/bin/env python3
"""Which runtime folders write each part of a peer (issue 42's measure).

  scripts/peer-writers.py [-v] [runtime dir]

Reads the members of tc_peer (runtime/core/Peer.h), of the frame path's
send and receive halves (runtime/path/PeerPath.h; core/Peer.h before they
moved), and of the parts upper layers declare in their own folders
(send/PeerSend.h, receive/PeerReceive.h, code/PeerCode.h,
package/PeerPackage.h, job/PeerJob.h, wireup/PeerWireup.h, calls/PeerCalls.h,
control/PeerControl.h), and, in
every runtime source, the places that change one: an assignment (=, +=,
++, ...) or a call that changes a container or a part (push_back, erase,
clear, start, end, ...) on `Tx.Member`, `Rx->Member`, `Peer->Member`,
`Peer->Sending->Member`, `callsOf(Peer).Member`-like uses. Prints, per
part, the folders that write it and, per member, its writers. A static
approximation: writes through references taken elsewhere are not seen.
"""
import os
import re
import sys

ARGS = [a for a in sys.argv[1:] if not a.startswith("-")]
ROOT = ARGS[0] if ARGS else "runtime"
PEER_H = os.path.join(ROOT, "core", "Peer.h")
PATH_H = os.path.join(ROOT, "path", "PeerPath.h")
MUTATORS = ("push_back|emplace_back|emplace|push_front|pop_front|pop_back|erase|clear|insert|"
            "reset|swap|assign|resize|start|end|refusedForNow|takeRetry|push|moveTo|take|"
            "credit|reserve|unreserve|finish|reported|step|store|fetch_add|exchange")


def members(text, struct):
    """The data members declared directly in `struct <name> {`."""
    start = re.search(r"struct %s\s*\{" % re.escape(struct), text)
    if not start:
        return []
    depth, i, body = 1, start.end(), []
    while depth and i < len(text):
        c = text[i]
        depth += c == "{"
        depth -= c == "}"
        if depth == 1 or (depth == 2 and c == "{"):
            body.append(c)
        i += 1
    names = []
    for line in "".join(body).split(";"):
        line = re.sub(r"//.*", "", line).strip()
        line = re.sub(r"^enum\s+(class\s+)?\w+\s*\{[^}]*\}", "", line).strip()
        line = re.sub(r"<[^<>]*(<[^<>]*>[^<>]*)*>", "", line)  # template arguments
        if not line or "(" in line.split("=")[0] or line.startswith(("using", "struct", "enum", "static")):
            continue
        for part in line.split(","):
            decl = part.split("=")[0].split("{")[0]
            m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", decl.strip())
            if m:
                names.append(m.group(1))
    nested = set(re.findall(r"(?:struct|class|union|enum)\s+(?:class\s+)?(\w+)", "".join(body)))
    skip = {"union", "struct", "class", "enum"} | nested
    return sorted({n for n in names if n not in skip and not n.endswith("_t")})


def writes(source, prefix, name):
    member = r"%s\b%s\b" % (prefix, name)
    assign = r"%s(\[[^\]]*\])?\s*(=(?!=)|\+=|-=|\|=|&=|\+\+|--)" % member
    bumped = r"(\+\+|--)\s*[\w>.\-]*%s(?!\s*->)" % member
    mutate = r"%s(\[[^\]]*\])?\s*(\.|->)\s*(%s)\s*\(" % (member, MUTATORS)
    return re.search(assign, source) or re.search(bumped, source) or re.search(mutate, source)


def peer_names(sources):
    """The names runtime sources give peers (tc_peer pointers, owners,
    references), so that `X->Name = ...` counts only where X is a peer,
    not a package or a waker with a member of the same name."""
    names = set()
    for src in sources.values():
        names.update(re.findall(r"tc_peer(?:_t)?\s*\*(?:\s*const)?\s*&?\s*(\w+)", src))
        names.update(re.findall(r"unique_ptr<tc_peer>\s*&?\s*(\w+)", src))
        names.update(re.findall(r"auto\s*\*?\s*(\w+)\s*=\s*newPeer\(", src))
        names.update(re.findall(r"for\s*\(\s*(?:const\s+)?auto\s*&?\*?\s*(\w+)\s*:\s*Ctx->(?:Accepted|Connected|Connecting|Gone|Polled)\b", src))
    return names


def peer_prefix(src):
    """The ways a source names a peer: its own peer variables."""
    peers = "|".join(sorted(peer_names({"": src}))) or "Peer"
    return r"(\b(?:%s)(?:\.get\(\))?->|\bHandle->|\bT\.Handle->)" % peers


def main():
    text = open(PEER_H).read()
    # The frame path's halves: in path/ once they moved there, in core before.
    halves = open(PATH_H).read() if os.path.exists(PATH_H) else text
    parts = {
        "tc_peer": (members(text, "tc_peer"), None),
        "Tx (PeerSendHalf)": (members(halves, "PeerSendHalf"), r"(\bTx\.|Tx->)"),
        "Rx (PeerReceiveHalf)": (members(halves, "PeerReceiveHalf"), r"(\bRx\.|Rx->)"),
    }
    parts["tc_peer"][0][:] = [m for m in parts["tc_peer"][0] if m not in ("Tx", "Rx")]
    for label, header, struct, prefix in (
            ("Wireup (PeerWireup)", ("wireup", "PeerWireup.h"), "PeerWireup",
             r"(Wireup->|wireupOf\([^()]*\)\.)"),
            ("Calls (PeerCalls)", ("calls", "PeerCalls.h"), "PeerCalls",
             r"(\bOf\.|callsOf\([^()]*\)\.|Calls->)"),
            ("Receiving (PeerReceive)", ("receive", "PeerReceive.h"), "PeerReceive",
             r"(Receiving->|\bReceiving\.)"),
            ("Sending (PeerSend)", ("send", "PeerSend.h"), "PeerSend",
             r"(Sending->|\bS\.)"),
            ("Job (PeerJob)", ("job", "PeerJob.h"), "PeerJob", r"(Connection->Job->)"),
            ("Code (PeerCode)", ("code", "PeerCode.h"), "PeerCode", r"(\bCode->)"),
            ("Package (PeerPackage)", ("package", "PeerPackage.h"), "PeerPackage",
             r"(\bPackage->)"),
            ("Control (PeerControl)", ("control", "PeerControl.h"), "PeerControl",
             r"(\bControl->)")):
        path = os.path.join(ROOT, *header)
        if os.path.exists(path):
            parts[label] = (members(open(path).read(), struct), prefix)
    sources = {}
    for folder in sorted(os.listdir(ROOT)):
        path = os.path.join(ROOT, folder)
        if not os.path.isdir(path):
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith((".cpp", ".h")):
                sources[os.path.join(folder, name)] = open(os.path.join(path, name)).read()
    for part, (names, prefix) in parts.items():
        folders, lines = set(), []
        for name in names:
            by = sorted({f.split("/")[0] for f, src in sources.items()
                         if writes(src, prefix or peer_prefix(src), name)})
            folders.update(by)
            lines.append("    %-28s %s" % (name, ", ".join(by) or "-"))
        print("%s: %d members, written from %d folders: %s" %
              (part, len(names), len(folders), ", ".join(sorted(folders))))
        if part == "tc_peer":
            held = set(re.findall(r"PeerPart<[^;]*>\s+(\w+);", text)) | {"Tx", "Rx"}
            own = [n for n in names if n not in held]
            by = sorted({f.split("/")[0] for f, src in sources.items() for n in own
                         if writes(src, prefix or peer_prefix(src), n)})
            print("  core's own (not parts): %d members, written from %d folders: %s" %
                  (len(own), len(by), ", ".join(by)))
        if "-v" in sys.argv:
            print("\n".join(lines))


if __name__ == "__main__":
    main()
