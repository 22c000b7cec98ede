"""Benchmark the loop: a turn's wall time against a bare `ollama` client call, and the start-up
time of commands that call no model against `python -c "import click"`.

Everything runs in the same run, on the same machine, as whole processes (what a shell user
waits for), against a loopback Ollama imitation that answers instantly, so the figures measure
ORE's own overhead. Medians of N interleaved runs.

    python bench/loop_bench.py [--runs 15] [--json]

Targets (issue "The loop"): turn <= 1.1x the bare client call; non-model commands <= 1.6x
`import click` (issue 22: the config file's read included; `$ORE_HOME` here has none). The dry
run is timed with `--model` and with `-m`: click tries every short flag as a long one first, and
the mistake it then discards loads `difflib` to suggest a spelling (about 2 ms).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

from _timing import clean_env, measure, start_server

PY = sys.executable
ORE = shutil.which("ore", path=str(Path(PY).parent)) or shutil.which("ore") or "ore"

BARE_CALL = (
    "import ollama; c = ollama.Client(); "
    "r = c.chat(model='llama3.2:latest', messages=[{'role': 'user', 'content': 'hi'}]); "
    "print(r.message.content)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    server, url = start_server("fake_ollama.py")
    home = tempfile.mkdtemp(prefix="ore-bench-")
    env = clean_env(OLLAMA_HOST=url, ORE_HOME=home, HOME=home, NO_COLOR="1")
    try:
        turn = measure(
            {
                "bare ollama client call": [PY, "-c", BARE_CALL],
                "ore turn (--model)": [ORE, "--model", "llama3.2:latest", "hi"],
                "ore turn (default model)": [ORE, "hi"],
            },
            env,
            args.runs,
        )
        startup = measure(
            {
                'python -c "import click"': [PY, "-c", "import click"],
                "ore --help": [ORE, "--help"],
                "ore --version": [ORE, "--version"],
                "ore --list-sessions": [ORE, "--list-sessions"],
                "ore session list": [ORE, "session", "list"],
                "ore --list-tools": [ORE, "--list-tools"],
                "ore --list-skills": [ORE, "--list-skills"],
                "ore --dry-run --model m hi": [ORE, "--dry-run", "--model", "m", "hi"],
                "ore --dry-run -m m hi": [ORE, "--dry-run", "-m", "m", "hi"],
                "ore graph --help": [ORE, "graph", "--help"],
                "ore config show": [ORE, "config", "show"],
                "ore models default": [ORE, "models", "default"],
                "ore log list": [ORE, "log", "list"],
                "ore log status": [ORE, "log", "status"],
            },
            env,
            args.runs,
        )
    finally:
        server.terminate()
        server.wait(timeout=5)
        shutil.rmtree(home, ignore_errors=True)

    bare = turn["bare ollama client call"]
    click_base = startup['python -c "import click"']
    report = {
        "runs": args.runs,
        "turn": {k: {"seconds": round(v, 4), "ratio": round(v / bare, 3)} for k, v in turn.items()},
        "startup": {
            k: {"seconds": round(v, 4), "ratio": round(v / click_base, 3)}
            for k, v in startup.items()
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"median of {args.runs} runs, wall time of whole processes")
    print("\nturn against the loopback server (target <= 1.10x the bare client call)")
    for name, row in report["turn"].items():
        print(f"  {name:32} {row['seconds'] * 1000:7.1f} ms  {row['ratio']:.2f}x")
    print('\ncommands that call no model (target <= 1.60x python -c "import click")')
    for name, row in report["startup"].items():
        print(f"  {name:32} {row['seconds'] * 1000:7.1f} ms  {row['ratio']:.2f}x")


if __name__ == "__main__":
    main()
