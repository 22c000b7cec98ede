"""The log's code loaded ahead (`ore.cli.log.load_ahead`): a logged turn loads `sqlite3`, the
log's writer and the artifact code in a thread of its own while the model answers, so that
after the answer only the record is left. A turn that is not logged starts no such thread and
loads none of it; what a logged turn records is the same with it or without it; the thread
is safe beside the main thread's own imports, quiet when it fails, and never holds up an exit
or a signal."""

from __future__ import annotations

import json
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests._cli import needs_ore

pytestmark = needs_ore

#: Runs `ore.cli.main(args)` in this process and says on stderr's last line which threads were
#: started and whether `sqlite3` was loaded. `ahead` false replaces the loading ahead by nothing.
PROBE = """
import json, sys, threading
started = []
_start = threading.Thread.start
def start(self):
    started.append(self.name)
    _start(self)
threading.Thread.start = start
args, ahead = json.loads(sys.argv[1]), json.loads(sys.argv[2])
if not ahead:
    import ore.cli.log
    ore.cli.log.load_ahead = lambda: None
from ore.cli import main
code = 0
try:
    main(args)
except SystemExit as exc:
    code = exc.code
print(json.dumps({"threads": started, "sqlite3": "sqlite3" in sys.modules, "code": code}),
      file=sys.stderr)
"""


def probe(
    env: dict[str, str], *args: str, ahead: bool = True
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args)), json.dumps(ahead)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done, json.loads(done.stderr.strip().splitlines()[-1])


def rows(home: Path) -> list[dict[str, Any]]:
    with closing(sqlite3.connect(home / "log.db")) as db:
        db.row_factory = sqlite3.Row
        found = db.execute(
            "SELECT turns.*, document FROM turns JOIN artifacts USING (id) ORDER BY id"
        ).fetchall()
        return [dict(row) for row in found]


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args",
    [("--no-log", "hi"), ("--dry-run", "hi"), ("--no-log", "--json", "hi")],
    ids=["no-log", "dry-run", "no-log json"],
)
def test_a_turn_not_logged_starts_no_thread_and_loads_no_sqlite3(ore_env, args) -> None:
    done, seen = probe(ore_env, "-m", "llama3.2", *args)
    assert seen["code"] in (0, None), done.stderr
    assert seen["threads"] == [] and seen["sqlite3"] is False, seen


def test_with_the_log_off_a_turn_starts_no_thread_and_loads_no_sqlite3(ore_env) -> None:
    done, seen = probe(ore_env, "log", "off")
    assert seen["code"] in (0, None), done.stderr
    done, seen = probe(ore_env, "-m", "llama3.2", "hi")
    assert "echo: hi" in done.stdout, done.stderr
    assert seen["threads"] == [] and seen["sqlite3"] is False, seen


def test_a_logged_turn_loads_the_log_ahead_in_one_thread(ore_env) -> None:
    done, seen = probe(ore_env, "-m", "llama3.2", "hi")
    assert done.stdout == "echo: hi\n", done.stderr
    assert seen["threads"] == ["ore-log-ahead", "ore-log-write"], seen
    assert rows(Path(ore_env["ORE_HOME"]))[-1]["prompt"] == "hi"


def test_a_repl_loads_it_ahead_once(ore_env) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(["-m", "llama3.2", "-c"]), "true"],
        capture_output=True,
        text=True,
        input="one\ntwo\nthree\n",
        env=ore_env,
        timeout=60,
    )
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen["threads"].count("ore-log-ahead") == 1, seen
    assert [r["prompt"] for r in rows(Path(ore_env["ORE_HOME"]))] == ["one", "two", "three"]


#: What differs between two turns of the same prompt: ids, times and durations.
VARYING = {"id", "execution_id", "time", "day", "duration", "timestamp", "duration_ms"}


