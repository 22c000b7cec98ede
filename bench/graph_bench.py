"""Benchmark `ore.graph` against grimp on real packages installed from PyPI.

For each package (django, sympy): grimp's build of its import graph, ORE's cold index (empty
cache, both cores), a warm query (cache fresh: staleness check + graph + `dependents`), and a
re-index after one file changed; then precision and recall of ORE's resolved Python import
edges against grimp's graph. All in one process, interleaved, medians of N runs; the import of
grimp and of ORE is excluded from every timing, as in the anchor figures. Last, the CPU time of
tree-sitter alone (parse, parse + query) on the same files: halved, the floor of any 2-core cold
index built on it.

    python bench/graph_bench.py [--runs 5] [--site DIR] [--json]

Without --site the packages are installed with `pip install --target` into a temporary folder.
Targets (issue 5, 2 cores): django cold <= 4x grimp, warm <= 1.5x grimp; precision and recall
>= 0.99 on both packages.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PACKAGES = {"django": "db/models/base.py", "sympy": "core/basic.py"}
SYMBOLS = {"django": "Model", "sympy": "Basic"}


def install(target: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target)]
    subprocess.run([*cmd, *PACKAGES], check=True)


def timed(fn: Any) -> tuple[float, Any]:
    gc.collect()  # no garbage from the previous step is collected on this step's clock
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def grimp_edges(graph: Any) -> set[tuple[str, str]]:
    # grimp counts a self-import (`from sympy.printing.pycode import ...` in pycode.py); ORE does
    # not (a file is not its own dependent): both compared without them
    return {
        (m, t) for m in graph.modules for t in graph.find_modules_directly_imported_by(m) if t != m
    }


def ore_edges(index: Any, root: Path) -> tuple[set[tuple[str, str]], set[str]]:
    from ore.graph.index.python_imports import python_module_names

    table = python_module_names(
        str(root), [p for p, f in index.files.items() if f.language == "python"]
    )
    names: dict[str, str] = {}
    for name, path in table.items():
        names.setdefault(path, name)
    edges = {
        (names[e.source], names[e.target])
        for e in index.edges
        # grimp counts imports in functions and under `if TYPE_CHECKING:` too: so do these
        # (kinds `lazy` and `type`)
        if e.kind != "reference" and e.source in names and e.target in names
    }
    return edges, set(names.values())


def tree_sitter_floor(root: Path, index: Any) -> tuple[float, float, float]:
    """CPU seconds of tree-sitter alone on the indexed files (one process): parse with every
    tree kept (the floor the issues quote), parse plus the one query pass, and parse with each
    tree released at once (what an index that keeps no tree pays at least; lower, since the
    kept trees cost fresh memory). Halved, the second is what no 2-core cold index can beat."""
    import tree_sitter

    from ore.graph.index.languages import parser_and_query

    blobs = []
    for path, record in index.files.items():
        parser, query = parser_and_query(record.language)
        if parser is not None:
            blobs.append((parser, query, (root / path).read_bytes()))
    parse, both, released = [], [], []
    for _ in range(3):
        gc.collect()
        start = time.process_time()
        for parser, _query, data in blobs:
            parser.parse(data)
        released.append(time.process_time() - start)
        gc.collect()
        start = time.process_time()
        trees = [parser.parse(data) for parser, _query, data in blobs]
        parse.append(time.process_time() - start)
        start = time.process_time()
        for (_parser, query, _data), tree in zip(blobs, trees, strict=True):
            tree_sitter.QueryCursor(query).captures(tree.root_node)
        both.append(parse[-1] + time.process_time() - start)
    return statistics.median(parse), statistics.median(both), statistics.median(released)


def bench_package(pkg: str, site: Path, runs: int, home: Path) -> dict[str, Any]:
    import grimp

    from ore.graph import open_graph
    from ore.graph.index.cache import cache_path

    root = site / pkg
    changed = root / PACKAGES[pkg]
    original = changed.read_bytes()
    grimp_times, cold, warm, warm_top, reindex = [], [], [], [], []
    cold_one, cold_one_cpu, warm_symbol = [], [], []
    try:
        for run in range(runs):
            t, ggraph = timed(lambda: grimp.build_graph(pkg, cache_dir=None))
            grimp_times.append(t)
            cache_path(root.resolve()).unlink(missing_ok=True)
            t, _ = timed(lambda: open_graph(root) and None)
            cold.append(t)
            cache_path(root.resolve()).unlink(missing_ok=True)
            cpu = time.process_time()
            t, _ = timed(lambda: open_graph(root, jobs=1) and None)
            cold_one_cpu.append(time.process_time() - cpu)
            cold_one.append(t)
            t, _ = timed(lambda: open_graph(root).dependents(PACKAGES[pkg]) and None)
            warm.append(t)
            t, _ = timed(lambda: open_graph(root).top_files(10) and None)
            warm_top.append(t)
            t, _ = timed(lambda: open_graph(root).symbol(SYMBOLS[pkg]) and None)
            warm_symbol.append(t)
            changed.write_bytes(original + f"\n# bench edit {run}\n".encode())
            t, parsed = timed(lambda: open_graph(root).index.parsed)
            assert parsed == 1, parsed
            reindex.append(t)
            changed.write_bytes(original)
            open_graph(root)
    finally:
        changed.write_bytes(original)
    truth = grimp_edges(ggraph)
    index = open_graph(root).index
    mine, my_modules = ore_edges(index, root)
    inside = {e for e in mine if e[0] in ggraph.modules and e[1] in ggraph.modules}
    parse_cpu, parse_query_cpu, parse_released_cpu = tree_sitter_floor(root, index)
    med = statistics.median
    return {
        "package": pkg,
        "files": len(index.files),
        "python_files": sum(1 for f in index.files.values() if f.language == "python"),
        "grimp_modules": len(ggraph.modules),
        "grimp_edges": len(truth),
        "ore_python_edges": len(mine),
        "grimp_s": med(grimp_times),
        "cold_s": med(cold),
        "warm_dependents_s": med(warm),
        "warm_top_files_s": med(warm_top),
        "warm_symbol_s": med(warm_symbol),
        "cold_1_core_s": med(cold_one),
        "cold_1_core_cpu_s": med(cold_one_cpu),
        "two_core_speedup": med(cold_one) / med(cold),
        "cold_1_core_x_parse": med(cold_one_cpu) / parse_cpu,
        "cold_1_core_x_parse_released": med(cold_one_cpu) / parse_released_cpu,
        "load_average": os.getloadavg(),
        "reindex_one_s": med(reindex),
        "cold_x_grimp": med(cold) / med(grimp_times),
        "warm_x_grimp": med(warm) / med(grimp_times),
        "ts_parse_cpu_s": parse_cpu,
        "ts_parse_query_cpu_s": parse_query_cpu,
        "ts_parse_released_cpu_s": parse_released_cpu,
        "floor_2_cores_x_grimp": parse_query_cpu / 2 / med(grimp_times),
        "recall": len(truth & mine) / len(truth),
        "precision": len(truth & mine) / len(mine),
        "precision_within_grimp_modules": len(truth & inside) / max(1, len(inside)),
        "missing": sorted(truth - mine)[:20],
        "extra": sorted(mine - truth)[:20],
        "modules_only_ore": sorted(my_modules - set(ggraph.modules))[:20],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--site", type=Path, help="a folder where django and sympy are installed")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ore-graph-bench-"))
    try:
        site = args.site or work / "site"
        if args.site is None:
            install(site)
        os.environ["ORE_HOME"] = str(work / "home")
        sys.path.insert(0, str(site))
        results = [bench_package(pkg, site, args.runs, work / "home") for pkg in PACKAGES]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "graph_bench.json").write_text(json.dumps(results, indent=1))
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(f"cores: {os.cpu_count()}, runs: {args.runs} (medians)")
    for r in results:
        print(
            f"{r['package']:7} files {r['files']:5}  grimp {r['grimp_s']:.3f}s  "
            f"cold {r['cold_s']:.3f}s ({r['cold_x_grimp']:.2f}x)  "
            f"warm {r['warm_dependents_s']:.3f}s ({r['warm_x_grimp']:.2f}x)  "
            f"warm top-files {r['warm_top_files_s']:.3f}s  symbol {r['warm_symbol_s']:.3f}s  "
            f"reindex-1 {r['reindex_one_s']:.3f}s"
        )
        print(
            f"        cold on 1 core {r['cold_1_core_s']:.3f}s (CPU {r['cold_1_core_cpu_s']:.3f}s: "
            f"{r['cold_1_core_x_parse']:.2f}x parse, {r['cold_1_core_x_parse_released']:.2f}x "
            f"parse with trees released); 2 cores {r['two_core_speedup']:.2f}x faster; "
            f"load {r['load_average'][0]:.2f}"
        )
        print(
            f"        tree-sitter alone (CPU, 1 process): parse {r['ts_parse_cpu_s']:.3f}s "
            f"(trees released {r['ts_parse_released_cpu_s']:.3f}s), "
            f"parse+query {r['ts_parse_query_cpu_s']:.3f}s; on 2 cores at best "
            f"{r['floor_2_cores_x_grimp']:.2f}x grimp"
        )
        print(
            f"        edges grimp {r['grimp_edges']} ore {r['ore_python_edges']}  "
            f"recall {r['recall']:.4f}  precision {r['precision']:.4f} "
            f"(within grimp's modules {r['precision_within_grimp_modules']:.4f})"
        )
        for kind in ("missing", "extra", "modules_only_ore"):
            if r[kind]:
                print(f"        {kind}: {r[kind][:6]}")


if __name__ == "__main__":
    main()
