"""Benchmark the graph's judgment operations and its ranking, on ORE's own tree and on django.

For each tree: a warm `dependents` (the yardstick: staleness check, cache load, graph, answer),
then each judgment operation warm the same way (`open_graph(root)` + the operation; the file
shapes come from their disk cache, never from this process's memory), medians of N runs,
interleaved; `duplicates`, `conventions` and `signature deep` also "recomputed" (the answers
kept by content, `<index>.memo`, not read, and the new one written beside the others: what the
first query after an edit pays); and `duplicates` cold (shapes cache deleted, answers not read). Then the quality checks:
- ranking: on ORE's tree, test files in `top-files`' top 10; on django, how many of ORE's top 15
  lie within the top 30 of a PageRank over grimp's import graph alone (grimp from the dev extra);
- snippets: functions of django's most central files, renamed (the function, its parameters and
  its local names get new names), given to `duplicates_of`: is the original the first match?

    python bench/graph_judgment_bench.py [--runs 5] [--site DIR] [--pylint DIR] [--json]

With pylint importable (or `--pylint DIR` from `pip install --target DIR pylint`), its `symilar`
runs on django's Python files too: recall of ORE's clone groups against it, and both times.

On django each operation is also timed as what a user runs: a fresh `ore graph ... --json`
process (the `ore` beside this Python, else `python -m ore`), against `ore graph dependents` in
the same run, medians of N, interleaved. In-process figures depend on what the process did before
(a process that has held every file's shapes allocates more slowly afterwards: `signature`
standard is 0.09 s alone and 0.15 s inside the loop, while `dependents` reads only the index's
head either way); the commands do not.

Without --site django is installed with `pip install --target` into a temporary folder.
"""

from __future__ import annotations

import argparse
import gc
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import _timing as timing

ORE_TREE = Path(__file__).resolve().parent.parent


def install(target: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target)]
    subprocess.run([*cmd, "django"], check=True)


def fresh() -> None:
    """Forget what this process remembers of file shapes: each run reads the disk cache."""
    from ore.graph.judgment import shapecache

    shapecache._MEMO.clear()
    gc.collect()


def timed(fn: Any) -> float:
    fresh()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


SNIPPET = '''def build_index(records, key):
    """Index records by a key."""
    out = {}
    for record in records:
        value = getattr(record, key, None)
        if value is None:
            continue
        out.setdefault(value, []).append(record)
    return out
'''


def operations(root: Path, anchor: str, name: str, description: str) -> dict[str, Any]:
    from ore.graph import open_graph
    from ore.graph.judgment import memo

    read, write = memo._read, memo._write

    def op(call: Any) -> Any:
        return lambda: call(open_graph(root))

    def merged(at: Path, entries: dict[bytes, Any]) -> None:
        write(at, {**read(at), **entries})

    def recomputed(call: Any) -> Any:
        """`call` with no kept answer read (each computed, then written beside the others)."""

        def run() -> Any:
            memo._read, memo._write = (lambda _root: {}), merged
            try:
                return call(open_graph(root))
            finally:
                memo._read, memo._write = read, write

        return run

    return {
        "dependents": op(lambda g: g.dependents(anchor)),
        "duplicates": op(lambda g: g.duplicates()),
        "duplicates recomputed": recomputed(lambda g: g.duplicates()),
        "duplicates_of": op(lambda g: g.duplicates_of(SNIPPET)),
        "similar name": op(lambda g: g.similar(name)),
        "similar signature": op(lambda g: g.similar(name, mode="signature")),
        "similar shape": op(lambda g: g.similar(name, mode="shape")),
        "conventions": op(lambda g: g.conventions()),
        "conventions recomputed": recomputed(lambda g: g.conventions()),
        "consistent": op(lambda g: g.consistent(SNIPPET)),
        "place": op(lambda g: g.place(description)),
        "signature standard": op(lambda g: g.signature("standard")),
        "signature deep": op(lambda g: g.signature("deep")),
        "signature deep recomputed": recomputed(lambda g: g.signature("deep")),
        "list_files": op(lambda g: g.list_files()),
        "search_by_file": op(lambda g: g.search_by_file("import")),
    }


