#!/usr/bin/env python3
r"""Shrinks a hotfuse-view screenshot for the documentation: a palette PNG of at most 256
colours (the most frequent ones; every other colour maps to its nearest), compressed with
zlib level 9. Python 3 standard library only (the PNG is read with check_png.read_png).

    shrink_png.py IN.png OUT.png

docs/viewer.png was made from a MobileNetV2 dump (hotfuse-run build/models/mobilenet_v2/
model.onnx --fusion adaptive --sync-compile --dump /tmp/mnv2), the /features box clicked
(its centre from --screenshot-facts, viewer/tools/check_facts.py --print-box-center):
    hotfuse-view /tmp/mnv2 --screenshot /tmp/a.png --size 1600x1000 --screenshot-facts /tmp/a.json
    hotfuse-view /tmp/mnv2 --screenshot /tmp/v.png --size 1600x1000 --click \
        $(viewer/tools/check_facts.py /tmp/a.json --print-box-center before /features)
    viewer/tools/shrink_png.py /tmp/v.png docs/viewer.png
"""
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_png import read_png  # noqa: E402


def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    width, height, bpp, rows = read_png(src)
    counts = {}
    for row in rows:
        for x in range(width):
            c = row[x * bpp:x * bpp + 3]
            counts[c] = counts.get(c, 0) + 1
    palette = [c for c, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:256]]
    index = {c: i for i, c in enumerate(palette)}
    for c in counts:
        if c not in index:
            r, g, b = c
            index[c] = min(range(len(palette)), key=lambda i: (palette[i][0] - r) ** 2 * 3 +
                           (palette[i][1] - g) ** 2 * 4 + (palette[i][2] - b) ** 2 * 2)
    raw = bytearray()
    for row in rows:
        raw.append(0)  # no filter: palette indices do not predict well
        raw.extend(index[row[x * bpp:x * bpp + 3]] for x in range(width))
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
    png += chunk(b"PLTE", b"".join(palette))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    png += chunk(b"IEND", b"")
    with open(dst, "wb") as f:
        f.write(png)
    print(f"{dst}: {width}x{height}, {len(counts)} colours -> {len(palette)}, "
          f"{os.path.getsize(src)} -> {len(png)} bytes")


if __name__ == "__main__":
    main()
