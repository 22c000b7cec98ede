"""Where the time of one `ore mcp` call goes, phase by phase, over stdio: warm, after a pause
(the control), and at once after a one-file edit (django, as bench/mcp_bench.py edits it).

The server is `ore.mcp.server.serve` run by this script (`--serve ROOT`), with its phases
wrapped to write a time stamp (CLOCK_MONOTONIC, shared by both processes) to a file: the line
read from stdin (the SDK's reader thread), the line on the event loop, the call in its worker
thread, the graph's lock taken, the inotify drain, the probe, the patch (and inside it the
file's parse and record, the edges built again, the head), the query, the result serialised,
written and flushed; and the read ahead's thread (`A:`). The client (the SDK's own, as in
mcp_bench) stamps the call's send and its answer. Each call's phases are the first stamp of
each between the two; the medians are printed per kind of call. The wrapping itself costs a
few microseconds a stamp (a dozen a call): compare kinds of call, not absolute times.

    python bench/mcp_phases.py [--site DIR] [--edits 12] [--pause SECONDS] [--raw KIND]

--site is a folder where django is installed (else `pip install --target` into a temporary
one). The wrapped names are ORE's own (`serve.patch`, `tools.call_tool`, ...): a rename
there shows as a missing phase here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from mcp_bench import EDITS, FILE, django_site  # the same tree, file and edits as mcp_bench

#: The call's path, in order: each phase is the time from one stamp to the next.
PATH = (
    "read_line",
    "loop_got_line",
    "worker_start",
    "graph_locked",
    "touched",
    "probe_done",
    "patch_done",
    "graph_done",
    "worker_end",
    "result_done",
    "write",
    "flushed",
)


def serve(root: str, trace: str) -> None:
    """`ore mcp --root ROOT`, its phases stamped into `trace`."""
    out = open(trace, "a", buffering=1)  # noqa: SIM115 - open for the process's life
    now = time.perf_counter_ns

    def stamp(tag: str, **more: Any) -> None:
        name = threading.current_thread().name
        out.write(json.dumps({"t": now(), "tag": tag, "thread": name, **more}) + "\n")

    def wrapped(owner: Any, name: str, before: str | None, after: str, timed: bool = False) -> None:
        real = getattr(owner, name, None)
        if real is None:  # another version of ORE (an older tree timed against this one)
            return

        def call(*args: Any, **kwargs: Any) -> Any:
            start = now()
            if before:
                stamp(before)
            try:
                return real(*args, **kwargs)
            finally:
                stamp(after, ms=(now() - start) / 1e6) if timed else stamp(after)

        setattr(owner, name, call)

    import mcp.server.stdio as stdio
    import mcp_types

    class Wire(stdio._UnownedTextWrapper):  # type: ignore[misc]
        def readline(self, *args: Any) -> str:
            line = super().readline(*args)
            stamp("read_line")
            return str(line)

        def __next__(self) -> str:
            line = super().__next__()
            stamp("read_line")
            return str(line)

        def write(self, text: str) -> int:
            stamp("write")
            return int(super().write(text))

        def flush(self) -> None:
            super().flush()
            stamp("flushed")

    stdio._UnownedTextWrapper = Wire
    adapter = mcp_types.jsonrpc_message_adapter

    class Adapter:
        def validate_json(self, line: str, **kwargs: Any) -> Any:
            stamp("loop_got_line")
            return adapter.validate_json(line, **kwargs)

    stdio.types = type(sys)("types")  # the module's one use of `types`: the adapter
    stdio.types.jsonrpc_message_adapter = Adapter()

    from ore.graph import serve as warm
    from ore.graph import watch

    try:  # what an edit changes has its own module (ore.graph.patch) since 2026-11-24
        from ore.graph import patch as edit

        patch_name, links = "patch", edit.Links
    except ImportError:  # an older tree: the patch lived in serve
        edit, patch_name, links = warm, "_patched", warm._Links
    from ore.graph.index import extract
    from ore.mcp import server, tools

    real_call = tools.call_tool

    def call_tool(*args: Any) -> Any:
        stamp("worker_start")
        try:
            return real_call(*args)
        finally:
            stamp("worker_end")

    server.call_tool = call_tool
    real_graph = warm.WarmGraph.graph

    def graph(self: Any) -> Any:
        with self._lock:
            stamp("graph_locked")
            found = real_graph(self)  # the lock is reentrant
        stamp("graph_done")
        return found

    warm.WarmGraph.graph = graph
    wrapped(watch.Watch, "touched", None, "touched")
    wrapped(warm.Probe, "changed", None, "probe_done")
    wrapped(warm, patch_name, None, "patch_done", timed=True)
    wrapped(server, "_result", None, "result_done")
    for name in (
        "parse_all",
        "patched_head",
        "spliced_edges",
        "rebuilt_edges",
        "build_edges",
        "_references_again",
    ):
        wrapped(edit, name, None, f"D:{name}", timed=True)
    wrapped(links, "referring", None, "D:referring", timed=True)
    wrapped(extract, "revisited", None, "D:revisited", timed=True)
    wrapped(extract, "parse", None, "D:parse", timed=True)
    wrapped(extract, "digest_of", None, "D:digest_of", timed=True)
    wrapped(warm._Ahead, "_settle", "A:woke", "A:settled")
    server.serve(root)


async def drive(root: Path, trace: str, env: dict[str, str], edits: int, pause: float) -> list[Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    args = [str(Path(__file__).resolve()), "--serve", str(root), "--trace", trace]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    marks: list[Any] = []
    wanted = {"file": FILE}
    now = time.perf_counter_ns
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for _ in range(5):
            await session.call_tool("dependents", wanted)
        for _ in range(40):
            start = now()
            await session.call_tool("dependents", wanted)
            marks.append(("warm", start, now()))
        originals = {rel: (root / rel).read_bytes() for _edit, rel, _text in EDITS}
        try:
            for n in range(edits):
                await anyio.sleep(0.4)
                start = now()
                await session.call_tool("dependents", wanted)
                marks.append(("control", start, now()))
                for edit, rel, text in EDITS:
                    await anyio.sleep(0.4)  # every edit after the control's pause
                    (root / rel).write_bytes(originals[rel] + text.format(n=n).encode())
                    if pause:
                        await anyio.sleep(pause)
                    start = now()
                    await session.call_tool("dependents", wanted)
                    marks.append((edit, start, now()))
                    (root / rel).write_bytes(originals[rel])
                    await session.call_tool("dependents", wanted)
        finally:
            for rel, data in originals.items():
                (root / rel).write_bytes(data)
    return marks


def report(trace: str, marks: list[Any], raw: str = "") -> None:
    events = [json.loads(line) for line in Path(trace).read_text().splitlines()]
    for kind, start, end in marks:  # each call of kind `raw`: every stamp, from its send
        if kind == raw:
            print(f"-- {kind}: {(end - start) / 1e6:.3f} ms")
            for e in events:
                if start - 2_000_000 <= e["t"] <= end:
                    at = (e["t"] - start) / 1e6
                    print(f"   {at:8.3f} {e['thread'][:12]:12} {e['tag']} {e.get('ms', '')}")
    kinds: dict[str, list[dict[str, float]]] = {}
    for kind, start, end in marks:
        first: dict[str, int] = {}
        spent: dict[str, float] = {}
        for e in events:
            if not start - 2_000_000 <= e["t"] <= end:
                continue
            if e["tag"].startswith("D:"):
                spent[e["tag"][2:]] = spent.get(e["tag"][2:], 0.0) + e["ms"]
            elif e["t"] >= start:
                key = e["tag"] if e["thread"] != "ore-ahead" else "A:" + e["tag"].removeprefix("A:")
                first.setdefault(key, e["t"])
                if e["tag"] == "patch_done":
                    spent["patch" if e["thread"] != "ore-ahead" else "patch (ahead)"] = e["ms"]
        row: dict[str, float] = {"total": (end - start) / 1e6}
        at, last = start, "send"
        for tag in PATH:
            if tag in first:
                row[f"{last} -> {tag}"] = (first[tag] - at) / 1e6
                at, last = first[tag], tag
        row[f"{last} -> answer"] = (end - at) / 1e6
        for key, t in first.items():
            if key.startswith("A:"):
                row[f"{key} (from send)"] = (t - start) / 1e6
        row.update({f"  in it: {k}": v for k, v in spent.items()})
        kinds.setdefault(kind, []).append(row)
    for kind, rows in kinds.items():
        print(f"== {kind} ({len(rows)} calls): medians, ms")
        keys = list(dict.fromkeys(k for row in rows for k in row))
        for key in keys:
            values = [row[key] for row in rows if key in row]
            print(f"  {key:40} {statistics.median(values):7.3f}  (in {len(values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", type=Path, help="a folder where django is installed")
    parser.add_argument("--edits", type=int, default=12)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--raw", default="", help="print every stamp of each call of this kind")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--trace", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.trace)
        return
    import anyio

    work = Path(tempfile.mkdtemp(prefix="ore-mcp-phases-"))
    try:
        site = django_site(args.site, work)
        root = work / "django"
        shutil.copytree(site / "django", root)
        env = {**os.environ, "ORE_HOME": str(work / "home"), "NO_COLOR": "1"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        trace = str(work / "trace.jsonl")
        load = os.getloadavg()[0]
        marks = anyio.run(drive, root, trace, env, args.edits, args.pause)
        print(f"load {load:.1f} -> {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
        report(trace, marks, args.raw)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
