#!/usr/bin/env python3
"""Advice, not a rule: the modules of ORE over 400 lines, longest first.

A long module is worth a look: it may hold two subjects that would read better apart. It is not
an error, and no line count is a target: packing lines to stay under a number helps nobody. So
this prints and always exits 0 (.ci/run shows it and goes on).

    python .ci/long_modules.py [--over N] [ROOT]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def long_modules(root: Path, over: int) -> list[tuple[int, Path]]:
    """(lines, path) of each .py file under `root` longer than `over` lines, longest first."""
    found = []
    for path in root.rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        with path.open(encoding="utf-8", errors="replace") as f:
            lines = sum(1 for _ in f)
        if lines > over:
            found.append((lines, path))
    return sorted(found, key=lambda item: (-item[0], str(item[1])))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=REPO / "ore")
    parser.add_argument("--over", type=int, default=400, metavar="N")
    args = parser.parse_args(argv)
    found = long_modules(args.root, args.over)
    if not found:
        print(f"No module of {args.root.name}/ is over {args.over} lines.")
        return 0
    print(f"Modules over {args.over} lines (advice: a long module may hold two subjects):")
    width = len(str(found[0][0]))
    for lines, path in found:
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        print(f"  {lines:>{width}}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
