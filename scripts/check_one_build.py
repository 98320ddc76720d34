#!/usr/bin/env python3
"""Checks that `cargo xtask` and the Python extension reuse the build of the README's test command.

    python3 scripts/check_one_build.py

`cargo test --workspace --release` compiles every crate with the features the whole workspace asks
for (dev-dependencies included). A later `cargo xtask reproduce` (`cargo run -p xtask`) or
`pip install ./crates/python` (`cargo build -p ksvd-python`) resolves features for its own package
only; any third-party crate that gets other features there is compiled again, with everything
that depends on it. crates/workspace-hack (managed by cargo-hakari) pins the union, and this
script fails, naming the crates and features, when a dependency change has let the builds drift
apart (fix: `cargo hakari generate`). It reads `cargo tree` only: nothing is compiled.
"""

import subprocess
import sys


def features(*args):
    out = subprocess.run(
        ["cargo", "tree", "--prefix", "none", "-f", "{p} [{f}]", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found = {}
    for line in out.splitlines():
        line = line.replace(" (*)", "").replace(" (proc-macro)", "").strip()
        if " [" not in line:
            continue
        name, feats = line.rsplit(" [", 1)
        found.setdefault(name, set()).update(f for f in feats.rstrip("]").split(",") if f)
    return found


def main():
    tests = features("--workspace", "-e", "normal,build,dev")
    drift = []
    for package in ("xtask", "ksvd-python"):
        alone = features("-p", package, "-e", "normal,build")
        for name in sorted(alone):
            if "(/" in name:  # workspace crates: compiled anyway when they change
                continue
            if name in tests and tests[name] != alone[name]:
                missing = sorted(tests[name] - alone[name])
                extra = sorted(alone[name] - tests[name])
                drift.append(f"  {package}: {name}: test build only {missing}, {package} only {extra}")
    if drift:
        print("builds drift apart (run `cargo hakari generate`, see crates/workspace-hack/Cargo.toml):")
        print("\n".join(drift))
        sys.exit(1)
    print("one build: xtask and ksvd-python use the test build's features")


if __name__ == "__main__":
    main()
