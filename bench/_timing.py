"""Shared by the benchmarks: start a loopback fake server, time whole processes, take medians."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["ROOT", "clean_env", "measure", "start_server", "wall"]

ROOT = Path(__file__).resolve().parent.parent


def start_server(script: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Start `tests/<script>` (a fake server) and return the process and the URL it printed."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / script), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def clean_env(**extra: str) -> dict[str, str]:
    """The environment a user has: PYTHONDONTWRITEBYTECODE would make every run recompile ORE
    from source while the dependencies come precompiled, so it (and PYTHONUNBUFFERED) go."""
    quiet = {"PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED"}
    return {**{k: v for k, v in os.environ.items() if k not in quiet}, **extra}


def wall(cmd: list[str], env: dict[str, str]) -> float:
    """Wall time of one whole process; a failing command stops the benchmark."""
    start = time.perf_counter()
    result = subprocess.run(cmd, env=env, input="", capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}: {result.stderr.strip()}")
    return elapsed


def measure(cases: dict[str, list[str]], env: dict[str, str], runs: int) -> dict[str, float]:
    """Median wall time per case, runs interleaved so drift hits every case alike."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for cmd in cases.values():  # warm the page cache and .pyc files
        wall(cmd, env)
    for _ in range(runs):
        for name, cmd in cases.items():
            times[name].append(wall(cmd, env))
    return {name: statistics.median(values) for name, values in times.items()}