def commands(root: Path, anchor: str, name: str, description: str, runs: int) -> dict[str, Any]:
    """Each operation as a fresh `ore graph ... --json` command, against `ore graph dependents`."""
    ore_bin = Path(sys.executable).with_name("ore")
    ore = [str(ore_bin)] if ore_bin.exists() else [sys.executable, "-m", "ore"]
    with tempfile.TemporaryDirectory(prefix="ore-judgment-snippet-") as folder:
        snippet = Path(folder) / "snippet.py"
        snippet.write_text(SNIPPET)
        snip = ["--snippet", str(snippet)]
        cmds = {
            "dependents": ["dependents", anchor],
            "duplicates": ["duplicates"],
            "duplicates --snippet": ["duplicates", *snip],
            "similar name": ["similar", name],
            "similar signature": ["similar", name, "--mode", "signature"],
            "similar shape": ["similar", *snip, "--mode", "shape"],
            "conventions": ["conventions"],
            "consistent": ["consistent", *snip],
            "place": ["place", description],
            "signature": ["signature"],
            "signature deep": ["signature", "--level", "deep"],
            "files": ["files"],
            "search --by-file": ["search", "import", "--by-file"],
        }

        cases = {k: [*ore, "graph", *a, "--root", str(root), "--json"] for k, a in cmds.items()}
        med = timing.measure(cases, timing.clean_env(), runs)
    return {
        "seconds": {k: round(v, 3) for k, v in med.items()},
        "x_dependents": {k: round(v / med["dependents"], 2) for k, v in med.items()},
    }


def measure(root: Path, anchor: str, name: str, description: str, runs: int) -> dict[str, Any]:
    from ore.graph import open_graph
    from ore.graph.index.cache import cache_path

    g = open_graph(root)
    g.duplicates()  # shapes on disk
    ops = operations(root, anchor, name, description)
    times: dict[str, list[float]] = {k: [] for k in ops}
    cold: list[float] = []
    shapes = cache_path(g.root).with_suffix(".shapes")
    for _ in range(runs):
        for key, fn in ops.items():
            times[key].append(timed(fn))
        shapes.unlink(missing_ok=True)
        cold.append(timed(ops["duplicates recomputed"]))
    med = {k: statistics.median(v) for k, v in times.items()}
    base = med["dependents"]
    return {
        "files": len(g.files),
        "seconds": {k: round(v, 4) for k, v in med.items()},
        "x_dependents": {k: round(v / base, 2) for k, v in med.items()},
        "duplicates_cold": round(statistics.median(cold), 4),
        "clone_groups": _count_kinds(g.duplicates()),
    }


