"""Benchmark skill listing: 500 skills with large bodies, listed from their frontmatter alone.

Builds a temporary ORE home with N skills whose SKILL.md holds a short frontmatter and a large
body, then measures, in this process and as whole `ore` processes:

- `discover_skills()` (level 1): wall time and bytes actually read (Linux `/proc/self/io`
  rchar), against a naive loader that reads every whole file and parses it with PyYAML;
- `ore --list-skills` with those N skills, against `ore --list-tools` and `python -c "import
  click"` (the start-up bound of the loop issue: non-model commands <= 1.6x `import click`).

    python bench/skills_bench.py [--skills 500] [--body-kib 100] [--runs 11] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PY = sys.executable
ORE = shutil.which("ore", path=str(Path(PY).parent)) or shutil.which("ore") or "ore"


def rchar() -> int:
    with open("/proc/self/io", encoding="ascii") as f:
        return int(next(line for line in f if line.startswith("rchar:")).split()[1])


def build(home: Path, count: int, body_kib: int) -> int:
    """N skills under home/skills; returns the total size of their SKILL.md files."""
    body = ("Follow these steps carefully and explain each one. " * 20 + "\n") * (body_kib)
    body = body[: body_kib * 1024]
    total = 0
    for i in range(count):
        folder = home / "skills" / f"skill-{i:03d}"
        folder.mkdir(parents=True)
        text = (
            f"---\nname: skill-{i:03d}\n"
            f"description: Benchmark skill number {i}, which does one thing well.\n"
            "license: MIT\n"
            f"metadata:\n  hints: bench hint {i}, skill number {i}\n  author: bench\n"
            f"---\n{body}"
        )
        (folder / "SKILL.md").write_text(text, encoding="utf-8")
        total += len(text.encode())
    return total


def measure(fn: Callable[[], object], runs: int) -> tuple[float, int]:
    """Median seconds and the bytes read by one call."""
    fn()  # warm the page cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    before = rchar()
    fn()
    return statistics.median(times), rchar() - before


def naive(root: Path) -> int:
    """What reading every whole file would cost: read, split, yaml.safe_load."""
    import yaml

    found = 0
    for skill_md in sorted(root.glob("*/SKILL.md")):
        text = skill_md.read_text(encoding="utf-8")
        front = text.split("---\n", 2)[1]
        found += bool(yaml.safe_load(front))
    return found


def wall(cases: dict[str, list[str]], env: dict[str, str], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in cases}
    for cmd in cases.values():
        subprocess.run(cmd, env=env, capture_output=True, check=True)
    for _ in range(runs):
        for name, cmd in cases.items():
            start = time.perf_counter()
            subprocess.run(cmd, env=env, capture_output=True, check=True)
            times[name].append(time.perf_counter() - start)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=500)
    parser.add_argument("--body-kib", type=int, default=100)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from ore.skills import discover_skills

    home = Path(tempfile.mkdtemp(prefix="ore-skills-bench-"))
    try:
        on_disk = build(home, args.skills, args.body_kib)
        root = home / "skills"
        listed = len(discover_skills([root]).skills)
        assert listed == args.skills, listed
        level1_s, level1_bytes = measure(lambda: discover_skills([root]), args.runs)
        naive_s, naive_bytes = measure(lambda: naive(root), args.runs)
        env = {**os.environ, "ORE_HOME": str(home), "HOME": str(home), "NO_COLOR": "1"}
        procs = wall(
            {
                'python -c "import click"': [PY, "-c", "import click"],
                "ore --list-tools": [ORE, "--list-tools"],
                f"ore --list-skills ({args.skills} + bundled)": [ORE, "--list-skills"],
            },
            env,
            args.runs,
        )
    finally:
        shutil.rmtree(home, ignore_errors=True)

    click_base = procs['python -c "import click"']
    report = {
        "skills": args.skills,
        "skill_file_bytes_on_disk": on_disk,
        "discover_skills": {"seconds": round(level1_s, 4), "bytes_read": level1_bytes},
        "naive_whole_file_yaml": {"seconds": round(naive_s, 4), "bytes_read": naive_bytes},
        "processes": {
            k: {"seconds": round(v, 4), "ratio_to_import_click": round(v / click_base, 2)}
            for k, v in procs.items()
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    mib = 1024 * 1024
    print(
        f"{args.skills} skills, {on_disk / mib:.1f} MiB of SKILL.md on disk; median of {args.runs}"
    )
    print(
        f"  discover_skills (frontmatter only)  {level1_s * 1000:8.1f} ms  "
        f"{level1_bytes / 1024:9.1f} KiB read ({level1_bytes / args.skills:.0f} B per skill)"
    )
    print(
        f"  naive whole file + yaml.safe_load    {naive_s * 1000:8.1f} ms  "
        f"{naive_bytes / 1024:9.1f} KiB read"
    )
    print('whole processes (target for non-model commands: <= 1.6x python -c "import click")')
    for name, row in report["processes"].items():
        print(f"  {name:36} {row['seconds'] * 1000:8.1f} ms  {row['ratio_to_import_click']:.2f}x")


if __name__ == "__main__":
    main()
