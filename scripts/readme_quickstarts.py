#!/usr/bin/env python3
"""Runs the README's quickstarts exactly as written.

    python3 scripts/readme_quickstarts.py [--python PYTHON] [--ksvd-dir DIR]

The README's ```sh and ```python blocks run in a fresh temporary folder that sees the repository's
`crates/` and `data/` folders (so `crates/cli/examples/rows.csv` resolves as from the root) and
collects what the blocks write; `ksvd` is the command built by the test build (`target/release`,
or `--ksvd-dir`), Python is `--python` (a venv with the package installed). The ```rust block is a
doctest of the `ksvd` crate (`cargo test` runs it). Exits non-zero naming the first block that
fails. Standard library only.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def blocks(text):
    """(language, first line number, code) of every fenced block."""
    out = []
    for m in re.finditer(r"^```(\w+)\n(.*?)^```", text, re.S | re.M):
        out.append((m.group(1), text[: m.start()].count("\n") + 1, m.group(2)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--ksvd-dir", type=Path, default=ROOT / "target" / "release")
    args = ap.parse_args()
    readme = (ROOT / "README.md").read_text()
    todo = [(lang, line, code) for lang, line, code in blocks(readme) if lang in ("sh", "python")]
    if not todo:
        sys.exit("README.md has no ```sh or ```python block")
    # The blocks run in a temporary folder: a relative interpreter path (a venv's) is made
    # absolute without resolving its symlink (which would leave the venv).
    python = os.path.abspath(args.python) if os.sep in args.python else args.python
    env = dict(os.environ, PATH=f"{args.ksvd_dir.resolve()}{os.pathsep}{os.environ.get('PATH', '')}")
    for lang, line, code in todo:
        with tempfile.TemporaryDirectory(prefix="ksvd-readme-") as tmp:
            for name in ("crates", "data"):
                os.symlink(ROOT / name, Path(tmp) / name)
            cmd = ["bash", "-euo", "pipefail", "-c", code] if lang == "sh" else [python, "-c", code]
            print(f"== README.md:{line} ({lang})", flush=True)
            run = subprocess.run(cmd, cwd=tmp, env=env)
            if run.returncode != 0:
                sys.exit(f"README.md:{line}: the {lang} quickstart failed (exit status {run.returncode})")
    print(f"{len(todo)} README quickstarts ran")


if __name__ == "__main__":
    main()
