"""Quadratic work, measured (issue 21, item 6): streamed Markdown and deeply nested files.

Markdown: a ~1 MB answer of ordinary blocks (headings, paragraphs with emphasis, code and
links, fenced code, lists, tables) fed token by token in 4-byte pieces to ORE's own streaming
renderer (`ore.cli.markdown.MarkdownStream`, 100 columns), writing to /dev/null (or with `--pty`
a pseudo-terminal drained by a thread) as stdout at a terminal does (write, then flush), against the same pieces written raw the same way (the
`--raw` floor); the target is streamed <= 3x raw. Runs are interleaved and the ratio taken per
run; the median is reported. Also shown: the same answer rendered whole once by the same
renderer (a non-streamed answer), and by rich, the renderer before (35x raw; streamed through
it, 2.0x its own whole render). `--before REV` streams smaller answers through the rich-based
renderer of that commit (at 96fa919^, before the linear fix, 108 KB took 50 s).

Graph: a 20,000-deep nested JS file and a 20,000-deep nested Python file (both under the 1 MB
index limit), extracted (`index_file`) and indexed cold as a whole tree (`open_graph`), against
a flat file of the same size. Before the fix one 939 KB nested JS file took 348 s.

    python bench/hardening_bench.py [--size BYTES] [--depth N] [--runs N] [--md-runs N] [--pty] [--before REV]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

BLOCK = """### Step {i}

