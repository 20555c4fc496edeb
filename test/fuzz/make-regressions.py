#!/usr/bin/env python3
"""Writes the hand-made regression inputs of the fuzz targets.

  make-regressions.py [--yaml2obj yaml2obj-19]

Each input is one of the crashes fixed in the readers (docs/testing.md,
"Fuzzing"); the fuzzers' own findings sit next to them as crash-<sha1>.
Run from anywhere; it writes into test/fuzz/regressions/<target>/.

  fuzz-image-reader     jam image containers, built here from scratch
  fuzz-manifest-reader  manifest text
  fuzz-jamlink-input    the objects of test/lit/jamlink/malformed-objects.test,
                        through yaml2obj
"""
import argparse
import hashlib
import os
import re
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "regressions")

SHT_NULL, SHT_PROGBITS, SHT_STRTAB, SHT_NOBITS = 0, 1, 3, 8
EM_X86_64 = 62


def image(code=b"\xc3", gotp=0, fixups=(), imports=(), facts=None, sections=None):
    """A jam image container as jamlink writes it (jamlink/JamImage.cpp), with
    the content hash the runtime recomputes. facts overrides .tc.jam values;
    sections(list) may rewrite the section headers before they are written."""
    body = bytearray(8) + code
    body += bytes(-len(body) % 64)
    entry = 8
    fixup_bytes = b"".join(struct.pack("<IIIIq", *f) for f in fixups)
    h = hashlib.sha256(bytes(body))
    for name in imports:
        h.update(name.encode() + b"\0")
    h.update(fixup_bytes)
    h.update(("%d/%d/x86_64" % (entry, gotp)).encode())
    kv = {"format": "tc-jam-image", "version": "1", "tc.abi": "1", "element": "r",
          "isa": "x86_64", "entry": hex(entry), "entry-symbol": "r_main", "gotp": hex(gotp),
          "align": "8", "code-size": str(len(code)), "rodata-size": "0", "data-size": "0",
          "bss-size": "0", "image-size": str(len(body)), "imports": str(len(imports)),
          "fixups": str(len(fixups)), "hash": h.hexdigest(), "source": "jam_r.o"}
    kv.update(facts or {})
    fact_bytes = b"".join(("%s=%s" % kv_).encode() + b"\0" for kv_ in kv.items())
    parts = [(".tc.image", bytes(body), 64), (".tc.jam", fact_bytes, 1),
             (".tc.imports", b"".join(n.encode() + b"\0" for n in imports), 1),
             (".tc.fixups", fixup_bytes, 8)]
    shstr = b"\0"
    names = []
    for name, _, _ in parts:
        names.append(len(shstr))
        shstr += name.encode() + b"\0"
    shstr_name = len(shstr)
    shstr += b".shstrtab\0"
    out = bytearray(64)
    headers = [dict(name=0, type=SHT_NULL, flags=0, offset=0, size=0, align=0, entsize=0)]
    for (name, data, align), off in zip(parts, names):
        out += bytes(-len(out) % align)
        headers.append(dict(name=off, type=SHT_PROGBITS, flags=0, offset=len(out),
                            size=len(data), align=align, entsize=24 if name == ".tc.fixups" else 0))
        out += data
    headers.append(dict(name=shstr_name, type=SHT_STRTAB, flags=0, offset=len(out),
                        size=len(shstr), align=1, entsize=0))
    out += shstr
    out += bytes(-len(out) % 8)
    if sections:
        sections(headers)
    shoff = len(out)
    for s in headers:
        out += struct.pack("<IIQQQQIIQQ", s["name"], s["type"], s["flags"], 0, s["offset"],
                           s["size"], 0, 0, s["align"], s["entsize"])
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    out[0:64] = ident + struct.pack("<HHIQQQIHHHHHH", 0, EM_X86_64, 1, 0, 0, shoff, 0, 64,
                                    0, 0, 64, len(headers), len(headers) - 1)
    return bytes(out)


