"""Scale: `ore.graph` on issue 24's 18,484-file corpus, next to django alone in the same run.

The corpus is plotly, sympy, twilio and django from the package index installed side by side with
`pip install --no-deps --target` (pinned versions, so the same files every time; the corpus
bench/mcp_bench.py's `--corpus` takes). Every figure is
taken in a fresh process, so each peak memory (`ru_maxrss`) belongs to one command: the process
itself, and separately its children (`RUSAGE_CHILDREN`: the forked parse workers of a cold index;
for a warm query only the `git ls-files` probe, which is a fork of the process until it execs). Per run, interleaved, medians
of N runs:

- cold index (cache deleted) with the default jobs (every core) and with jobs=1;
- warm `dependents FILE`, `symbol NAME` and `top-files`: `open_graph(root)` plus the query timed
  inside the process (the import of ORE excluded), and the whole `ore graph ...` command's wall
  time (start-up included);
- the same warm queries answered by a warm body (`ore.graph.serve.WarmGraph`, what `ore mcp`
  keeps, through `ore.mcp.tools.call_tool`: the change check, the query and the JSON result,
  without the MCP transport, which costs the same on any tree): the median of 20 calls after
  one warm-up, in a fresh process per run;
- one-file re-index (a line appended to one file; restored afterwards);
- the same warm queries, cold indexes and re-index on django alone (the corpus's own copy), and
  the ratio corpus / django of each warm query. Target (issues 14 and 24): every warm ratio < 3x.

Also the cache's size on disk, the corpus's files by language and by package, and the load
average (the machine is shared: interleaving and medians are what make the figures comparable).

    python bench/graph_scale_bench.py [--corpus DIR] [--runs 5] [--no-cold] [--json]

--no-cold leaves the cold indexes out (50 s each on the corpus on 2 shared cores).

With --corpus the corpus there is reused (or assembled there when the folder holds no corpus);
without it, it is assembled in a temporary folder and removed afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

#: Pinned, all wheels; with --no-deps nothing else comes along (issue 24's corpus).
PINNED = ("plotly==5.24.1", "sympy==1.14.0", "twilio==9.13.0", "django==5.2.19")
STAMP = ".ore-scale-corpus"
MIN_FILES = 18_000
#: Calls per warm-body measurement (after one warm-up call).
SERVED_CALLS = 20
#: The queries: the same file and name on both roots (django's paths inside the corpus).
FILE = "db/models/base.py"
NAME = "Model"
QUERIES = ("dependents", "symbol", "top-files")
#: The MCP tool answering each query, and its arguments (`arg` is the file or the name).
TOOLS = {"dependents": "dependents", "symbol": "find_symbol", "top-files": "top_files"}


# -- the corpus --------------------------------------------------------------------------------


def assemble(corpus: Path) -> None:
    """Install PINNED into `corpus` unless it already holds exactly that."""
    stamp = corpus / STAMP
    if stamp.is_file() and stamp.read_text().split() == list(PINNED):
        return
    if corpus.exists() and any(corpus.iterdir()):
        sys.exit(f"{corpus} holds something other than this corpus; give an empty folder")
    corpus.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile"]
    subprocess.run([*pip, "--target", str(corpus), *PINNED], check=True)
    stamp.write_text("\n".join(PINNED) + "\n")


def owners(corpus: Path) -> dict[str, str]:
    """Top-level name in the corpus -> the distribution that installed it (from RECORD)."""
    out: dict[str, str] = {}
    for record in sorted(corpus.glob("*.dist-info/RECORD")):
        dist = record.parent.name.removesuffix(".dist-info")
        for line in record.read_text().splitlines():
            top = line.split(",")[0].split("/")[0]
            if top and not top.endswith((".dist-info", ".libs")) and top not in ("..", "bin"):
                out.setdefault(top, dist)
    return out


# -- children: one measurement each, in a fresh process ----------------------------------------


def child(mode: str, root: str, arg: str) -> None:
    """Run one measurement and print it as JSON (seconds and peak memory of this process)."""
    from ore.graph import open_graph

    start = time.perf_counter()
    extra: dict[str, Any] = {}
    if mode == "cold":
        g = open_graph(root, jobs=int(arg) if arg != "0" else None)
        extra["files"] = len(g.index.files)
    elif mode == "reindex":
        extra["parsed"] = open_graph(root).index.parsed
    elif mode == "dependents":
        extra["rows"] = len(open_graph(root).dependents(arg))
    elif mode == "symbol":
        extra["rows"] = len(open_graph(root).symbol(arg))
    elif mode == "top-files":
        extra["rows"] = len(open_graph(root).top_files(10))
    elif mode.startswith("served-"):
        extra = served(mode.removeprefix("served-"), root, arg)
    elif mode == "census":
        g = open_graph(root)
        extra["languages"] = dict(Counter(r.language for r in g.index.files.values()))
        extra["tops"] = dict(Counter(p.split("/")[0] for p in g.files))
        extra["skipped"] = g.index.skipped
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {
                "s": seconds,
                "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "workers_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                **extra,
            }
        )
    )


def served(query: str, root: str, arg: str) -> dict[str, Any]:
    """The warm body's answer to `query`: opened (from the warm cache), two warm-up calls, then
    the median of `SERVED_CALLS` calls as `ore mcp` answers each (change check, query, JSON)."""
    from ore.graph.serve import WarmGraph
    from ore.mcp.tools import call_tool

    tool = TOOLS[query]
    args = {"dependents": {"file": arg}, "find_symbol": {"name": arg}, "top_files": {"limit": 10}}
    warm = WarmGraph(root)
    start = time.perf_counter()
    reply = call_tool(warm, tool, args[tool])
    first = time.perf_counter() - start
    if reply.error:
        raise SystemExit(f"{tool}: {reply.text}")
    call_tool(warm, tool, args[tool])  # the first check after opening stats every file
    times = []
    for _ in range(SERVED_CALLS):
        start = time.perf_counter()
        call_tool(warm, tool, args[tool])
        times.append(time.perf_counter() - start)
    warm.close()
    return {"call_s": statistics.median(times), "first_s": first}


def run_child(mode: str, root: Path, arg: str = "") -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(root), arg],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{mode} {root}: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.splitlines()[-1]))


def ore_command() -> list[str]:
    script = Path(sys.executable).parent / "ore"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ore"]


def run_cli(query: str, root: Path) -> dict[str, Any]:
    """The whole `ore graph QUERY` command: wall time and peak memory (wait4's rusage)."""
    args = {"dependents": [FILE], "symbol": [NAME], "top-files": ["--limit", "10"]}[query]
    cmd = [*ore_command(), "graph", query, *args, "--root", str(root)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd}: {err.decode()[-2000:]}")
    return {"s": seconds, "rss_kib": usage.ru_maxrss}


# -- the bench ---------------------------------------------------------------------------------


def cache_files(root: Path, home: Path) -> dict[str, int]:
    """Bytes on disk of the index and what sits beside it, for `root`."""
    os.environ["ORE_HOME"] = str(home)
    from ore.graph.index.cache import cache_path

    index = cache_path(root.resolve())
    return {p.suffix.lstrip("."): p.stat().st_size for p in index.parent.glob(index.stem + ".*")}


def reindex(root: Path, rel: str, run: int) -> dict[str, Any]:
    changed = root / rel
    original = changed.read_bytes()
    stat = changed.stat()
    try:
        changed.write_bytes(original + f"\n# scale bench edit {run}\n".encode())
        result = run_child("reindex", root)
        assert result["parsed"] == 1, result
    finally:
        changed.write_bytes(original)
        os.utime(changed, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    run_child("reindex", root)  # the cache holds the restored file again
    return result


def bench(corpus: Path, runs: int, home: Path, *, cold: bool = True) -> dict[str, Any]:
    os.environ["ORE_HOME"] = str(home)
    django = corpus / "django"
    roots = {"corpus": corpus, "django": django}
    files = {"corpus": "django/" + FILE, "django": FILE}
    from ore.graph.index.cache import cache_path

    samples: dict[str, list[dict[str, Any]]] = {}
    loads = [os.getloadavg()]

    def keep(key: str, value: dict[str, Any]) -> None:
        samples.setdefault(key, []).append(value)

    for name, root in roots.items():  # index once, then every warm answer (PageRank too) is kept
        run_child("cold", root, "0")
        for query in QUERIES:
            run_child(query, root, files[name] if query == "dependents" else NAME)
    census = run_child("census", corpus)
    for run in range(runs):
        for jobs in ("0", "1") if cold else ():
            for name, root in roots.items():
                cache_path(root.resolve()).unlink(missing_ok=True)
                keep(f"{name} cold jobs={jobs}", run_child("cold", root, jobs))
        loads.append(os.getloadavg())
        for query in QUERIES:
            for name, root in roots.items():
                arg = files[name] if query == "dependents" else NAME
                keep(f"{name} warm {query}", run_child(query, root, arg))
            for name, root in roots.items():
                keep(f"{name} cli {query}", run_cli(query, root))
            for name, root in roots.items():
                arg = files[name] if query == "dependents" else NAME
                got = run_child(f"served-{query}", root, arg)
                keep(f"{name} served {query}", {**got, "s": got["call_s"]})
        for name, root in roots.items():
            keep(f"{name} reindex", reindex(root, files[name], run))
        loads.append(os.getloadavg())
        print(f"run {run + 1}/{runs} done, load {loads[-1][0]:.2f}", file=sys.stderr)
    med = statistics.median
    figures = {
        key: {
            "s": med(v["s"] for v in values),
            "s_all": [round(v["s"], 4) for v in values],
            "rss_mib": max(v["rss_kib"] for v in values) / 1024,
            "workers_rss_mib": max(v.get("workers_rss_kib", 0) for v in values) / 1024,
            **(
                {"first_s": med(v["first_s"] for v in values)}
                if values and "first_s" in values[0]
                else {}
            ),
        }
        for key, values in samples.items()
    }
    ratios = {
        f"{kind} {query}": figures[f"corpus {kind} {query}"]["s"]
        / figures[f"django {kind} {query}"]["s"]
        for kind in ("warm", "cli", "served")
        for query in QUERIES
    }
    tops = owners(corpus)
    by_package: Counter[str] = Counter()
    for top, count in census["tops"].items():
        by_package[tops.get(top, top)] += count
    cold_files = {v["files"] for v in samples.get("corpus cold jobs=0", [])}
    return {
        "pinned": list(PINNED),
        "files": sum(census["languages"].values()),
        "cold_files": sorted(cold_files),
        "languages": dict(sorted(census["languages"].items())),
        "packages": dict(by_package.most_common()),
        "skipped": census["skipped"],
        "cache_bytes": {name: cache_files(root, home) for name, root in roots.items()},
        "runs": runs,
        "cores": os.cpu_count(),
        "loadavg": [[round(x, 2) for x in load] for load in loads],
        "figures": figures,
        "ratios": ratios,
        "target_met": all(r < 3 for r in ratios.values()),
    }


def report(r: dict[str, Any]) -> None:
    print(f"corpus: {r['files']} files {r['languages']}, skipped {r['skipped']}")
    print("packages: " + ", ".join(f"{k} {v}" for k, v in r["packages"].items()))
    print(f"cores {r['cores']}, runs {r['runs']} (medians); load averages {r['loadavg']}")
    for key, f in r["figures"].items():
        workers = f" children {f['workers_rss_mib']:.0f} MiB" if f["workers_rss_mib"] else ""
        first = f" (first call {f['first_s']:.3f} s)" if "first_s" in f else ""
        print(f"{key:34} {f['s']:8.4f} s   peak {f['rss_mib']:6.0f} MiB{workers}{first}")
    for key, ratio in r["ratios"].items():
        print(f"corpus / django {key:20} {ratio:5.2f}x")
    for name, sizes in r["cache_bytes"].items():
        print(f"cache {name}: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sizes.items()))
    print("target (every warm ratio < 3x): " + ("met" if r["target_met"] else "NOT met"))


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(*sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, help="reuse (or assemble) the corpus here")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-cold", action="store_true", help="leave the cold indexes out")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ore-graph-scale-"))
    try:
        corpus = (args.corpus or work / "corpus").resolve()
        assemble(corpus)
        result = bench(corpus, args.runs, work / "home", cold=not args.no_cold)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if result["files"] < MIN_FILES:
        print(f"warning: only {result['files']} files (< {MIN_FILES})", file=sys.stderr)
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "graph_scale_bench.json").write_text(json.dumps(result, indent=1))
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        report(result)


if __name__ == "__main__":
    main()
