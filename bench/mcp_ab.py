"""Two `ore mcp` servers at once, one per code (this tree, and another ORE's source tree given
with --against), each on its own copy of django, their calls alternated: `dependents` warm,
after a pause (the control) and at once after each of mcp_bench's three one-file edits.

On a shared machine the load moves from minute to minute, so two runs one after the other
compare the load as much as the code. Here every step is taken by one server, then at once by
the other, round after round, so both see the same load. Per round and server: 10 back-to-back
`dependents` calls (warm), then, each after a 0.4 s pause with no call: the control (a call, no
edit), and each edit (the file written whole, then the call sent at once and timed from its
send to its answer; the file put back and read). The order of the two servers flips every
round. Printed: the medians over every round per server (warm: of all its warm calls), each
against the same server's warm median and its control.

    python bench/mcp_ab.py --against SRC [--site DIR] [--rounds 25]

SRC is a folder holding another ORE's `ore/` package (e.g. `git archive COMMIT | tar -x -C
SRC`): its server runs with `PYTHONPATH=SRC`. --site is a folder where django is installed.
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
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from mcp_bench import EDITS, FILE, django_site

KINDS = ("warm", "control", *(edit for edit, _file, _text in EDITS))


async def rounds(servers: list[tuple[str, Path, dict[str, str]]], count: int) -> dict[str, Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    times: dict[str, dict[str, list[float]]] = {
        name: {kind: [] for kind in KINDS} for name, _root, _env in servers
    }
    wanted = {"file": FILE}
    async with AsyncExitStack() as stack:
        sessions = []
        for name, root, env in servers:
            args = ["-m", "ore", "mcp", "--root", str(root)]
            params = StdioServerParameters(command=sys.executable, args=args, env=env)
            read, write = await stack.enter_async_context(stdio_client(params))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            for _ in range(5):
                await session.call_tool("dependents", wanted)
            sessions.append((name, root, session))
        originals = {
            (name, rel): (root / rel).read_bytes()
            for name, root, _session in sessions
            for _edit, rel, _text in EDITS
        }
        try:
            for n in range(count):
                order = sessions if n % 2 == 0 else sessions[::-1]
                for name, _root, session in order:
                    for _ in range(10):
                        start = time.perf_counter()
                        await session.call_tool("dependents", wanted)
                        times[name]["warm"].append(time.perf_counter() - start)
                for name, _root, session in order:
                    await anyio.sleep(0.4)
                    start = time.perf_counter()
                    await session.call_tool("dependents", wanted)
                    times[name]["control"].append(time.perf_counter() - start)
                for edit, rel, text in EDITS:
                    for name, root, session in order:
                        await anyio.sleep(0.4)
                        added = text.format(n=f"{n}_{name}").encode()
                        (root / rel).write_bytes(originals[name, rel] + added)
                        start = time.perf_counter()
                        result = await session.call_tool("dependents", wanted)
                        times[name][edit].append(time.perf_counter() - start)
                        if result.is_error:
                            raise SystemExit(f"{name} after an edit: {result.content[0].text}")
                        (root / rel).write_bytes(originals[name, rel])
                        await session.call_tool("dependents", wanted)
        finally:
            for (name, rel), data in originals.items():
                root = next(r for n, r, _s in sessions if n == name)
                (root / rel).write_bytes(data)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="another ORE's source tree")
    parser.add_argument("--site", type=Path, help="a folder where django is installed")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    import anyio

    work = Path(tempfile.mkdtemp(prefix="ore-mcp-ab-"))
    try:
        site = django_site(args.site, work)
        servers = []
        for name in ("this", "against"):
            root = work / name / "django"
            shutil.copytree(site / "django", root)
            env = {**os.environ, "ORE_HOME": str(work / name / "home"), "NO_COLOR": "1"}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env.pop("PYTHONPATH", None)
            if name == "against":
                env["PYTHONPATH"] = str(args.against.resolve())
            stats = [sys.executable, "-m", "ore", "graph", "stats", "--root", str(root)]
            subprocess.run(stats, env=env, check=True, capture_output=True)  # the cold index
            servers.append((name, root, env))
        loads = [os.getloadavg()[0]]
        times = anyio.run(rounds, servers, args.rounds)
        loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report: dict[str, Any] = {"rounds": args.rounds, "load_average": loads, "servers": {}}
    for name, kinds in times.items():
        warm = statistics.median(kinds["warm"])
        control = statistics.median(kinds["control"])
        row: dict[str, Any] = {"warm_ms": round(warm * 1000, 2)}
        for kind in KINDS[1:]:
            median = statistics.median(kinds[kind])
            row[kind] = {
                "ms": round(median * 1000, 2),
                "x_warm": round(median / warm, 2),
                "x_control": round(median / control, 2),
            }
        report["servers"][name] = row
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{args.rounds} rounds, load {loads[0]:.2f} -> {loads[1]:.2f}, {os.cpu_count()} cores")
    for name, row in report["servers"].items():
        cells = "  ".join(
            f"{kind} {row[kind]['ms']:.2f} ms ({row[kind]['x_warm']:.2f}x, "
            f"{row[kind]['x_control']:.2f}xc)"
            for kind in KINDS[1:]
        )
        print(f"{name:8} warm {row['warm_ms']:.2f} ms  {cells}")


if __name__ == "__main__":
    main()
