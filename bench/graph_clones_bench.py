"""Benchmark `duplicates` against jscpd and pylint's `symilar` on django and sympy.

    python bench/graph_clones_bench.py [--site DIR] [--sympy-site DIR] [--jscpd PATH ...]
                                       [--pylint DIR] [--runs 3] [--min-lines 5]
                                       [--min-tokens 50] [--sample 20] [--seed 14]
                                       [--only django|sympy] [--misses] [--json]

For each package, the tools see the same files: every Python file ORE indexes, given by name.
- jscpd (`--jscpd`, repeatable: a jscpd binary; default `jscpd` on PATH): `--min-lines N
  --min-tokens T --format python --reporters json --silent`, its report written to a temporary
  folder. Each clone is a pair of places.
- symilar (`python -m pylint.checkers.symilar -d N -i`, pylint importable or `--pylint DIR`):
  each group is two or more places; it has no token minimum.
A tool that is missing is skipped with a message.

Recall: a reported group is *found* when one ORE group has, for each of its places, a distinct
occurrence in the same file whose line range overlaps the place by at least half of the shorter
of the two ranges. ORE (exact and renamed groups) runs with the same minimum lines, and against
jscpd with the same minimum tokens (and again with none), against symilar with none
(`min_tokens=1`). The counts differ by definition: ORE's exact clones count lines from the
first token to the last (a clone may start and end inside a line) and tokens without comments (a
docstring's words and marks are tokens), symilar counts every non-blank line but comments, jscpd
counts lines as ORE does, and its own tokens, comments included. Every miss gets a category
(`CATEGORIES`, decided by `Why`) and is printed (3 a category, all with `--misses`) to be looked
at in the source.

Beyond recall: ORE's renamed and structural groups that no tool reports (no place of theirs
overlaps any tool's clone by the rule above), and on django a seeded random sample of ORE's groups
(`--sample`, `--seed`; spread evenly over the kinds) to judge by hand.

Timing, interleaved, medians of `--runs`, with `os.getloadavg()` at each run: each tool's wall
time; ORE warm (index and shape caches on disk, the kept answer read: `<index>.memo`) as a fresh
`ore graph duplicates --json` process and in-process (`open_graph` + `duplicates`, this process's
shape memory cleared); and recomputed (the kept answers deleted first: what the first query after
an edit pays), both ways.

Without --site/--sympy-site, django and sympy are installed with `pip install --no-deps --target`
into a temporary folder.

    python bench/graph_clones_bench.py --cold DIR [--cold DIR ...] [--runs 3] [--pylint DIR]
                                       [--baseline SRC] [--json]

`--cold` measures issue 25's line instead: cold `ore graph duplicates --json --root DIR` (a
fresh ORE_HOME each run: no index, no shapes, no kept answer; the whole command as a process)
against `symilar -d 5` on the same files (every Python file ORE indexes under DIR, by name, as
above, without `-i`), interleaved, each run's wall time and CPU time (user + sys of the process
and its children, from `wait4`: less swayed by other work on the machine than wall time) with
the 1-minute load average; medians of `--runs`. `--baseline SRC` adds an older ORE (a source
tree, e.g. `git archive` of a commit, run with the editable install set aside) to each round.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tokenize
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

Place = tuple[str, int, int]  # path (relative to the package), first line, last line
PACKAGES = {"django": "django==5.2.19", "sympy": "sympy==1.14.0"}
ORE_BIN = Path(sys.executable).with_name("ore")


def install(target: Path, spec: str) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target)]
    subprocess.run([*cmd, spec], check=True)


def jscpd_version(binary: str) -> str | None:
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    except OSError:
        return None
    found = re.search(r"\d+\.\d+\.\d+", done.stdout)
    return f"jscpd {found.group()}" if done.returncode == 0 and found else None


def run_jscpd(
    binary: str, root: Path, files: list[str], a: argparse.Namespace
) -> list[list[Place]]:
    with tempfile.TemporaryDirectory(prefix="ore-jscpd-") as out:
        cmd = [
            binary,
            "--min-lines",
            str(a.min_lines),
            "--min-tokens",
            str(a.min_tokens),
            "--format",
            "python",
            "--reporters",
            "json",
            "--output",
            out,
            "--silent",
            *files,
        ]
        subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=True)
        report = json.loads((Path(out) / "jscpd-report.json").read_text())
    groups = []
    for clone in report["duplicates"]:
        one, two = clone["firstFile"], clone["secondFile"]
        groups.append([_place(root, one), _place(root, two)])
    return groups


def _place(root: Path, side: dict[str, Any]) -> Place:
    name = side["name"]
    path = Path(name)
    rel = str(path.relative_to(root)) if path.is_absolute() else name.removeprefix("./")
    start, end = int(side["start"]), int(side["end"])
    return rel, min(start, end), max(start, end)  # jscpd 4 can give them reversed


def symilar_env(pylint: Path | None) -> dict[str, str] | None:
    env = dict(os.environ)
    if pylint is not None:
        env["PYTHONPATH"] = str(pylint)
    probe = [sys.executable, "-c", "import pylint.checkers.symilar"]
    return env if subprocess.run(probe, env=env, capture_output=True).returncode == 0 else None


def run_symilar(
    root: Path, files: list[str], env: dict[str, str], a: argparse.Namespace
) -> list[list[Place]]:
    cmd = [sys.executable, "-m", "pylint.checkers.symilar", "-d", str(a.min_lines), "-i", *files]
    done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
    groups = []
    for block in done.stdout.split("\n\n"):
        places = re.findall(r"^==(\S+?):\[(\d+):(\d+)\]", block, re.M)
        if len(places) >= 2:  # [a:b] is 0-based, end exclusive
            groups.append([(p, int(s) + 1, int(e)) for p, s, e in places])
    return groups


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Two line ranges share at least half of the shorter one."""
    shared = min(a[1], b[1]) - max(a[0], b[0]) + 1
    return shared >= 0.5 * min(a[1] - a[0] + 1, b[1] - b[0] + 1)


