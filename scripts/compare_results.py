#!/usr/bin/env python3
"""Compares two result directories of `cargo xtask reproduce` cell by cell.

    python3 scripts/compare_results.py BEFORE_DIR AFTER_DIR [--rtol 1e-12] [--spec NAME ...]

A cell is one row of `<spec>.csv`, keyed by (dataset, method, metric, setting, seed). For every
spec present in both directories it reports cells only one side has, cells whose status differs,
and cells whose `value`, `std` or `trials` differ by more than `rtol` (relative, against the larger
magnitude). Measurements of time and memory (`seconds`, `threads`, metrics named like `seconds`,
`speedup`, `rss`, `memory`, `time`) are skipped: they differ from run to run. Notes are compared
only with `--notes` (they often quote times). Exit status 1 when anything differs.

Standard library only.
"""

import argparse
import csv
import math
import sys
from pathlib import Path

KEY = ("dataset", "method", "metric", "setting", "seed")
TIMED = ("seconds", "speedup", "rss", "memory", "time", "mib", "cpu")


def timed(metric):
    m = metric.lower()
    return any(t in m for t in TIMED)


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    cells = {}
    for r in rows:
        k = tuple(r.get(c, "") for c in KEY)
        # Repeated keys (e.g. several rows of one cell) keep their order.
        n = 0
        while (k, n) in cells:
            n += 1
        cells[(k, n)] = r
    return cells


def number(s):
    if s in ("", None):
        return None
    try:
        return float(s)
    except ValueError:
        return s


def differs(a, b, rtol):
    a, b = number(a), number(b)
    if a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a != b
    if math.isnan(a) and math.isnan(b):
        return False
    scale = max(abs(a), abs(b))
    return abs(a - b) > rtol * scale


def compare(before, after, rtol, notes):
    out = []
    for k in sorted(set(before) | set(after), key=str):
        (key, n) = k
        if timed(key[2]):
            continue
        a, b = before.get(k), after.get(k)
        label = "/".join(x for x in key if x) + (f" #{n}" if n else "")
        if a is None or b is None:
            out.append(f"  only {'after' if a is None else 'before'}: {label}")
            continue
        if a["status"] != b["status"]:
            out.append(f"  status {label}: {a['status']} -> {b['status']}")
        for col in ("value", "std", "trials"):
            if differs(a.get(col), b.get(col), rtol):
                out.append(f"  {col} {label}: {a.get(col)} -> {b.get(col)}")
        if notes and a.get("note") != b.get("note"):
            out.append(f"  note {label}:\n    - {a.get('note')}\n    + {b.get('note')}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rtol", type=float, default=1e-12)
    ap.add_argument("--spec", action="append", default=[])
    ap.add_argument("--notes", action="store_true")
    args = ap.parse_args()
    names = sorted(
        p.stem
        for p in args.before.glob("*.csv")
        if not p.name.endswith(".summary.csv") and (args.after / p.name).exists()
    )
    if args.spec:
        names = [n for n in names if n in args.spec]
    if not names:
        sys.exit(f"no spec CSV files in both {args.before} and {args.after}")
    total = 0
    for name in names:
        diff = compare(load(args.before / f"{name}.csv"), load(args.after / f"{name}.csv"), args.rtol, args.notes)
        total += len(diff)
        print(f"{name}: {'identical' if not diff else f'{len(diff)} difference(s)'}")
        for line in diff:
            print(line)
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
