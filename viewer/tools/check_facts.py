#!/usr/bin/env python3
"""Checks what hotfuse-view says it drew (--screenshot-facts FILE) against conditions.

Usage: check_facts.py FACTS.json COND...
       check_facts.py FACTS.json --print KEY
       check_facts.py FACTS.json --print-box-center SIDE PATH

A condition is KEY OP NUMBER in one word: `graph.before.boxes_drawn>=10`,
`graph.after.min_label_px>=7`, `graph.before.clip_top>=graph.before.title_bottom` (the right side may be a key too). OP is one of
>=, <=, ==, >, <. Keys are dotted paths into the JSON. Every failed condition is printed with
the values; the exit code is 1 when any failed, 2 for bad usage or a missing key.

--print KEY prints a value (to compare two screenshots).
--print-box-center SIDE PATH prints "X,Y", the centre of the collapsed scope PATH drawn in
SIDE (graph.before / graph.after), for a following --click; exit 1 when it was not drawn.
"""
import json
import re
import sys

COND = re.compile(r"^([A-Za-z0-9_.]+)(>=|<=|==|>|<)([A-Za-z0-9_.\-]+)$")


def lookup(facts, key):
    """The value at dotted KEY: a panel's flat key ("timeline.message") or a path into nested
    objects ("graph.before.boxes_drawn")."""
    if key in facts:
        return facts[key]
    v = facts
    for part in key.split("."):
        if not isinstance(v, dict) or part not in v:
            raise KeyError(key)
        v = v[part]
    return v


def value(facts, key):
    if re.fullmatch(r"-?[0-9]+(\.[0-9]*)?", key):
        return float(key)
    v = lookup(facts, key)
    if isinstance(v, bool):
        return float(v)
    if not isinstance(v, (int, float)):
        raise KeyError(f"{key} is not a number")
    return float(v)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        facts = json.load(f)
    args = argv[2:]
    if args[:1] == ["--print"] and len(args) == 2:
        try:
            print(f"{value(facts, args[1]):g}")
        except KeyError as e:
            print(f"check_facts.py: {argv[1]}: no numeric {e}", file=sys.stderr)
            return 2
        return 0
    if args[:1] == ["--print-box-center"]:
        if len(args) != 3:
            print(__doc__, file=sys.stderr)
            return 2
        try:
            side = lookup(facts, args[1])
        except KeyError:
            side = {}
        for box in side.get("box_rects", []) if isinstance(side, dict) else []:
            if box["path"] == args[2]:
                x0, y0, x1, y1 = box["rect"]
                print(f"{(x0 + x1) / 2:.0f},{(y0 + y1) / 2:.0f}")
                return 0
        print(f"FAIL: {argv[1]}: no box {args[2]} drawn in {args[1]}", file=sys.stderr)
        return 1
    failed = 0
    for cond in args:
        m = COND.match(cond)
        if not m:
            print(f"check_facts.py: bad condition {cond!r}", file=sys.stderr)
            return 2
        try:
            a, b = value(facts, m[1]), value(facts, m[3])
        except KeyError as e:
            print(f"check_facts.py: {argv[1]}: no numeric {e}", file=sys.stderr)
            return 2
        ok = {">=": a >= b, "<=": a <= b, "==": a == b, ">": a > b, "<": a < b}[m[2]]
        if not ok:
            print(f"FAIL: {argv[1]}: {cond} ({m[1]} = {a:g}, {m[3]} = {b:g})")
            failed += 1
    if failed == 0:
        print(f"{argv[1]}: {len(args)} facts OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