class Index:
    """ORE's groups by file, to find the group (if any) that holds a reported clone."""

    def __init__(self, groups: list[Any]) -> None:
        self.groups = groups
        self.where: dict[str, list[tuple[int, int, int, int]]] = {}
        for n, group in enumerate(groups):
            for k, o in enumerate(group.occurrences):
                self.where.setdefault(o.path, []).append((o.start, o.end, n, k))

    def holder(self, places: list[Place], skip: Sequence[int] = ()) -> int | None:
        """The first ORE group (not in `skip`) with a distinct occurrence overlapping each
        place."""
        options: dict[int, list[list[int]]] = {}
        for i, (path, start, end) in enumerate(places):
            for s, e, n, k in self.where.get(path, []):
                if overlaps((s, e), (start, end)):
                    options.setdefault(n, [[] for _ in places])[i].append(k)
        for n in sorted(options):
            if n not in skip and _distinct(options[n]):
                return n
        return None

    def holders(self, places: list[Place]) -> list[Any]:
        """Every ORE group that holds `places` (as `holder`)."""
        out = []
        while (n := self.holder(places, out)) is not None:
            out.append(n)
        return [self.groups[n] for n in out]


def _distinct(choices: list[list[int]]) -> bool:
    """Whether each slot can take a different value from its list (a bipartite matching)."""
    taken: dict[int, int] = {}

    def place(slot: int, seen: set[int]) -> bool:
        for k in choices[slot]:
            if k not in seen:
                seen.add(k)
                if k not in taken or place(taken[k], seen):
                    taken[k] = slot
                    return True
        return False

    return all(choices[slot] and place(slot, set()) for slot in range(len(choices)))


