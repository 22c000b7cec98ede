"""Judgment on projects nobody tuned for (issue 25): duplicate recall against pylint's
`symilar -d 5`, per token minimum, with both times; and the answers of every judgment query
written out for a by-hand verdict (`bench/judgment_samples/`).

    python bench/judgment_precision_bench.py recall DIR... [--pylint DIR] [--runs 3] [--json]
        [--ignore-imports] [--min-tokens 15]
    python bench/judgment_precision_bench.py answers DIR... > answers.jsonl
    python bench/judgment_precision_bench.py clones DIR [--seed 25] > clones.jsonl

DIR is a package folder (`httpx-0.28.1/httpx` from `pip download httpx --no-deps --no-binary
:all:`). `recall`: symilar runs on the folder's Python files (with `--pylint DIR` from `pip
install --target DIR pylint` on its path); a symilar group is found when each consecutive pair
of its places overlaps, by half its lines or more, two places of one ORE group of the same
lines minimum. ORE is timed cold (index built, then the shapes and answers kept beside it
deleted before each run) and warm, medians of `--runs`; the machine may be shared, so the
figures are noisy. `answers`: the first ten answers of each query, one JSON line each, for
the verdicts committed beside them. `clones`: twenty default `duplicates` answers, the first ten
and ten drawn from the rest (`random.Random(seed)`, 25 unless `--seed`), for the verdicts in
`judgment_samples/sqlalchemy_duplicates.jsonl` and `werkzeug_duplicates.jsonl` (seeds 25,
2026, 8117, 7301 and 7302, the first ten judged again when the rules changed them; each row with
its verdict, whether it is worth acting on, and why). `--ignore-imports`: symilar without import lines, as pylint's duplicate-code check runs
by default (symilar alone counts them; ORE does not report an import list).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

MINIMA = (50, 40, 30, 25, 20, 15, 10, 1)


def symilar(
    folder: Path, pylint: Path | None, ignore_imports: bool = False
) -> tuple[list[list[tuple[str, int, int]]], float]:
    """symilar's groups and time; `ignore_imports` as pylint's own duplicate-code check has it
    by default (symilar alone counts imports), on the files this Python parses (symilar then
    parses each file and stops at the first that does not: sqlalchemy's two 3.14 t-string
    tests)."""
    env = dict(os.environ)
    if pylint is not None:
        env["PYTHONPATH"] = str(pylint)
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.py"))
    if ignore_imports:
        files = [f for f in files if _parses(folder / f)]
    cmd = [
        sys.executable,
        "-P",
        "-m",
        "pylint.checkers.symilar",
        "-d",
        "5",
        *(["--ignore-imports"] if ignore_imports else []),
        *files,
    ]  # -P: no shadowing
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if "TOTAL lines" not in done.stdout:
        raise SystemExit("pylint's symilar did not run: pip install --target DIR pylint")
    groups = []
    for block in done.stdout.split("\n\n"):
        places = re.findall(r"^==(\S+?):\[(\d+):(\d+)\]", block, re.M)
        if len(places) >= 2:
            groups.append([(p, int(a) + 1, int(b)) for p, a, b in places])
    return groups, seconds


def _parses(path: Path) -> bool:
    import ast

    try:
        ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):
        return False
    return True


def _covers(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return min(a[1], b[1]) - max(a[0], b[0]) + 1 >= 0.5 * (b[1] - b[0] + 1)


def found_share(groups: list[list[tuple[str, int, int]]], ore: list[Any]) -> tuple[int, list[Any]]:
    where: dict[str, list[tuple[int, int, int]]] = {}
    for n, group in enumerate(ore):
        for o in group.occurrences:
            where.setdefault(o.path, []).append((o.start, o.end, n))

    def found(group: list[tuple[str, int, int]]) -> bool:
        for (p1, s1, e1), (p2, s2, e2) in pairwise(group):
            if not any(
                _covers((s, e), (s1, e1))
                and any(
                    o.path == p2 and _covers((o.start, o.end), (s2, e2)) for o in ore[n].occurrences
                )
                for s, e, n in where.get(p1, [])
            ):
                return False
        return True

    misses = [g for g in groups if not found(g)]
    return len(groups) - len(misses), misses


def _forget(folder: Path) -> None:
    """Drop what judgment keeps beside the index (shapes, answers), in memory and on disk."""
    from ore.graph.index.cache import cache_path
    from ore.graph.judgment import memo, shapecache

    shapecache._MEMO.clear()
    if hasattr(memo, "_MEMO"):
        memo._MEMO.clear()
    base = cache_path(folder)
    for suffix in (".shapes", ".memo"):
        base.with_suffix(suffix).unlink(missing_ok=True)


def recall(
    folder: Path,
    pylint: Path | None,
    runs: int,
    ignore_imports: bool = False,
    minima: tuple[int, ...] = MINIMA,
) -> dict[str, Any]:
    from ore.graph import open_graph

    groups, symilar_seconds = symilar(folder, pylint, ignore_imports)
    times = [symilar_seconds]
    for _ in range(runs - 1):
        times.append(symilar(folder, pylint, ignore_imports)[1])
    open_graph(folder)  # the index itself is not what is measured
    rows = []
    for minimum in minima:
        cold, warm = [], []
        for _ in range(runs):
            _forget(folder)
            start = time.perf_counter()
            ore = open_graph(folder).duplicates(min_lines=5, min_tokens=minimum)
            cold.append(time.perf_counter() - start)
            start = time.perf_counter()
            open_graph(folder).duplicates(min_lines=5, min_tokens=minimum)
            warm.append(time.perf_counter() - start)
        hit, misses = found_share(groups, ore)
        rows.append(
            {
                "min_tokens": minimum,
                "groups": len(ore),
                "found": hit,
                "recall": round(hit / max(1, len(groups)), 4),
                "cold_seconds": round(statistics.median(cold), 3),
                "warm_seconds": round(statistics.median(warm), 3),
                "misses": [[f"{p}:{a}-{b}" for p, a, b in m] for m in misses],
            }
        )
    return {
        "folder": str(folder),
        "files": len(list(folder.rglob("*.py"))),
        "symilar_groups": len(groups),
        "symilar_ignore_imports": ignore_imports,
        "symilar_seconds": round(statistics.median(times), 3),
        "ore": rows,
    }


PLACES = {
    "httpx": ("retry a request when the transport fails", "decode a compressed response body"),
    "click": ("a parameter type for file paths", "shell completion for options"),
    "rich": ("draw a progress bar", "highlight source code syntax"),
}
SLOPPY = """import os, sys
import logging

