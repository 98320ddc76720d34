#!/usr/bin/env python3
"""Checks the one-owner invariants of ARCHITECTURE.md against the code.

    python3 scripts/check_ownership.py

ARCHITECTURE.md's table "Invariants" has one row per concept with a pattern (a Python regular
expression in backticks) that marks code implementing the concept, and the paths allowed to hold
it (its owner, plus exceptions with their reasons). This script reads that table, searches every
Rust and Python source file of the workspace (comments, strings of doc comments and test code left
out: files under tests/ or benches/, and from a `#[cfg(test)]` line on), and fails naming every
line that matches a pattern outside its allowed paths. Standard library only; no build.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("crates", "xtask")
SKIP_DIRS = {"target", ".venv", "__pycache__", "tests", "benches", ".pytest_cache"}


def invariants(text):
    """Rows of the table under the heading 'Invariants': (concept, pattern, allowed paths)."""
    rows, inside = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = line.lstrip("#").strip().lower().startswith("invariants")
            continue
        if not inside or not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) < 4 or cells[0].lower() == "concept":
            continue
        concept, _owner, pattern, allowed = cells[:4]
        m = re.fullmatch(r"`(.+)`", pattern)
        if not m:
            continue
        paths = re.findall(r"`([^`]+)`", allowed)
        rows.append((concept, re.compile(m.group(1).replace("\\|", "|")), paths))
    return rows


def code_lines(path):
    """(line number, code) of a source file without comments and test code."""
    out = []
    rust = path.suffix == ".rs"
    in_doc = False
    for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        stripped = line.strip()
        if not rust:
            # Python docstrings are prose, not code.
            quotes = stripped.count('"""') + stripped.count("'''")
            if in_doc or quotes:
                if quotes % 2 == 1:
                    in_doc = not in_doc
                continue
        if rust and stripped.startswith("#[cfg(test)]"):
            break
        if stripped.startswith(("//", "#", "*", "///", "//!")) and not stripped.startswith(("#[", "#!")):
            continue
        if rust:
            line = strip_rust_comment(line)
        elif '"""' not in line:
            line = line.split(" #", 1)[0]
        out.append((i, line))
    return out


def strip_rust_comment(line):
    in_str = False
    prev = ""
    for j, ch in enumerate(line):
        if ch == '"' and prev != "\\":
            in_str = not in_str
        if not in_str and ch == "/" and prev == "/":
            return line[: j - 1]
        prev = ch
    return line


def sources():
    for top in SOURCES:
        for path in sorted((ROOT / top).rglob("*")):
            rel = path.relative_to(ROOT)
            if any(part in SKIP_DIRS for part in rel.parts):
                continue
            if path.suffix in (".rs", ".py") and path.is_file():
                yield rel.as_posix(), path


def main():
    arch = ROOT / "ARCHITECTURE.md"
    rules = invariants(arch.read_text())
    if not rules:
        sys.exit("ARCHITECTURE.md has no 'Invariants' table with patterns")
    files = [(rel, code_lines(path)) for rel, path in sources()]
    problems = []
    for concept, pattern, allowed in rules:
        for rel, lines in files:
            if any(rel == a or rel.startswith(a.rstrip("/") + "/") for a in allowed):
                continue
            for i, line in lines:
                if pattern.search(line):
                    problems.append(f"{rel}:{i}: {concept}: {line.strip()}")
    if problems:
        print(f"{len(problems)} line(s) outside their owner (ARCHITECTURE.md, Invariants):")
        print("\n".join(problems))
        sys.exit(1)
    print(f"ownership: {len(rules)} invariants hold in {len(files)} files")


if __name__ == "__main__":
    main()
