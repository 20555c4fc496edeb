#!/usr/bin/env python3
"""Damages a jam image in place, for the reader's error tests.

  patch_image.py FILE fact KEY VALUE          same-length replacement in .tc.jam
  patch_image.py FILE section-size NAME SIZE  rewrite a section header's sh_size
  patch_image.py FILE fixup INDEX FIELD VALUE FIELD: offset, kind or symbol
  patch_image.py FILE section-type NAME TYPE [OFFSET]
                                              rewrite sh_type (and sh_offset)
  patch_image.py FILE section-name NAME OTHER give section NAME the name OTHER
  patch_image.py FILE header FIELD VALUE      FIELD: type or machine
  patch_image.py FILE image-byte OFFSET VALUE a byte of .tc.image (not rehashed)
"""
import struct
import sys


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", data, 0x3c)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    out = {}
    for i, h in enumerate(headers):
        name = data[strtab + h[0]:data.index(b"\0", strtab + h[0])].decode()
        out[name] = (shoff + 64 * i, h)
    return out


def main():
    path, what = sys.argv[1], sys.argv[2]
    data = bytearray(open(path, "rb").read())
    secs = sections(data)
    if what == "fact":
        key, value = sys.argv[3].encode(), sys.argv[4].encode()
        _, h = secs[".tc.jam"]
        start, size = h[4], h[5]
        blob = bytes(data[start:start + size])
        pos = blob.index(b"\0" + key + b"=") + 1 + len(key) + 1
        old = blob[pos:blob.index(b"\0", pos)]
        assert len(old) == len(value), "value must keep its length (%r)" % old
        data[start + pos:start + pos + len(value)] = value
    elif what == "section-size":
        hoff, _ = secs[sys.argv[3]]
        struct.pack_into("<Q", data, hoff + 32, int(sys.argv[4], 0))
    elif what == "fixup":
        index, field, value = int(sys.argv[3]), sys.argv[4], int(sys.argv[5], 0)
        _, h = secs[".tc.fixups"]
        rec = h[4] + 24 * index
        struct.pack_into("<I", data, rec + {"offset": 0, "kind": 4, "symbol": 8}[field], value)
    elif what == "section-type":
        hoff, _ = secs[sys.argv[3]]
        struct.pack_into("<I", data, hoff + 4, int(sys.argv[4], 0))
        if len(sys.argv) > 5:
            struct.pack_into("<Q", data, hoff + 24, int(sys.argv[5], 0))
    elif what == "section-name":
        hoff, _ = secs[sys.argv[3]]
        _, other = secs[sys.argv[4]]
        struct.pack_into("<I", data, hoff, other[0])
    elif what == "header":
        struct.pack_into("<H", data, {"type": 0x10, "machine": 0x12}[sys.argv[3]], int(sys.argv[4], 0))
    elif what == "image-byte":
        _, h = secs[".tc.image"]
        data[h[4] + int(sys.argv[3], 0)] = int(sys.argv[4], 0)
    open(path, "wb").write(data)


if __name__ == "__main__":
    main()