log = logging.getLogger("project.sloppy")


def load_plugins(folder: str) -> list:
    \"\"\"The plugins of a folder.\"\"\"
    if not os.path.isdir(folder):
        raise Exception("no folder")
    print("loading", folder)
    return sys.path
"""


def _near_copy(text: str, name: str) -> str:
    """What an agent writes when it re-creates a function: another name, no docstring, local
    names and parameters renamed (`x` -> `x_1`), annotations dropped."""
    import textwrap

    body = textwrap.dedent(text)
    body = re.sub(
        r'(?s)^(\s*def [^\n]*:\n)(\s*)(?:"""|\'\'\').*?(?:"""|\'\'\')\n', r"\1", body, count=1
    )
    names = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*(?==[^=]|:|,|\))", body.split("\n", 1)[0]))
    names |= set(re.findall(r"^\s*([a-z_][a-z0-9_]*)\s*=[^=]", body, re.M))
    for local in sorted(names - {"self", "cls"}):
        body = re.sub(rf"\b{local}\b", f"{local}_1", body)
    body = re.sub(r"\)\s*->\s*[^:]+:", "):", body, count=1)
    return re.sub(rf"\bdef {name}\b", f"def {name}_again", body, count=1)


def answers(folder: Path) -> list[dict[str, Any]]:
    """The first ten answers of each query on one project (what the samples judge)."""
    from ore.errors import GraphError
    from ore.graph import open_graph

    g = open_graph(folder)
    out: list[dict[str, Any]] = []

    def add(query: str, rows: list[Any]) -> None:
        if not rows:
            out.append({"project": folder.name, "query": query, "rank": 0, "answer": "(none)"})
        for n, row in enumerate(rows[:10], 1):
            out.append({"project": folder.name, "query": query, "rank": n, "answer": row})

    ranked = [f.path for f in g.top_files(40)]
    public = [
        (path, s)
        for path in ranked
        for s in g.index.files[path].symbols
        if s.kind == "function" and not s.name.startswith("_") and s.end_line - s.line >= 6
    ]
    if public:
        path, anchor = public[0]
        add(f"similar {anchor.name}", [r.to_dict() for r in g.similar(anchor.name)])
        add(
            f"similar {anchor.name} --mode signature",
            [r.to_dict() for r in g.similar(anchor.name, mode="signature")],
        )
        text = "\n".join(
            (g.root / path).read_text().splitlines()[anchor.line - 1 : anchor.end_line]
        )
        copy = _near_copy(text, anchor.name)
        try:
            g.similar(snippet=copy, mode="shape")
        except GraphError:  # the renaming broke the code: rename the function only
            copy = re.sub(rf"\bdef {anchor.name}\b", f"def {anchor.name}_again", text)
            copy = __import__("textwrap").dedent(copy)
        add(
            f"similar --snippet <renamed copy of {path}:{anchor.line}> --mode shape",
            [r.to_dict() for r in g.similar(snippet=copy, mode="shape")],
        )
    for c in g.conventions():
        add(f"conventions {c.topic}", [p.to_dict() for p in c.patterns])
    for description in PLACES.get(folder.name, ()):
        add(f"place {description!r}", [f.to_dict() for f in g.place(description).files])
    checked = g.consistent(SLOPPY)
    add("consistent <sloppy snippet>", [d for c in checked.criteria for d in c.deviations])
    own = sorted(g.files, key=lambda p: -g.pagerank[p])[:3]
    for path in own:
        found = g.consistent((g.root / path).read_text())
        add(f"consistent <{path} itself>", [d for c in found.criteria for d in c.deviations])
    sig = g.signature("standard")
    add("signature standard", [line for line in sig.text.splitlines() if ": " in line])
    add("duplicates", [c.to_dict() for c in g.duplicates()])
    return out