def _count_kinds(groups: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for group in groups:
        out[group.kind] = out.get(group.kind, 0) + 1
    return out


def ranking_ore() -> dict[str, Any]:
    from ore.graph import open_graph
    from ore.graph.index.kinds import is_test

    top = [f.path for f in open_graph(ORE_TREE).top_files(10)]
    return {"top10": top, "test_files_in_top10": sum(1 for p in top if is_test(p))}


def ranking_django(site: Path) -> dict[str, Any]:
    import grimp

    from ore.graph import open_graph
    from ore.graph.queries import rank

    sys.path.insert(0, str(site))
    graph = grimp.build_graph("django", cache_dir=None)
    sys.path.remove(str(site))

    def path_of(module: str) -> str:
        rel = module.replace(".", "/")[len("django/") :] if "." in module else ""
        package = site / "django" / rel / "__init__.py"
        return (rel + "/__init__.py").lstrip("/") if package.exists() else rel + ".py"

    out: dict[str, dict[str, float]] = {}
    for module in graph.modules:
        targets = out.setdefault(path_of(module), {})
        for other in graph.find_modules_directly_imported_by(module):
            targets[path_of(other)] = 1.0
            out.setdefault(path_of(other), {})
    scores = rank.pagerank(sorted(out), out)
    reference = sorted(scores, key=lambda p: (-scores[p], p))[:30]
    top = [f.path for f in open_graph(site / "django").top_files(15)]
    return {"top15": top, "within_grimp_top30": sum(1 for p in top if p in reference)}


def renamed_snippets(site: Path, count: int = 20) -> dict[str, Any]:
    """Rename functions of django's central files and ask where they came from."""
    from ore.graph import open_graph

    g = open_graph(site / "django")
    picked: list[tuple[str, Any]] = []
    for f in g.top_files(None):
        for s in g.index.files[f.path].symbols:
            if s.kind == "function" and s.end_line - s.line >= 6 and len(picked) < count:
                picked.append((f.path, s))
    found = 0
    misses = []
    for path, s in picked:
        lines = (g.root / path).read_text().splitlines()[s.line - 1 : s.end_line]
        text = "\n".join(lines)
        names = set(re.findall(r"\b([a-z_][a-z0-9_]*)\s*=(?!=)", text)) | {s.name}
        for n, old in enumerate(sorted(names)):
            text = re.sub(rf"\b{re.escape(old)}\b", f"renamed_{n}", text)
        matches = g.duplicates_of(text, limit=5)
        best = matches[0].score if matches else 0
        if any(m.path == path and m.start <= s.line <= m.end and m.score == best for m in matches):
            found += 1
        else:
            misses.append(f"{path}:{s.line} {s.name}")
    return {"functions": len(picked), "original_first": found, "misses": misses}


def symilar_recall(site: Path, pylint_path: Path | None) -> dict[str, Any]:
    """pylint's `symilar -d 5 -i` on django's Python files against ORE's exact and renamed
    groups of 5 lines or more (no token minimum, as symilar has none): a symilar group is found
    when each consecutive pair of its places overlaps, by half its lines or more, two places of
    one ORE group. Also both wall times (ORE warm)."""
    import os

    from ore.graph import open_graph

    env = dict(os.environ)
    if pylint_path is not None:
        env["PYTHONPATH"] = str(pylint_path)
    files = sorted(str(p.relative_to(site)) for p in (site / "django").rglob("*.py"))
    cmd = [sys.executable, "-m", "pylint.checkers.symilar", "-d", "5", "-i", *files]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=site, env=env, capture_output=True, text=True, check=False)
    symilar_seconds = time.perf_counter() - start
    if "TOTAL lines" not in done.stdout:
        return {"skipped": "pylint's symilar is not installed (pip install --target DIR pylint)"}
    groups = []
    for block in done.stdout.split("\n\n"):
        places = re.findall(r"^==django/(\S+?):\[(\d+):(\d+)\]", block, re.M)
        if len(places) >= 2:
            groups.append([(p, int(a) + 1, int(b)) for p, a, b in places])
    g = open_graph(site / "django")
    fresh()
    start = time.perf_counter()
    ore = g.duplicates(min_lines=5, min_tokens=1, kinds=["exact", "renamed"])
    ore_seconds = time.perf_counter() - start
    where: dict[str, list[tuple[int, int, int]]] = {}
    for n, group in enumerate(ore):
        for o in group.occurrences:
            where.setdefault(o.path, []).append((o.start, o.end, n))

    def covers(a: tuple[int, int], b: tuple[int, int]) -> bool:
        return min(a[1], b[1]) - max(a[0], b[0]) + 1 >= 0.5 * (b[1] - b[0] + 1)

    def found(group: list[tuple[str, int, int]]) -> bool:
        for (p1, s1, e1), (p2, s2, e2) in pairwise(group):
            if not any(
                covers((s, e), (s1, e1))
                and any(
                    o.path == p2 and covers((o.start, o.end), (s2, e2)) for o in ore[n].occurrences
                )
                for s, e, n in where.get(p1, [])
            ):
                return False
        return True

    misses = [g_ for g_ in groups if not found(g_)]
    return {
        "symilar_groups": len(groups),
        "found": len(groups) - len(misses),
        "recall": round(1 - len(misses) / max(1, len(groups)), 4),
        "misses": misses,
        "symilar_seconds": round(symilar_seconds, 3),
        "ore_warm_seconds": round(ore_seconds, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", type=Path, help="a folder holding django (else pip installs it)")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--pylint", type=Path, help="a folder holding pylint (pip --target)")
    args = parser.parse_args()
    temp = None
    site = args.site
    if site is None:
        temp = Path(tempfile.mkdtemp(prefix="ore-judgment-bench-"))
        site = temp / "site"
        install(site)
    try:
        report = {
            "ore": measure(
                ORE_TREE, "ore/graph/graph.py", "open_graph", "rank files by pagerank", args.runs
            ),
            "django": measure(
                site / "django",
                "db/models/base.py",
                "get_valid_filename",
                "validate email addresses in forms",
                args.runs,
            ),
            "django_commands": commands(
                site / "django",
                "db/models/base.py",
                "get_valid_filename",
                "validate email addresses in forms",
                args.runs,
            ),
            "ranking_ore": ranking_ore(),
            "ranking_django": ranking_django(site),
            "renamed_snippets_django": renamed_snippets(site),
            "symilar_django": symilar_recall(site, args.pylint),
        }
    finally:
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=1))
        return
    for tree in ("ore", "django"):
        r = report[tree]
        print(
            f"{tree}: {r['files']} files; duplicates cold {r['duplicates_cold']:.3f} s; "
            f"clone groups {r['clone_groups']}"
        )
        for key, seconds in r["seconds"].items():
            print(f"  {key:<26} {seconds:.3f} s  {r['x_dependents'][key]:.2f}x dependents")
    r = report["django_commands"]
    print("django, as `ore graph` commands:")
    for key, seconds in r["seconds"].items():
        print(f"  {key:<26} {seconds:.3f} s  {r['x_dependents'][key]:.2f}x dependents")
    print("ranking (ORE tree):", report["ranking_ore"])
    print("ranking (django):", report["ranking_django"])
    print("renamed snippets (django):", report["renamed_snippets_django"])
    print("against symilar (django):", report["symilar_django"])


if __name__ == "__main__":
    main()
