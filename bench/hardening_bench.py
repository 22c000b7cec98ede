"""Quadratic work, measured (issue 21, item 6): streamed Markdown and deeply nested files.

Markdown: a ~1 MB answer of ordinary blocks (paragraphs, code, lists, tables) fed token by token
in 4-byte pieces to `MarkdownStream`, on a rich Console that is a terminal 100 columns wide
writing to /dev/null, against (a) the same pieces written raw to the same file, the `--raw`
floor, and (b) the whole answer rendered once by rich, the floor of any rendering. The
renderer's clock runs as if a model sent a piece every `--token-ms` (it draws at most every
80 ms of that time), so nothing waits for a model. Before the fix each draw re-rendered the
whole answer (108 KB took 50 s, 432 KB over 300 s); `--before REV` streams the smaller answers
with the renderer of that commit too.

Graph: a 20,000-deep nested JS file and a 20,000-deep nested Python file (both under the 1 MB
index limit), extracted (`index_file`) and indexed cold as a whole tree (`open_graph`), against
a flat file of the same size. Before the fix one 939 KB nested JS file took 348 s.

    python bench/hardening_bench.py [--size BYTES] [--depth N] [--runs N] [--before REV]
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


def bench_markdown(size: int, runs: int, delay: float, before: str | None) -> None:
    from rich.console import Console
    from rich.markdown import Markdown

    from ore.cli import render

    sink = open(os.devnull, "w")  # noqa: SIM115 - kept for the whole benchmark

    def console() -> Console:
        return Console(file=sink, width=100, force_terminal=True, color_system="truecolor")

    def streamed(module: Any, pieces: list[str]) -> None:
        clock = PacedClock(delay)
        module.time = types.SimpleNamespace(monotonic=clock.monotonic)
        if module is render:
            stream = module.MarkdownStream(console=console())
        else:
            module._console = console
            stream = module.MarkdownStream()
        for piece in pieces:
            clock.fed += 1
            stream.feed(piece)
        stream.close()

    text = answer(size)
    pieces = [text[at : at + 4] for at in range(0, len(text), 4)]

    def raw() -> None:
        for piece in pieces:
            sink.write(piece)
            sink.flush()

    def whole() -> None:
        console().print(Markdown(text, code_theme="monokai"))

    results = {
        "raw 4-byte writes": median_time(raw, runs),
        "rendered whole, once": median_time(whole, runs),
        "streamed (MarkdownStream)": median_time(lambda: streamed(render, pieces), runs),
    }
    print(
        f"\nMarkdown: {len(text):,} characters, {len(pieces):,} pieces of 4, width 100,"
        f" paced as a model sending a piece every {delay * 1000:g} ms"
    )
    for name, seconds in results.items():
        print(f"  {name:<32} {seconds:8.2f} s")
    stream_s = results["streamed (MarkdownStream)"]
    print(
        f"  streamed / raw {stream_s / results['raw 4-byte writes']:.1f}x,"
        f" streamed / whole {stream_s / results['rendered whole, once']:.2f}x"
    )
    sizes = (size // 80, size // 40, size // 20)
    modules = [("now", render)] + ([(before, renderer_before(before))] if before else [])
    for label, module in modules:
        # the renderer before the fix redrew the whole answer per piece once a draw took longer
        # than 80 ms: 13 KB already takes about a minute, so it gets smaller answers
        for small in sizes if module is render else (size // 320, size // 160, size // 80):
            body = answer(small)
            parts = [body[at : at + 4] for at in range(0, len(body), 4)]
            seconds = median_time(lambda m=module, p=parts: streamed(m, p), 1)
            print(f"  streamed {label:<8} {len(body) / 1000:6.0f} KB {seconds:8.2f} s")


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
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--only", choices=("markdown", "graph"))
    parser.add_argument(
        "--token-ms", type=float, default=1.0, help="the pace of the simulated model (ms)"
    )
    parser.add_argument(
        "--before", metavar="REV", help="also stream with ore/cli/render.py as of this commit"
    )
    args = parser.parse_args()
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cores")
    if args.only != "graph":
        bench_markdown(args.size, args.runs, args.token_ms / 1000, args.before)
    if args.only != "markdown":
        bench_graph(args.depth, args.runs)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