def clone_sample(folder: Path, seed: int = 25) -> list[dict[str, Any]]:
    """The first ten default `duplicates` answers and ten drawn from the rest (`seed`)."""
    import random

    from ore.graph import open_graph

    groups = open_graph(folder).duplicates()
    picked = list(range(min(10, len(groups))))
    rest = list(range(10, len(groups)))
    picked += sorted(random.Random(seed).sample(rest, min(10, len(rest))))
    rows = []
    for n in picked:
        c = groups[n]
        places = [f"{o.path}:{o.start}-{o.end}" for o in c.occurrences]
        rows.append(
            {
                "project": folder.name,
                "query": "duplicates",
                "rank": n + 1,
                "file": "; ".join(places[:4]) + (" ..." if len(places) > 4 else ""),
                "answer": {
                    "kind": c.kind,
                    "lines": c.lines,
                    "tokens": c.tokens,
                    "occurrences": [
                        {"path": o.path, "start": o.start, "end": o.end} for o in c.occurrences
                    ],
                },
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("recall", "answers", "clones"))
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--pylint", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--ignore-imports",
        action="store_true",
        help="recall: symilar without import lines (pylint's duplicate-code default)",
    )
    parser.add_argument("--seed", type=int, default=25, help="clones: the draw's seed")
    parser.add_argument(
        "--min-tokens",
        type=int,
        action="append",
        help="recall: only this token minimum (repeat; 15 is the default's): a rule's effect "
        "on recall in minutes, not every minimum",
    )
    args = parser.parse_args()
    os.environ.setdefault("ORE_HOME", tempfile.mkdtemp(prefix="ore-precision-"))
    if args.what in ("answers", "clones"):
        for folder in args.folders:
            rows = answers(folder.resolve()) if args.what == "answers" else []
            if args.what == "clones":
                rows = clone_sample(folder.resolve(), args.seed)
            for row in rows:
                print(json.dumps(row))
        return
    reports = [
        recall(
            folder.resolve(),
            args.pylint,
            args.runs,
            args.ignore_imports,
            tuple(args.min_tokens) if args.min_tokens else MINIMA,
        )
        for folder in args.folders
    ]
    if args.json:
        json.dump(reports, sys.stdout, indent=1)
        print()
        return
    for r in reports:
        print(
            f"{r['folder']}: {r['files']} files; symilar -d 5"
            f"{' --ignore-imports' if r['symilar_ignore_imports'] else ''}: {r['symilar_groups']} groups "
            f"in {r['symilar_seconds']} s"
        )
        for row in r["ore"]:
            print(
                f"  --min-tokens {row['min_tokens']:>2}: {row['groups']:>4} groups, "
                f"recall {row['recall']:.1%}, cold {row['cold_seconds']} s, "
                f"warm {row['warm_seconds']} s"
            )


if __name__ == "__main__":
    main()
