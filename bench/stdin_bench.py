"""Benchmark the stdin bound: the peak memory of `ore` fed far more on stdin than `--max-input`
allows, against the limit itself, and the same with input just under the limit.

Each case is a whole process (`ore --dry-run`, which calls no model) whose stdin is a pipe that a
writer keeps filling; the peak resident set comes from `wait4`'s rusage, so it is the process's
own, not a sampled guess. A baseline (`ore --dry-run --no-stdin q`) shows what the interpreter and
ORE's imports cost before any input is read; the target is the growth over it.

    python bench/stdin_bench.py [--limit 16M] [--feed 256M]

Target (issue 21): stdin over the limit costs at most 2x the limit in memory.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from _timing import clean_env

ORE = shutil.which("ore", path=str(Path(sys.executable).parent)) or "ore"
UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3}


def size(text: str) -> int:
    text = text.strip().upper()
    return int(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else int(text)


def run(args: list[str], feed: int, env: dict[str, str]) -> tuple[int, int, str]:
    """(exit code, peak RSS in bytes, last stderr line) of `ore ARGS` fed `feed` bytes."""
    proc = subprocess.Popen(
        [ORE, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stderr is not None
    chunk = b"x" * (1 << 20)

    def write() -> None:
        try:
            left = feed
            while left > 0:
                proc.stdin.write(chunk[: min(left, len(chunk))])  # type: ignore[union-attr]
                left -= len(chunk)
            proc.stdin.close()  # type: ignore[union-attr]
        except (BrokenPipeError, ValueError):
            pass  # ORE stopped reading at its limit: that is the point

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    stderr = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    writer.join(timeout=5)
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    return proc.returncode, usage.ru_maxrss * 1024, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", default="16M")
    parser.add_argument("--feed", default="256M")
    args = parser.parse_args()
    limit, feed = size(args.limit), size(args.feed)
    with tempfile.TemporaryDirectory() as home:
        env = clean_env(ORE_HOME=home, NO_COLOR="1")
        base = run(["--dry-run", "--model", "m", "--no-stdin", "q"], 0, env)
        under = run(
            ["--dry-run", "--model", "m", "--max-input", args.limit, "q"], limit - (1 << 20), env
        )
        over = run(["--dry-run", "--model", "m", "--max-input", args.limit, "q"], feed, env)
    mib = 1024 * 1024
    print(f"limit {limit / mib:.0f} MiB, fed {feed / mib:.0f} MiB when over it")
    print(f"  baseline (no stdin)      exit {base[0]}  peak {base[1] / mib:7.1f} MiB")
    for name, (code, peak, last) in (("just under the limit", under), ("over the limit", over)):
        growth = (peak - base[1]) / limit
        print(
            f"  {name:<24} exit {code}  peak {peak / mib:7.1f} MiB  "
            f"growth {growth:.2f}x the limit  {last[:70]}"
        )
    print("target: growth over the limit <= 2.00x")


if __name__ == "__main__":
    main()
