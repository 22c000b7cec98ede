"""Benchmark the OpenAI-compatible backend: a turn's wall time against a bare httpx POST to the
same endpoint, each in a fresh process.

Everything runs in the same run, on the same machine, as whole processes (what a shell user
waits for), against the loopback OpenAI-protocol fake (`tests/fake_openai.py`), which answers
instantly, so the figures measure ORE's own overhead. Medians of N interleaved runs.

    python bench/openai_bench.py [--runs 15] [--json]

The bare POST pays for Python and httpx only; the difference is what ORE adds to a turn (click,
the CLI, the contracts, the persona, model selection). With no --model, ORE first asks the
server's /models for the default: one extra round trip on top of the one chat request.
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
KEY = "sk-bench-0000"
MODEL = "llama3.2:latest"

# What a hand-written client does for one turn: import httpx, POST, print the answer.
BARE_POST = (
    "import os, httpx; "
    "r = httpx.post(os.environ['ORE_BASE_URL'] + '/chat/completions', "
    "headers={'Authorization': 'Bearer ' + os.environ['ORE_API_KEY']}, "
    f"json={{'model': '{MODEL}', 'messages': [{{'role': 'user', 'content': 'hi'}}], "
    "'stream': False}); "
    "print(r.json()['choices'][0]['message']['content'])"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    server, url = start_server("fake_openai.py", "--api-key", KEY)
    home = tempfile.mkdtemp(prefix="ore-bench-")
    env = {k: v for k, v in clean_env().items() if not k.startswith(("ORE_", "OPENAI_"))}
    env |= {
        "ORE_BACKEND": "openai",
        "ORE_BASE_URL": url,
        "ORE_API_KEY": KEY,
        "ORE_HOME": home,
        "HOME": home,
        "NO_COLOR": "1",
    }
    try:
        turn = measure(
            {
                "bare httpx POST": [PY, "-c", BARE_POST],
                "ore turn (--model)": [ORE, "--model", MODEL, "hi"],
                "ore turn (--model --stream)": [ORE, "--model", MODEL, "--stream", "hi"],
                "ore turn (default model)": [ORE, "hi"],
            },
            env,
            args.runs,
        )
    finally:
        server.terminate()
        server.wait(timeout=5)
        shutil.rmtree(home, ignore_errors=True)

    bare = turn["bare httpx POST"]
    report = {
        "runs": args.runs,
        "turn": {
            k: {
                "seconds": round(v, 4),
                "ratio": round(v / bare, 3),
                "overhead_ms": round((v - bare) * 1000, 1),
            }
            for k, v in turn.items()
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"median of {args.runs} runs, wall time of whole processes, --backend openai")
    print("\nturn against the loopback server, against a bare httpx POST in a fresh process")
    for name, row in report["turn"].items():
        extra = f"  +{row['overhead_ms']:.1f} ms" if name != "bare httpx POST" else ""
        print(f"  {name:32} {row['seconds'] * 1000:7.1f} ms  {row['ratio']:.2f}x{extra}")


if __name__ == "__main__":
    main()
