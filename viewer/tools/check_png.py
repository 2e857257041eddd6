#!/usr/bin/env python3
"""Checks a PNG written by `hotfuse-view --screenshot` (tests/viewer.cmake).

    check_png.py FILE --size WxH [--region X0,Y0,X1,Y1] [--min-colors N] [--max-share F]

Passes when FILE is a PNG of exactly WxH pixels and, inside the region (fractions of the
width and height; default the whole image), there are at least N distinct colours and no
single colour covers more than F of the pixels (not blank). Python 3 standard library only:
the PNG is decoded with zlib (8-bit RGB or RGBA, non-interlaced, as stb_image_write and
most writers produce).
"""
import argparse
import struct
import sys
import zlib


def fail(msg):
    print("check_png: " + msg, file=sys.stderr)
    sys.exit(1)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    try:
        data = open(path, "rb").read()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: not a PNG file")
    pos, idat, header = 8, [], None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None or not idat:
        fail(f"{path}: no IHDR or IDAT chunk")
    width, height, depth, ctype, _, _, interlace = header
    if depth != 8 or ctype not in (2, 6) or interlace != 0:
        fail(f"{path}: unsupported PNG (bit depth {depth}, colour type {ctype}, interlace {interlace})")
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        fail(f"{path}: image data has {len(raw)} bytes, expected {height * (stride + 1)}")
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif f == 4:
                line[i] = (line[i] + paeth(a, b, c)) & 0xFF
            elif f != 0:
                fail(f"{path}: bad filter type {f} on row {y}")
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--size", required=True)
    ap.add_argument("--region", default="0,0,1,1")
    ap.add_argument("--min-colors", type=int, default=8)
    ap.add_argument("--max-share", type=float, default=0.97)
    a = ap.parse_args()
    want_w, want_h = (int(v) for v in a.size.split("x"))
    width, height, bpp, rows = read_png(a.file)
    if (width, height) != (want_w, want_h):
        fail(f"{a.file}: {width}x{height}, expected {want_w}x{want_h}")
    x0, y0, x1, y1 = (float(v) for v in a.region.split(","))
    px0, px1 = int(x0 * width), max(int(x0 * width) + 1, int(x1 * width))
    py0, py1 = int(y0 * height), max(int(y0 * height) + 1, int(y1 * height))
    counts = {}
    for y in range(py0, py1):
        row = rows[y]
        for x in range(px0, px1):
            c = row[x * bpp:x * bpp + 3]
            counts[c] = counts.get(c, 0) + 1
    total = sum(counts.values())
    top = max(counts.values())
    print(f"check_png: {a.file}: {width}x{height}, region {px0},{py0}-{px1},{py1}: "
          f"{len(counts)} colours, most common {top / total:.1%}")
    if len(counts) < a.min_colors:
        fail(f"{a.file}: only {len(counts)} distinct colours in the region (want >= {a.min_colors}): blank?")
    if top / total > a.max_share:
        fail(f"{a.file}: one colour covers {top / total:.1%} of the region (max {a.max_share:.0%}): blank?")


if __name__ == "__main__":
    main()