Paragraph {i} explains *why* `thing_{i}` matters, with **bold** words and a
[link](https://example.com/{i}) over a couple of wrapped lines of ordinary prose text.

```python
def step_{i}(x):
    return x + {i}
```

- first point about {i}
- second point, a bit longer than the first one

| n | square |
|---|---|
| {i} | {sq} |

"""


def answer(size: int) -> str:
    parts: list[str] = []
    total = i = 0
    while total < size:
        part = BLOCK.format(i=i, sq=i * i)
        parts.append(part)
        total += len(part)
        i += 1
    return "".join(parts)


def median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


class PacedClock:
    """`time` for the renderer as a model streaming a token every `delay` seconds would make it:
    the real time spent plus `delay` per token fed, so no benchmark waits for a model."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.fed = 0
        self.start = time.perf_counter()

    def monotonic(self) -> float:
        return time.perf_counter() - self.start + self.fed * self.delay


def renderer_before(rev: str) -> types.ModuleType:
    """ore/cli/render.py as it was at `rev` (git), for the before figures."""
    src = subprocess.run(
        ["git", "show", f"{rev}:ore/cli/render.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("render_before")
    exec(compile(src, "render_before.py", "exec"), module.__dict__)
    return module


def terminal_sink() -> Any:
    """A pseudo-terminal 100 columns wide whose other end is read and dropped as fast as it is
    written (a terminal that keeps up): the file ORE's stdout would be."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))

    def drain() -> None:
        while True:
            try:
                if not os.read(master, 1 << 16):
                    return
            except OSError:
                return

    threading.Thread(target=drain, daemon=True).start()
    return os.fdopen(slave, "w", encoding="utf-8")


def bench_markdown(
    size: int, runs: int, delay: float, before: str | None, to_pty: bool = False
) -> None:
    from ore.cli import render

    # kept for the whole benchmark
    sink = terminal_sink() if to_pty else open(os.devnull, "w")  # noqa: SIM115

    def write(text: str) -> None:
        # what `ore.cli.console.out` does with each piece: write, then flush
        sink.write(text)
        sink.flush()

    text = answer(size)
    pieces = [text[at : at + 4] for at in range(0, len(text), 4)]

    def raw() -> None:
        for piece in pieces:
            write(piece)

    def streamed() -> None:
        stream = render.MarkdownStream(write, width=100)
        for piece in pieces:
            stream.feed(piece)
        stream.close()

    def whole() -> None:
        stream = render.MarkdownStream(write, width=100)
        stream.feed(text)
        stream.close()

    # wall time, and this process's CPU time (steadier on a shared machine)
    clocks = {"wall": time.perf_counter, "cpu": time.process_time}
    names = ("raw", "streamed", "whole")
    times = {(clock, name): [] for clock in clocks for name in names}  # type: ignore[var-annotated]
    for _ in range(runs):  # interleaved, so a busy moment of the machine hits every side
        for name, fn in (("raw", raw), ("streamed", streamed), ("whole", whole)):
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            times["wall", name].append(time.perf_counter() - wall)
            times["cpu", name].append(time.process_time() - cpu)
    print(
        f"\nMarkdown: {len(text):,} characters, {len(pieces):,} pieces of 4, width 100,"
        f" to {'a pty' if to_pty else '/dev/null'}, median of {runs} runs (wall, cpu)"
    )
    labels = {
        "raw": "raw 4-byte writes (write + flush)",
        "streamed": "streamed (ore.cli.markdown)",
        "whole": "rendered whole, once (the same)",
    }
    for name in names:
        wall_s = statistics.median(times["wall", name])
        cpu_s = statistics.median(times["cpu", name])
        print(f"  {labels[name]:<36} {wall_s:8.3f} s {cpu_s:8.3f} s")
    for clock in clocks:
        ratios = [s / r for s, r in zip(times[clock, "streamed"], times[clock, "raw"], strict=True)]
        print(
            f"  streamed / raw ({clock}): median {statistics.median(ratios):.2f}x"
            f" (runs {min(ratios):.2f}x to {max(ratios):.2f}x), target <= 3x"
        )
    try:
        from rich.console import Console
        from rich.markdown import Markdown
    except ImportError:
        pass
    else:  # the renderer ORE used before, for scale
        seconds = median_time(
            lambda: Console(
                file=sink, width=100, force_terminal=True, color_system="truecolor"
            ).print(Markdown(text, code_theme="monokai")),
            1,
        )
        print(f"  rich, rendered whole once (before)   {seconds:8.3f} s")
    if before:
        bench_before(before, size, delay, sink)


def bench_before(rev: str, size: int, delay: float, sink: Any) -> None:
    """The rich-based `MarkdownStream` of `rev` on smaller answers (it redrew the open block,
    paced as a model sending a piece every `delay` seconds; before the linear fix, the whole
    answer per draw)."""
    from rich.console import Console

    module = renderer_before(rev)

    def console() -> Console:
        return Console(file=sink, width=100, force_terminal=True, color_system="truecolor")

    module.__dict__["_console"] = console
    for small in (size // 320, size // 160, size // 80):
        body = answer(small)
        parts = [body[at : at + 4] for at in range(0, len(body), 4)]

        def streamed(parts: list[str] = parts) -> None:
            clock = PacedClock(delay)
            module.__dict__["time"] = types.SimpleNamespace(monotonic=clock.monotonic)
            stream = module.MarkdownStream()
            for piece in parts:
                clock.fed += 1
                stream.feed(piece)
            stream.close()

        seconds = median_time(streamed, 1)
        print(f"  streamed {rev:<8} {len(body) / 1000:6.0f} KB {seconds:8.2f} s")


def js_nested(depth: int) -> bytes:
    body = "".join(f"function f{i}(a){{g(a);new C(a);\n" for i in range(depth))
    return (body + "}" * depth + "\n").encode()


def py_nested(depth: int) -> bytes:
    head = "import os\nfrom a import b\n\n\nclass A(b.Base):\n    def m(self):\n        pass\n\n\n"
    calls = "x = " + "b.f(os.g(a, " * (depth // 2) + "1" + "))" * (depth // 2) + "\n"
    lists = "y = " + "[" * depth + "]" * depth + "\n"
    return (head + calls + lists).encode()


def flat(size: int, language: str) -> bytes:
    line = "function f{i}(a){{g(a);}}\n" if language == "javascript" else "def f{i}(a):\n    g(a)\n"
    out: list[str] = []
    total = i = 0
    while total < size:
        out.append(line.format(i=i))
        total += len(out[-1])
        i += 1
    return "".join(out).encode()


def bench_graph(depth: int, runs: int) -> None:
    from ore.graph import open_graph
    from ore.graph.index.extract import index_file

    print(f"\nGraph: files nested {depth:,} deep against flat files of the same size")
    for language, ext, make in (("javascript", "js", js_nested), ("python", "py", py_nested)):
        data = make(depth)
        for label, content in (("nested", data), ("flat", flat(len(data), language))):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp) / "repo"
                root.mkdir()
                (root / f"deep.{ext}").write_bytes(content)
                home = Path(tmp) / "home"
                os.environ["ORE_HOME"] = str(home)
                record = index_file(str(root), f"deep.{ext}", language)
                assert not isinstance(record, str), record
                extract_s = median_time(
                    lambda root=root, ext=ext, language=language: index_file(
                        str(root), f"deep.{ext}", language
                    ),
                    runs,
                )

                def cold(root: Path = root, home: Path = home) -> None:
                    shutil.rmtree(home, ignore_errors=True)  # the cache lives in $ORE_HOME
                    open_graph(root, jobs=1)

                cold_s = median_time(cold, runs)
            print(
                f"  {language:<10} {label:<6} {len(content) / 1000:7.0f} KB"
                f" {len(record.symbols):>6} symbols  extract {extract_s:6.2f} s"
                f"  cold index {cold_s:6.2f} s"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="Markdown answer size")
    parser.add_argument("--depth", type=int, default=20_000, help="nesting depth")
    parser.add_argument("--runs", type=int, default=1, help="graph runs (median)")
    parser.add_argument("--md-runs", type=int, default=7, help="Markdown runs (median)")
    parser.add_argument("--only", choices=("markdown", "graph"))
    parser.add_argument(
        "--pty", action="store_true", help="Markdown to a drained pseudo-terminal, not /dev/null"
    )
    parser.add_argument(
        "--token-ms", type=float, default=1.0, help="--before: the pace of a simulated model (ms)"
    )
    parser.add_argument(
        "--before", metavar="REV", help="also stream with the rich renderer of this commit"
    )
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores")
    if args.only != "graph":
        bench_markdown(args.size, args.md_runs, args.token_ms / 1000, args.before, args.pty)
    if args.only != "markdown":
        bench_graph(args.depth, args.runs)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
