"""Benchmark the turn log (issue 23): what logging adds to a turn, and reading a log of 100,000
turns.

1. Logging cost, as the issue measures it: whole `ore` turns against the loopback Ollama
   imitation, with the log and with `--no-log`, interleaved (the order swapped every round, so
   drift and order hit both alike), many runs, stdout read through a pipe, stderr two ways:
   at a terminal (a pseudo-terminal, as a person runs `ore`: the record is then written by a
   child after the exit status, `ore.cli.ending`) and into a pipe read to its end (as a
   script capturing both: the record is written before the exit). Reported for each: each
   one's median wall time, the difference of the medians, and the median of the rounds'
   paired differences with a bootstrap 95% interval; the same for CPU time (user + system of
   the process waited for, which a loaded machine's scheduling disturbs less, but which misses
   time spent waiting on the disk, and at a terminal the child's). The log grows over the
   runs, so SQLite's automatic checkpoints (every 1,000 pages) are in the figures. Then the parts, timed inside fresh processes that have just run a turn through the
   library: importing `ore.artifacts`' document module and making the turn's artifact
   document, importing `_sqlite3` and `ore.log`, and `record` (open, one transaction, close);
   and what logging takes inside the `ore` program itself (`LOGGING_IN_PROGRAM`), which does
   not swing with the whole turn's tens of milliseconds.
2. Reading. A log of 100,000 turns is built through `ore.log`'s own schema (one transaction,
   varied prompts and answers from a Zipf vocabulary), then `ore log search WORD` (a rare, a
   middling and a common word, two words) and `ore log list -n 20` run as whole processes.

3. Instructions (`--part instructions`, needs valgrind): the instructions a logged and a
   `--no-log` turn execute, counted by callgrind with `PYTHONHASHSEED=0`. The same count comes
   back run after run (within 0.01%), on a busy machine as on a quiet one, so a change to the
   log's path can be measured while others work; time is still what the target is about.

    python bench/log_bench.py [--runs 15] [--turn-runs 201] [--turns 100000] [--json]
    python bench/log_bench.py --part logging --stderr pipe --turn-runs 401
    python bench/log_bench.py --part instructions

Targets: logging <= 5 ms a turn; `ore log search` < 200 ms and `ore log list -n 20` < 150 ms
over 100,000 turns.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from _timing import clean_env, measure, start_server

PY = sys.executable
ORE = shutil.which("ore", path=str(Path(PY).parent)) or shutil.which("ore") or "ore"

#: Run in a fresh process: one library turn (everything a turn loads is then loaded), then the
#: work `ore` adds to log it, timed part by part.
LOGGING_PARTS = """
import json, time
from ore.turn import TurnRequest, document_of, run_turn
request = TurnRequest.of("hi", model="llama3.2:latest")
result = run_turn(request)
marks = [time.perf_counter()]
from ore.artifacts import turn_document
marks.append(time.perf_counter())
document = document_of(request, result)
marks.append(time.perf_counter())
import _sqlite3  # what ore.log's record imports (not the `sqlite3` package)
marks.append(time.perf_counter())
from ore.log import record
marks.append(time.perf_counter())
held = []  # as the `ore` program's one-shot turn: its connection is left to the exit
record(document, session=None, seconds=result.seconds, until_exit=lambda db: not held.append(db))
marks.append(time.perf_counter())
print(json.dumps([b - a for a, b in zip(marks, marks[1:])]), flush=True)
import os; os._exit(0)
"""
#: Run as the `ore` program itself (stderr a pipe: the record is written before the exit), with
#: a clock around what logging adds to it: whether the turn is logged (`logging_enabled`) and
#: the record (`keep_turn`: the document made, SQLite and the log's code loaded, the record
#: written); the milliseconds are written to the descriptor TIMING_FD names just before the
#: exit. The whole turn swings by tens of milliseconds on a shared machine, this part by
#: tenths: it says what the difference of whole turns is made of.
LOGGING_IN_PROGRAM = """
import os, sys, time
import ore.cli.ending as ending
import ore.cli.turn_logging as turn_logging
spent = [0.0]
def clocked(work):
    def run(*args, **kwargs):
        started = time.perf_counter()
        try:
            return work(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - started
    return run
turn_logging.keep_turn = clocked(turn_logging.keep_turn)
turn_logging.logging_enabled = clocked(turn_logging.logging_enabled)
real_end = ending.end
def end(code, work):
    os.write(int(os.environ["TIMING_FD"]), str(spent[0]).encode())
    real_end(code, work)
ending.end = end
sys.argv = ["ore", "--model", "llama3.2:latest", "hi"]
from ore.cli import program
program()
"""
WHAT = ("wall", "cpu")
PARTS = (
    "import ore.artifacts (the document's module)",
    "make the artifact's document",
    "import _sqlite3",
    "import ore.log",
    "record (open, one transaction, close)",
)


def _timed(cmd: list[str], env: dict[str, str], stderr: int | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one whole process, until its exit status and
    the end of its stdout (and of its stderr unless `stderr`, a terminal, is given); a failure
    stops the run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if stderr is None:
        done = subprocess.run(cmd, env=env, input="", capture_output=True, text=True)
        failed = done.returncode != 0
        said = done.stderr.strip()
    else:
        code = subprocess.run(
            cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr
        ).returncode
        failed, said = code != 0, f"exit {code}"
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if failed:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}: {said}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _terminal() -> tuple[int, int, threading.Thread]:
    """A pseudo-terminal for stderr: its end for the process, ours, and a thread reading ours
    (so that the terminal never fills up and blocks a writer)."""
    ours, theirs = pty.openpty()

    def drain() -> None:
        while True:
            try:
                if not os.read(ours, 65536):
                    return
            except OSError:
                return

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    return ours, theirs, reader


def _interval(values: list[float], rng: random.Random, rounds: int = 2000) -> tuple[float, float]:
    """A bootstrap 95% interval of the median of `values`."""
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(rounds))
    return medians[int(rounds * 0.025)], medians[int(rounds * 0.975) - 1]


def in_program(env: dict[str, str], runs: int) -> list[float]:
    """Seconds the `ore` program spends on logging a one-shot turn (`LOGGING_IN_PROGRAM`),
    once per run, each run a fresh process into a fresh log's next turn."""
    spent = []
    for _ in range(runs):
        theirs, ours = os.pipe()
        try:
            done = subprocess.run(
                [PY, "-c", LOGGING_IN_PROGRAM],
                env={**env, "TIMING_FD": str(ours)},
                pass_fds=(ours,),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
            )
            os.close(ours)
            said = os.read(theirs, 64)
        finally:
            os.close(theirs)
        if done.returncode != 0 or not said:
            raise SystemExit(f"the in-program run failed: {done.stderr.strip()[-300:]}")
        spent.append(float(said))
    return spent


def logging_cost(
    env: dict[str, str], turn_runs: int, runs: int, ways: tuple[str, ...] = ("terminal", "pipe")
) -> dict[str, object]:
    logged = [ORE, "--model", "llama3.2:latest", "hi"]
    unlogged = [ORE, "--no-log", "--model", "llama3.2:latest", "hi"]
    from ore.log.writers import settle

    log = Path(env["ORE_HOME"]) / "log.db"
    ours, terminal, reader = _terminal()
    stderr = {"terminal": terminal, "pipe": None}
    for cmd in (logged, unlogged, logged):  # warm the page cache, the .pyc files and the log
        _timed(cmd, env)
    times: dict[tuple[str, str, str], list[float]] = {
        (way, name, what): [] for way in ways for name in ("logged", "no-log") for what in WHAT
    }
    cases = [(way, "logged", logged) for way in ways] + [(way, "no-log", unlogged) for way in ways]
    for number in range(turn_runs):
        # every order of the cases in turn: drift, and a child still writing, hit all alike
        turn = number % len(cases)
        for way, name, cmd in cases[turn:] + cases[:turn]:
            seconds, used = _timed(cmd, env, stderr[way])
            times[way, name, "wall"].append(seconds)
            times[way, name, "cpu"].append(used)
            settle(log, 10.0)  # a child still writing would hold up the next turn's record
    os.close(terminal)
    os.close(ours)
    reader.join(1)
    rng = random.Random(23)
    out: dict[str, object] = {"turn runs": turn_runs}
    for way in ways:
        for what in WHAT:
            yes, no = times[way, "logged", what], times[way, "no-log", what]
            paired = [a - b for a, b in zip(yes, no, strict=True)]
            low, high = _interval(paired, rng)
            key = f"stderr {way}, {what}"
            out[f"{key}: ore turn, logged (median)"] = statistics.median(yes)
            out[f"{key}: ore turn, --no-log (median)"] = statistics.median(no)
            out[f"{key}: difference of the medians"] = statistics.median(yes) - statistics.median(
                no
            )
            out[f"{key}: median paired difference"] = statistics.median(paired)
            out[f"{key}: its 95% interval, low"] = low
            out[f"{key}: its 95% interval, high"] = high
    inside = []
    for _ in range(runs):
        done = subprocess.run(
            [PY, "-c", LOGGING_PARTS], env=env, capture_output=True, text=True, check=True
        )
        inside.append(json.loads(done.stdout))
    for index, part in enumerate(PARTS):
        out[f"in process: {part}, median"] = statistics.median(row[index] for row in inside)
    out["in process: all, median"] = statistics.median(sum(row) for row in inside)
    out["in process: all, fastest run"] = min(sum(row) for row in inside)
    program = sorted(in_program(env, max(runs, 41)))
    out["in the ore program, stderr a pipe: logging, median"] = statistics.median(program)
    out["in the ore program: its 10th percentile"] = program[len(program) // 10]
    out["in the ore program: its 90th percentile"] = program[len(program) * 9 // 10]
    return out


def instructions(env: dict[str, str]) -> dict[str, object]:
    """Instructions of one logged and one `--no-log` turn, counted by callgrind (each after
    warm-up turns, so the log exists and the .pyc files are written)."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--part instructions needs valgrind (apt install valgrind)")
    fixed = {**env, "PYTHONHASHSEED": "0"}
    logged = [ORE, "--model", "llama3.2:latest", "hi"]
    unlogged = [ORE, "--no-log", "--model", "llama3.2:latest", "hi"]
    for cmd in (logged, unlogged, logged, unlogged):
        _timed(cmd, fixed)
    counts: dict[str, int] = {}
    for name, cmd in (("logged", logged), ("no-log", unlogged)):
        done = subprocess.run(
            [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", PY, *cmd],
            env=fixed,
            input="",
            capture_output=True,
            text=True,
        )
        _, marker, after = done.stderr.partition("Collected :")
        if done.returncode != 0 or not marker:
            raise SystemExit(f"callgrind failed: {done.stderr.strip()[-300:]}")
        counts[name] = int(after.split()[0])
    return {
        "instructions: logged turn": counts["logged"],
        "instructions: --no-log turn": counts["no-log"],
        "instructions: logging adds": counts["logged"] - counts["no-log"],
    }


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


def build_log(home: Path, turns: int, template: dict) -> dict[str, str]:
    """A log of `turns` turns in `home`, written with ore.log's schema; the words to search."""
    from ore.log import connect, excerpt

    rng = random.Random(23)
    vocab = _vocabulary(rng)
    weights = [1 / (rank + 1) for rank in range(len(vocab))]  # Zipf: a few words are common
    db = connect(home / "log.db")
    assert db is not None
    models = ["llama3.2:latest", "qwen2.5:0.5b", "deepseek-chat"]
    start = time.time() - turns * 60
    db.execute("BEGIN IMMEDIATE")
    for number in range(turns):
        prompt = " ".join(rng.choices(vocab, weights, k=12))
        answer = " ".join(rng.choices(vocab, weights, k=80))
        artifact = json.loads(json.dumps(template))
        artifact["execution_id"] = f"bench-{number}"
        artifact["timestamp"] = start + number * 60
        artifact["input"]["prompt"] = prompt
        artifact["input"]["messages"][-1]["content"] = prompt
        artifact["output"]["content"] = answer
        model = models[number % 3]
        cursor = db.execute(
            "INSERT INTO turns (execution_id, time, day, model, backend, session, duration, "
            "tokens_in, tokens_out, finish_reason, relation, prompt) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                artifact["execution_id"],
                artifact["timestamp"],
                time.strftime("%Y-%m-%d", time.localtime(artifact["timestamp"])),
                model,
                "ollama",
                None if number % 4 else f"s{number % 50}",
                0.5,
                30,
                100,
                "stop",
                "root",
                excerpt(prompt),
            ),
        )
        db.execute(
            "INSERT INTO artifacts (id, document) VALUES (?, ?)",
            (cursor.lastrowid, json.dumps(artifact, separators=(",", ":"))),
        )
        db.execute(
            "INSERT INTO turns_text (rowid, prompt, answer) VALUES (?, ?, ?)",
            (cursor.lastrowid, prompt, answer),
        )
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return {"rare word": vocab[-1], "middling word": vocab[60], "common word": vocab[0]}


def reading(env: dict[str, str], home: Path, turns: int, runs: int) -> dict[str, object]:
    first = subprocess.run(
        [ORE, "--model", "llama3.2:latest", "template"], env=env, capture_output=True, check=True
    )
    assert first.returncode == 0
    template = json.loads(
        subprocess.run(
            [ORE, "log", "export"], env=env, capture_output=True, text=True, check=True
        ).stdout.splitlines()[0]
    )
    for name in ("log.db", "log.db-wal", "log.db-shm"):  # the write-ahead log stays between turns
        (home / name).unlink(missing_ok=True)
    started = time.perf_counter()
    words = build_log(home, turns, template)
    built = time.perf_counter() - started
    size = (home / "log.db").stat().st_size
    cases = {
        'python -c "import click"': [PY, "-c", "import click"],
        "ore --version (ore's own start-up)": [ORE, "--version"],
        "ore session list (no sessions)": [ORE, "session", "list"],
        "ore log list -n 20": [ORE, "log", "list", "-n", "20"],
        "ore log list -n 20 --model qwen2.5:0.5b": [
            ORE,
            "log",
            "list",
            "-n",
            "20",
            "--model",
            "qwen2.5:0.5b",
        ],
    }
    for what, word in words.items():
        cases[f"ore log search <{what}>"] = [ORE, "log", "search", word]
    cases["ore log search <two common words>"] = [
        ORE,
        "log",
        "search",
        f"{words['common word']} {words['middling word']}",
    ]
    cases["ore log usage"] = [ORE, "log", "usage"]
    timed = measure(cases, env, runs)
    return {"turns": turns, "build seconds": built, "file bytes": size, **timed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--turn-runs", type=int, default=201, help="rounds of whole turns")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--part", choices=("all", "logging", "reading", "instructions"), default="all"
    )
    parser.add_argument(
        "--stderr",
        choices=("both", "terminal", "pipe"),
        default="both",
        help="whole turns with stderr at a terminal, into a pipe, or both (the default)",
    )
    args = parser.parse_args()

    server, url = start_server("fake_ollama.py")
    home = Path(tempfile.mkdtemp(prefix="ore-log-bench-"))
    env = clean_env(OLLAMA_HOST=url, ORE_HOME=str(home), HOME=str(home), NO_COLOR="1")
    try:
        results: dict[str, object] = {"load average": os.getloadavg()}
        if args.part in ("all", "logging"):
            ways = ("terminal", "pipe") if args.stderr == "both" else (args.stderr,)
            results["logging"] = logging_cost(env, args.turn_runs, args.runs, ways)
        if args.part in ("all", "reading"):
            results["reading"] = reading(env, home, args.turns, args.runs)
        if args.part == "instructions":
            results["logging"] = instructions(env)
        results["load average after"] = os.getloadavg()
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(home, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"load average {results['load average']}, after {results['load average after']}")
    for part in ("logging", "reading"):
        for name, value in results.get(part, {}).items():  # type: ignore[union-attr]
            if name.endswith("seconds"):
                shown = f"{value:8.1f} s"
            elif isinstance(value, float):
                shown = f"{value * 1000:8.1f} ms"
            else:
                shown = f"{value}"
            print(f"{part:8} {name:48} {shown}")


if __name__ == "__main__":
    main()