def _same(value: Any) -> Any:
    """`value` (a row, the artifact in it) without what differs between two turns."""
    if isinstance(value, dict):
        return {k: _same(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [_same(v) for v in value]
    return value


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args",
    [(), ("--json",), ("--save-session", "s", "--system", "be brief")],
    ids=["plain", "json", "session"],
)
def test_loading_ahead_changes_nothing_a_logged_turn_records(ore_env, args) -> None:
    """The same turn with the log's code loaded ahead and without: the same columns and the
    same artifact (but its id and times), and the artifact `--artifact-out` writes."""
    home = Path(ore_env["ORE_HOME"])
    written = home / "turn.json"
    for ahead in (True, False):
        flags = [*args] if ahead or not args else [a if a != "s" else "s2" for a in args]
        done, seen = probe(
            ore_env, "-m", "llama3.2", "--artifact-out", str(written), *flags, "x y", ahead=ahead
        )
        assert seen["code"] in (0, None), done.stderr
        assert ("ore-log-ahead" in seen["threads"]) is ahead
        logged = json.loads(rows(home)[-1]["document"])
        assert logged == json.loads(written.read_text(encoding="utf-8"))
    first, second = ({**_same(r), "document": _same(json.loads(r["document"]))} for r in rows(home))
    if args and "--save-session" in args:
        assert (first.pop("session"), second.pop("session")) == ("s", "s2")
    assert first == second


#: The main thread imports what the thread loads, at once and in the other order, while the
#: thread is at it: Python's per-module locks make it wait, never load twice or half.
RACE = """
import sys
from ore.cli.log import load_ahead
load_ahead()
if sys.argv[1] == "log first":
    from ore.log import record
    from ore.artifacts import build_artifact
    import sqlite3
else:
    from ore.artifacts import build_artifact
    import sqlite3
    from ore.log import record
from ore.log import records, db
assert record is records.record and db.connect and callable(build_artifact)
import threading
for thread in threading.enumerate():
    if thread.name == "ore-log-ahead":
        thread.join()
print("ok")
"""


@pytest.mark.parametrize("order", ["log first", "artifacts first"])
def test_the_main_thread_importing_the_same_modules_meanwhile_is_safe(order) -> None:
    for _ in range(8):
        done = subprocess.run(
            [sys.executable, "-c", RACE, order], capture_output=True, text=True, timeout=60
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


#: Before the turn: `sqlite3` cannot be imported (as a Python built without it), or its import
#: sleeps (a slow disk) in the thread loading ahead only.
BROKEN = """
import sys, json, time, importlib.abc, importlib.machinery, threading
how = sys.argv[2]
class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "sqlite3":
            return None
        if how == "missing":
            raise ImportError("no module named sqlite3 (this test)")
        if threading.current_thread().name != "ore-log-ahead":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module
        def slow(module):  # under the module's own lock, as a real import runs
            time.sleep(30)
            run(module)
        spec.loader.exec_module = slow
        return spec
sys.meta_path.insert(0, Finder())
from ore.cli import main
main(json.loads(sys.argv[1]))
"""


def test_the_thread_failing_is_the_one_warning_line_and_the_answer_stays(ore_env) -> None:
    done = subprocess.run(
        [sys.executable, "-c", BROKEN, json.dumps(["-m", "llama3.2", "hi"]), "missing"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=ore_env,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, "echo: hi\n"), done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Warning: this turn is not logged: "), lines
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_a_signal_while_the_thread_still_loads_ends_ore_at_once(ore_env, signum) -> None:
    """The thread is stuck loading `sqlite3` (30 s): the answer is printed, the log's write
    waits for that module where a signal is heard, and SIGTERM or SIGHUP ends ORE at once."""
    proc = subprocess.Popen(
        [sys.executable, "-c", BROKEN, json.dumps(["-m", "llama3.2", "hi"]), "slow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=ore_env,
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 20)
    assert ready, "no answer on stdout"
    first = os.read(proc.stdout.fileno(), 65536)
    time.sleep(0.2)
    assert proc.poll() is None  # the write waits for the thread's import
    started = time.monotonic()
    proc.send_signal(signum)
    rest, err = proc.communicate(timeout=5)
    assert time.monotonic() - started < 3
    assert (first + rest).decode() == "echo: hi\n"
    assert proc.returncode == 128 + signum, err
    assert b"Traceback" not in err


def test_a_failed_turn_exits_at_once_with_the_thread_still_loading(ore_env) -> None:
    """The server refuses the turn while the thread sleeps in its import: the one error line,
    exit 1, no wait for the thread and nothing from it; no turn logged."""
    env = {**ore_env, "OLLAMA_HOST": "http://127.0.0.1:9"}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", BROKEN, json.dumps(["-m", "llama3.2", "hi"]), "slow"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=60,
    )
    assert time.monotonic() - started < 15
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("Error: ") and len(done.stderr.strip().splitlines()) == 1
    assert not (Path(ore_env["ORE_HOME"]) / "log.db").exists()