def recall(
    reported: list[list[Place]], ore: list[Any], why: Why, min_tokens: int
) -> dict[str, Any]:
    """How many reported groups one ORE group holds; each miss with its category."""
    index = Index(ore)
    misses = []
    for places in reported:
        if index.holder(places) is None:
            misses.append({"places": places, "category": why.category(places, min_tokens)})
    return {
        "groups": len(reported),
        "found": len(reported) - len(misses),
        "recall": round(1 - len(misses) / max(1, len(reported)), 4),
        "miss_categories": dict(Counter(m["category"] for m in misses).most_common()),
        "misses": misses,
    }


CATEGORIES = {
    "comment tokens": (
        "ORE holds it with no token minimum; the places hold comments, which "
        "jscpd counts as tokens and ORE drops"
    ),
    "token count": (
        "ORE holds it with no token minimum; the tool's lexer makes more tokens of "
        "the same text (jscpd 5: `**` or a string's quotes as tokens of their own)"
    ),
    "boilerplate": (
        "ORE holds it only when windows seen more than 64 times are kept: ORE "
        "drops those as boilerplate (`runs.BUCKET_CAP`)"
    ),
    "short run": (
        "ORE holds the places with a clone below the minimum lines: the tool's clone "
        "runs on across lines ORE does not match (a comment line at its end, which jscpd counts, or "
        "the same tokens broken into lines differently for a line or two)"
    ),
    "line breaks": (
        "no common run of even two whole lines: the same tokens broken into lines "
        "differently (or, for jscpd 4, a second place that is not where the clone is)"
    ),
    "unexplained": "ORE has a clone of these places meeting both minimums that it did not report",
}


class Why:
    """Why ORE has no group holding a reported clone (a key of `CATEGORIES`)."""

    def __init__(
        self,
        root: Path,
        shapes: dict[str, Any],
        tokenless: Index,
        loose: Index,
        uncapped: dict[int, Index],
        min_lines: int,
    ) -> None:
        self.root, self.shapes, self.tokenless, self.loose = root, shapes, tokenless, loose
        self.uncapped, self.min_lines = uncapped, min_lines
        self.comments: dict[str, set[int]] = {}

    def category(self, places: list[Place], min_tokens: int) -> str:
        if min_tokens > 1 and self.tokenless.holder(places) is not None:
            commented = any(self.comment_lines(p) & set(range(s, e + 1)) for p, s, e in places)
            return "comment tokens" if commented else "token count"
        if self.uncapped[min_tokens].holder(places) is not None:
            return "boilerplate"
        held = self.loose.holders(places)
        if not held:
            return "line breaks"
        for group in held:  # exact clones count lines first to last, renamed ones code lines
            lines = min(
                o.end - o.start + 1
                if group.kind == "exact"
                else len(range(*self.shapes[o.path].span(o.start, o.end)))
                for o in group.occurrences
            )
            if lines >= self.min_lines and group.tokens >= min_tokens:
                return "unexplained"
        return "short run"

    def comment_lines(self, path: str) -> set[int]:
        """The lines of a file that hold a comment."""
        if path not in self.comments:
            found: set[int] = set()
            source = (self.root / path).read_text(encoding="utf-8", errors="replace")
            try:
                for tok in tokenize.generate_tokens(io.StringIO(source).readline):
                    if tok.type == tokenize.COMMENT:
                        found.add(tok.start[0])
            except (tokenize.TokenError, SyntaxError):
                pass
            self.comments[path] = found
        return self.comments[path]


def fresh() -> None:
    """Forget what this process remembers of file shapes: each run reads the disk cache."""
    from ore.graph.judgment import shapecache

    shapecache._MEMO.clear()
    gc.collect()


def kept_answers(root: Path) -> Path:
    from ore.graph.index.cache import cache_path

    return cache_path(root.resolve()).with_suffix(".memo")