def retype(index, type_, offset=None):
    def edit(headers):
        headers[index]["type"] = type_
        if offset is not None:
            headers[index]["offset"] = offset
    return edit


FAR = 0x7fff0000_00000000  # an offset no file has


def image_inputs():
    # Sections 1..4 are .tc.image, .tc.jam, .tc.imports, .tc.fixups; 5 is the
    # name table. SHT_NOBITS and SHT_NULL sections skipped the bounds check
    # and were then read.
    yield "nobits-image", image(sections=retype(1, SHT_NOBITS, FAR))
    yield "nobits-facts", image(sections=retype(2, SHT_NOBITS, FAR))
    yield "null-imports", image(imports=["puts"], sections=retype(3, SHT_NULL, FAR))
    yield "nobits-fixups", image(fixups=[(8, 1, 0, 0, 8)], sections=retype(4, SHT_NOBITS, FAR))
    yield "nobits-name-table", image(sections=retype(5, SHT_NOBITS, FAR))
    yield "null-name-table", image(sections=retype(5, SHT_NULL, FAR))
    yield "progbits-name-table", image(sections=retype(5, SHT_PROGBITS))
    # GOTP + 8 wrapped to 0 and passed the check; the runtime then hashed
    # and wrote 2^64 - 8 bytes away (codeDigest, prepareInjected).
    # (With a fixup, so that the empty-fixups memcpy below is not hit first.)
    yield "gotp-wraps", image(gotp=0xffff_ffff_ffff_fff8, fixups=[(8, 1, 0, 0, 8)])
    # No fixups: memcpy from a null vector's data() (undefined behaviour).
    yield "no-fixups", image()
    # strtoull read "-8" as 2^64 - 8: the same wrap, spelled another way.
    yield "negative-gotp", image(gotp=0xffff_ffff_ffff_fff8, fixups=[(8, 1, 0, 0, 8)],
                                 facts={"gotp": "-8"})


def manifest_inputs():
    h = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"  # the fuzzer's stand-in hash
    head = ("twochains-manifest 1\npackage p\nidentity %s\nisa x86_64 local=x86_64/libp_local.so "
            "local-hash=%s\n" % (h, h))
    jam = "jam %s a isa=x86_64 image=x86_64/jams/a.jam hash=%s imports=puts\n"
    # A line of characters that trim() kept and istringstream skipped: no
    # words, and W[0] of an empty vector.
    yield "vertical-tab-line", (head + "\v\n").encode()
    yield "form-feed-line", (head + " \f \n").encode()
    # IDs that passed the reader and then wrapped (ID + 1) or exhausted
    # memory in tc_package_load's resize.
    yield "id-4294967295", (head + jam % ("4294967295", h)).encode()
    yield "id-100000000", (head + jam % ("100000000", h)).encode()
    # 7 and 007 were two IDs to the reader and one to the loader.
    yield "id-spellings", (head + jam % ("7", h) + (jam % ("007", h)).replace(" a ", " b ")).encode()


def jamlink_inputs(yaml2obj):
    text = open(os.path.join(ROOT, "test/lit/jamlink/malformed-objects.test")).read()
    parts = re.split(r"^#--- (\S+)\n", text, flags=re.M)
    with tempfile.TemporaryDirectory() as tmp:
        for name, body in zip(parts[1::2], parts[2::2]):
            src = os.path.join(tmp, name)
            obj = src + ".o"
            open(src, "w").write(body)
            subprocess.run([yaml2obj, src, "-o", obj], check=True)
            yield os.path.splitext(name)[0], open(obj, "rb").read()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--yaml2obj", default="yaml2obj-19")
    args = ap.parse_args()
    for target, inputs in [("fuzz-image-reader", image_inputs()),
                           ("fuzz-manifest-reader", manifest_inputs()),
                           ("fuzz-jamlink-input", jamlink_inputs(args.yaml2obj))]:
        os.makedirs(os.path.join(OUT, target), exist_ok=True)
        for name, data in inputs:
            with open(os.path.join(OUT, target, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