def ore_runs(root: Path) -> dict[str, Any]:
    """The four ORE timings, each a callable returning seconds."""
    from ore.graph import open_graph

    ore = [str(ORE_BIN)] if ORE_BIN.exists() else [sys.executable, "-m", "ore"]
    cmd = [*ore, "graph", "duplicates", "--json", "--root", str(root)]

    def process() -> float:
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        return time.perf_counter() - start

    def in_process() -> float:
        fresh()
        start = time.perf_counter()
        open_graph(root).duplicates()
        return time.perf_counter() - start

    def recomputed(how: Any) -> Any:
        def run() -> float:
            kept_answers(root).unlink(missing_ok=True)
            return float(how())

        return run

    return {
        "ore warm (process)": process,
        "ore warm (in-process)": in_process,
        "ore recomputed (process)": recomputed(process),
        "ore recomputed (in-process)": recomputed(in_process),
    }


def unseen(ore: list[Any], reported: dict[str, list[list[Place]]]) -> dict[str, int]:
    """ORE's renamed and structural groups (Python only) that no tool's clone overlaps."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for groups in reported.values():
        for places in groups:
            for path, start, end in places:
                by_file.setdefault(path, []).append((start, end))
    out: Counter[str] = Counter()
    for group in ore:
        if group.kind == "exact" or not all(o.path.endswith(".py") for o in group.occurrences):
            continue
        hit = any(
            overlaps(r, (o.start, o.end))
            for o in group.occurrences
            for r in by_file.get(o.path, [])
        )
        out[f"{group.kind} {'also reported' if hit else 'unseen'}"] += 1
    return dict(sorted(out.items()))


def package(root: Path, tools: dict[str, Any], a: argparse.Namespace) -> dict[str, Any]:
    from ore.graph import open_graph
    from ore.graph.judgment.shapecache import load_shapes

    g = open_graph(root)
    files = sorted(p for p, r in g.index.files.items() if r.language == "python")
    g.duplicates()  # index, shapes and the kept answer on disk: warm from here on
    shapes = load_shapes(g, sorted(g.index.files))
    runners = {name: (lambda fn=fn: fn(root, files)) for name, fn in tools.items()}
    reported: dict[str, list[list[Place]]] = {}
    samples: dict[str, list[float]] = {k: [] for k in [*runners, *ore_runs(root)]}
    loads = []
    for run in range(a.runs):
        loads.append(round(os.getloadavg()[0], 2))
        for name, fn in runners.items():
            start = time.perf_counter()
            groups = fn()
            samples[name].append(time.perf_counter() - start)
            if run == 0:
                reported[name] = groups
        for name, fn in ore_runs(root).items():
            samples[name].append(fn())
    kinds = ["exact", "renamed"]
    ore = {
        t: g.duplicates(min_lines=a.min_lines, min_tokens=t, kinds=kinds) for t in (1, a.min_tokens)
    }
    loose = Index(g.duplicates(min_lines=2, min_tokens=1, kinds=kinds))
    with uncapped():
        wide = {
            t: Index(g.duplicates(min_lines=a.min_lines, min_tokens=t, kinds=kinds))
            for t in (1, a.min_tokens)
        }
    why = Why(root, shapes, Index(ore[1]), loose, wide, a.min_lines)
    recalls = {}
    for name, groups in reported.items():
        for t in (a.min_tokens, 1) if name != "symilar" else (1,):
            label = name if t > 1 or name == "symilar" else f"{name} (ORE with no token minimum)"
            recalls[label] = recall(groups, ore[t], why, t)
    everything = g.duplicates(min_lines=a.min_lines, min_tokens=a.min_tokens)
    return {
        "files": len(files),
        "load_1min": loads,
        "seconds": {k: round(statistics.median(v), 3) for k, v in samples.items()},
        "ore_groups": dict(Counter(c.kind for c in everything)),
        "recall": recalls,
        "renamed_structural_vs_tools": unseen(everything, reported),
        "sample": sample(everything, a.seed, a.sample) if root.name == "django" else [],
    }


@contextlib.contextmanager
def uncapped() -> Iterator[None]:
    """ORE with no boilerplate cap on windows, its kept answers neither read nor written."""
    from ore.graph.judgment import memo, runs

    saved = runs.BUCKET_CAP, memo._read, memo._write
    runs.BUCKET_CAP, memo._read, memo._write = 1 << 30, (lambda _root: {}), (lambda *_: None)
    try:
        yield
    finally:
        runs.BUCKET_CAP, memo._read, memo._write = saved


def sample(groups: list[Any], seed: int, size: int) -> list[dict[str, Any]]:
    """A seeded random sample of Python groups, spread evenly over the kinds, to judge by hand."""
    rng = random.Random(seed)
    by_kind: dict[str, list[Any]] = {}
    for group in groups:
        if all(o.path.endswith(".py") for o in group.occurrences):
            by_kind.setdefault(group.kind, []).append(group)
    picked: list[Any] = []
    kinds = sorted(by_kind)
    for n, kind in enumerate(kinds):
        share = (size - len(picked)) // (len(kinds) - n)
        picked += rng.sample(by_kind[kind], min(share, len(by_kind[kind])))
    return [group.to_dict() for group in picked]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path, help="a folder holding django")
    parser.add_argument("--sympy-site", type=Path, help="a folder holding sympy")
    parser.add_argument("--jscpd", action="append", help="a jscpd binary (repeatable)")
    parser.add_argument("--pylint", type=Path, help="a folder holding pylint (pip --target)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--min-lines", type=int, default=5)
    parser.add_argument("--min-tokens", type=int, default=50)
    parser.add_argument("--sample", type=int, default=20, help="groups of django to judge")
    parser.add_argument("--seed", type=int, default=14)
    parser.add_argument("--misses", action="store_true", help="print every miss, not 3 a kind")
    parser.add_argument("--only", choices=sorted(PACKAGES), help="one package only")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    parser.add_argument("--cold", type=Path, action="append", help="cold against symilar (repeat)")
    parser.add_argument("--baseline", type=Path, help="with --cold: an older ORE source tree")
    a = parser.parse_args()
    if a.cold:
        cold_report = {str(root): cold(root.resolve(), a) for root in a.cold}
        if a.json:
            print(json.dumps(cold_report, indent=1))
        else:
            show_cold(cold_report)
        return
    tools: dict[str, Any] = {}
    for binary in a.jscpd or [shutil.which("jscpd") or "jscpd"]:
        label = jscpd_version(binary)
        if label is None:
            print(f"skipped: jscpd not found at {binary} (npm install jscpd)", file=sys.stderr)
        else:
            tools[label] = lambda root, files, b=binary: run_jscpd(b, root, files, a)
    env = symilar_env(a.pylint)
    if env is None:
        print("skipped: pylint's symilar is not importable (pip install pylint)", file=sys.stderr)
    else:
        tools["symilar"] = lambda root, files: run_symilar(root, files, env, a)
    temp = Path(tempfile.mkdtemp(prefix="ore-clones-bench-"))
    sites = {"django": a.site, "sympy": a.sympy_site}
    report: dict[str, Any] = {}
    try:
        for name, spec in PACKAGES.items():
            if a.only and name != a.only:
                continue
            site = sites[name]
            if site is None:
                site = temp / name
                install(site, spec)
            report[name] = package(site / name, tools, a)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    if a.json:
        print(json.dumps(report, indent=1))
        return
    show(report, a.misses)


def timed(cmd: list[str], **how: Any) -> tuple[float, float]:
    """Wall and CPU seconds (user + sys of the process and every child it waited for) of one
    command, its output discarded; a failure stops the bench."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **how)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise SystemExit(f"{cmd[:4]} failed ({proc.returncode}): {err.decode()[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def cold(root: Path, a: argparse.Namespace) -> dict[str, Any]:
    """Interleaved rounds of symilar, ORE cold (and the baseline's) on `root`."""
    from ore.graph import open_graph

    env = symilar_env(a.pylint)
    if env is None:
        raise SystemExit("pylint's symilar is not importable (pip install pylint, or --pylint)")
    with tempfile.TemporaryDirectory(prefix="ore-cold-") as scratch:
        os.environ["ORE_HOME"] = str(Path(scratch) / "list")  # only to list the files
        index = open_graph(root).index
        files = sorted(p for p, r in index.files.items() if r.language == "python")
        ore = [str(ORE_BIN)] if ORE_BIN.exists() else [sys.executable, "-m", "ore"]
        args = ["graph", "duplicates", "--json", "--root", str(root)]
        runs: dict[str, list[Any]] = {"symilar": [], "ore": []}
        commands = {
            "symilar": ([sys.executable, "-m", "pylint.checkers.symilar", "-d", "5", *files], env),
            "ore": ([*ore, *args], dict(os.environ)),
        }
        if a.baseline is not None:
            runs["ore baseline"] = []
            unset = "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]"
            start = f"import sys; {unset}; sys.path.insert(0, sys.argv.pop(1)); "
            # the executable's own entry where the baseline has one (`program`: it exits
            # without the interpreter's teardown, as the `ore` measured beside it does)
            start += "sys.argv[0] = 'ore'; import ore.cli as c; getattr(c, 'program', c.main)()"
            base = [sys.executable, "-c", start, str(a.baseline.resolve()), *args]
            commands["ore baseline"] = (base, dict(os.environ))
        for n in range(a.runs):
            for name, (cmd, tool_env) in commands.items():
                home = Path(scratch) / f"home-{name.replace(' ', '-')}-{n}"
                tool_env = {**tool_env, "ORE_HOME": str(home)}
                wall, cpu = timed(cmd, cwd=root, env=tool_env)
                runs[name].append(
                    {"wall": round(wall, 2), "cpu": round(cpu, 2), "load": os.getloadavg()[0]}
                )
                shutil.rmtree(home, ignore_errors=True)
    medians = {
        name: {k: round(statistics.median(r[k] for r in rows), 2) for k in ("wall", "cpu")}
        for name, rows in runs.items()
    }
    return {"files": len(files), "runs": runs, "medians": medians}


def show_cold(report: dict[str, Any]) -> None:
    for root, r in report.items():
        print(f"{root}: {r['files']} Python files; cold, fresh process each, interleaved")
        for name, rows in r["runs"].items():
            each = ", ".join(f"{x['wall']}/{x['cpu']} (load {x['load']:.1f})" for x in rows)
            m = r["medians"][name]
            print(f"  {name:<13} wall/CPU s: median {m['wall']}/{m['cpu']}; runs {each}")
        ore, sym = r["medians"]["ore"], r["medians"]["symilar"]
        print(
            f"  ORE / symilar: wall {ore['wall'] / sym['wall']:.2f}x, CPU {ore['cpu'] / sym['cpu']:.2f}x"
        )


def show(report: dict[str, Any], every_miss: bool) -> None:
    for name, r in report.items():
        print(
            f"{name}: {r['files']} Python files; 1-min load {r['load_1min']}; "
            f"ORE groups {r['ore_groups']}"
        )
        for tool, seconds in r["seconds"].items():
            print(f"  {tool:<30} {seconds:8.3f} s")
        for tool, rec in r["recall"].items():
            print(f"  {tool}: {rec['found']}/{rec['groups']} found, recall {rec['recall']}")
            for category, count in rec["miss_categories"].items():
                print(f"    {count:5} {category}")
                misses = [m for m in rec["misses"] if m["category"] == category]
                for miss in misses if every_miss else misses[:3]:
                    print("            " + "  ".join(f"{p}:{s}-{e}" for p, s, e in miss["places"]))
        print(f"  ORE renamed/structural vs the tools: {r['renamed_structural_vs_tools']}")
        for n, group in enumerate(r["sample"], 1):
            where = ", ".join(f"{o['path']}:{o['start']}-{o['end']}" for o in group["occurrences"])
            print(
                f"  sample {n:2}: {group['kind']} {group['lines']} lines, {group['tokens']} tokens: {where}"
            )
    print("miss categories:")
    for key, text in CATEGORIES.items():
        print(f"  {key}: {text}")


if __name__ == "__main__":
    main()
