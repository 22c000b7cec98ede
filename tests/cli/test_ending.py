"""How the `ore` program ends (ore.cli.ending): at a terminal a one-shot turn gives its exit
status before its log record is written, by a child that keeps stderr; readers of the log wait
for that child; into a pipe the record is written before the exit. Each test holds the log's
write lock from here, so the record's write is seen waiting, not raced."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from _cli import ORE, needs_ore, run_ore, spawn_in_pty, without_progress

from ore.log.writers import WRITERS_SUFFIX, hold, settle

pytestmark = needs_ore


@contextmanager
def log_locked(home: Path) -> Iterator[None]:
    """The turn log, its write lock held by this process (as another writer would)."""
    db = sqlite3.connect(home / "log.db", isolation_level=None, timeout=10)
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        db.execute("COMMIT")
        db.close()


def _terminal_turn(
    env: dict[str, str], prompt: str, *, under: tuple[str, ...] = ()
) -> tuple[subprocess.Popen[bytes], int]:
    """`ore PROMPT` with stdout a pipe and stderr a terminal (the pty's other end, returned),
    run by the command `under` when given (`unshare -pf`)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*under, ORE or "ore", "--model", "llama3.2:latest", prompt],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    return proc, master


def _drain(master: int, seconds: float, until: bytes | None = None) -> bytes:
    """What the terminal shows for `seconds`, or until it shows `until`."""
    out = bytearray()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and (until is None or until not in out):
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal closed it
                break
            if not chunk:
                break
            out += chunk
    return bytes(out)


@pytest.mark.invariant
def test_at_a_terminal_the_exit_status_does_not_wait_for_the_record(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    assert run_ore("--model", "llama3.2:latest", "first", env=ore_env).returncode == 0
    with log_locked(tmp_path):
        proc, master = _terminal_turn(ore_env, "second")
        out, _ = proc.communicate(timeout=8)  # the record waits up to 10 s behind the lock
        assert proc.returncode == 0
        assert out == b"echo: second\n"
        reader = subprocess.Popen(
            [ORE or "ore", "log", "list", "-n", "5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=ore_env,
        )
        time.sleep(0.5)
        assert reader.poll() is None, "a reader waits for the record still being written"
    listed, _ = reader.communicate(timeout=15)
    assert b"second" in listed and b"first" in listed
    _drain(master, 0.5)
    os.close(master)


@pytest.mark.invariant
def test_ctrl_c_or_a_hang_up_after_the_answer_does_not_cut_the_record_short(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    assert run_ore("--model", "llama3.2:latest", "first", env=ore_env).returncode == 0
    with log_locked(tmp_path):
        proc, master = _terminal_turn(ore_env, "second")
        proc.communicate(timeout=8)
        assert proc.returncode == 0
        for signum in (signal.SIGINT, signal.SIGHUP):  # to the turn's whole process group
            os.killpg(proc.pid, signum)
        time.sleep(0.3)
    listed = run_ore("log", "list", "-n", "5", env=ore_env)
    assert "second" in listed.stdout, listed.stderr
    _drain(master, 0.5)
    os.close(master)


#: Makes a forked child of `ore` slow to start (0.3 s in Python's after-fork hooks, before a
#: line of ORE's runs): a signal that reaches it in that time finds whatever it was born with.
SLOW_CHILD = "import os, time\nos.register_at_fork(after_in_child=lambda: time.sleep(0.3))\n"


@pytest.mark.invariant
def test_a_turn_whose_exit_hangs_up_its_terminal_is_still_logged(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    """`ssh -t host ore q`, a tmux window, `script -c 'ore q'`: `ore` owns its terminal, and
    its exit hangs the terminal up: the kernel sends SIGHUP to the foreground group, the
    record's child with it, within a millisecond. The child is born ignoring it (and Ctrl-C),
    so however slowly it starts, every turn is logged, and nothing but the answer is shown."""
    slow = tmp_path / "slow"
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(SLOW_CHILD)
    env = {**ore_env, "PYTHONPATH": str(slow)}
    turns = 3
    for number in range(turns):
        proc, master = spawn_in_pty(
            ["--model", "llama3.2:latest", f"owned {number}"], env, owner=True
        )
        shown = _drain(master, 10)  # until every holder of the terminal has closed it
        os.close(master)
        assert proc.wait(timeout=10) == 0
        assert without_progress(shown).strip() == f"echo: owned {number}".encode()
    settle(tmp_path / "log.db", 10.0)
    listed = run_ore("log", "list", "-n", "50", env=ore_env).stdout
    logged = {
        line.split("owned ")[1].split()[0] for line in listed.splitlines() if "owned " in line
    }
    assert logged == {str(number) for number in range(turns)}, listed


def _pid_namespaces() -> bool:
    """Whether this machine lets a test start a process as process 1 of a new PID namespace."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    try:
        done = subprocess.run([unshare, "-pf", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.mark.invariant
def test_process_1_of_a_pid_namespace_logs_its_turn_before_it_exits(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    """`docker run -it ... ore q`: `ore` is process 1 of its PID namespace, whose exit kills
    every process left in it; at a terminal too, the record is written before the exit."""
    if not _pid_namespaces():
        pytest.skip("this machine does not let a process start a PID namespace (unshare -pf)")
    proc, master = _terminal_turn(ore_env, "first of its kind", under=("unshare", "-pf"))
    out, _ = proc.communicate(timeout=30)
    _drain(master, 0.5)
    os.close(master)
    assert (proc.returncode, out) == (0, b"echo: first of its kind\n")
    listed = run_ore("log", "list", "-n", "5", env=ore_env)
    assert "first of its kind" in listed.stdout, listed.stderr


@pytest.mark.invariant
@pytest.mark.parametrize("stderr", ["pipe", "devnull", "file"])
def test_a_program_s_turn_is_logged_before_the_exit(
    ore_env: dict[str, str], tmp_path: Path, stderr: str
) -> None:
    """A pipe, a file or /dev/null on stderr is a program's: it may read `log.db` itself the
    moment `ore` exits, so the record is in by then."""
    assert run_ore("--model", "llama3.2:latest", "first", env=ore_env).returncode == 0
    sink: Any = {"pipe": subprocess.PIPE, "devnull": subprocess.DEVNULL}.get(stderr)
    if sink is None:
        sink = (tmp_path / "stderr.txt").open("wb")
    with log_locked(tmp_path):
        proc = subprocess.Popen(
            [ORE or "ore", "--model", "llama3.2:latest", "second"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=sink,
            env=ore_env,
        )
        time.sleep(1.0)
        assert proc.poll() is None, "the record is written before the exit status is given"
    out, err = proc.communicate(timeout=15)
    if stderr == "file":
        sink.close()
    assert (proc.returncode, out, err or b"") == (0, b"echo: second\n", b"")
    db = sqlite3.connect(f"file:{tmp_path / 'log.db'}?mode=ro", uri=True)
    assert [r[0] for r in db.execute("SELECT prompt FROM turns ORDER BY id")] == [
        "first",
        "second",
    ]
    db.close()


@pytest.mark.invariant
def test_a_record_written_after_the_exit_still_says_when_it_fails(
    ore_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "log.db").write_bytes(b"not a database at all " * 100)
    proc, master = _terminal_turn(ore_env, "hello")
    out, _ = proc.communicate(timeout=15)
    shown = _drain(master, 20, until=b"database")
    os.close(master)
    assert (proc.returncode, out) == (0, b"echo: hello\n")
    lines = [line for line in without_progress(shown).decode().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Warning: this turn is not logged: ")
    assert "not a readable SQLite database" in lines[0]
    assert (tmp_path / "log.db").read_bytes() == b"not a database at all " * 100


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_a_writers_lock_that_is_not_a_file_is_never_followed_nor_waited_on(
    tmp_path: Path, kind: str
) -> None:
    log = tmp_path / "log.db"
    lock = Path(f"{log}{WRITERS_SUFFIX}")
    target = tmp_path / "elsewhere"
    if kind == "symlink":
        lock.symlink_to(target)
    elif kind == "fifo":
        os.mkfifo(lock)
    else:
        lock.mkdir()
    assert hold(log) is None  # the record is then written before the exit
    started = time.monotonic()
    settle(log, 5.0)
    assert time.monotonic() - started < 1.0
    assert not target.exists()


def test_settle_waits_for_a_held_record_and_no_longer(tmp_path: Path) -> None:
    log = tmp_path / "log.db"
    held = hold(log)
    assert held is not None
    assert os.stat(f"{log}{WRITERS_SUFFIX}").st_mode & 0o777 == 0o600
    started = time.monotonic()
    settle(log, 0.3)  # a writer still at it: read what is there after the timeout
    assert 0.25 < time.monotonic() - started < 2.0
    os.close(held)
    started = time.monotonic()
    settle(log, 5.0)
    assert time.monotonic() - started < 0.5


PROGRAM_LEAVING_A_TEMP = """
import os, sys
from ore import _fs
from ore.cli import program
path = os.path.join(sys.argv[1], ".out.1.0123456789ab.tmp")
open(path, "w").close()
_fs._OUR_TEMPS.add(path)  # made by this process, never renamed


class TornDown:  # the interpreter's teardown would free it, and say so
    def __del__(self, _open=open, _path=os.path.join(sys.argv[1], "torn-down")):
        _open(_path, "w").close()


kept = TornDown()
sys.argv = ["ore", *sys.argv[2:]]
program()
"""


@pytest.mark.parametrize(("args", "code"), [(["--version"], 0), (["--no-such-flag"], 2)])
def test_the_program_ends_without_teardown_but_runs_its_exit_handlers(
    tmp_path: Path, args: list[str], code: int
) -> None:
    import sys

    done = subprocess.run(
        [sys.executable, "-c", PROGRAM_LEAVING_A_TEMP, str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == code, done.stderr
    assert not list(tmp_path.glob(".*.tmp")), "ore._fs's exit handler removed its temp file"
    assert not (tmp_path / "torn-down").exists(), "no teardown: objects are not freed one by one"
    assert (done.stdout != "") == (code == 0)  # --version's line was flushed before os._exit


@pytest.mark.invariant
def test_a_repl_turn_at_a_terminal_is_logged_before_the_next_prompt(
    ore_env: dict[str, str],
) -> None:
    proc, master = spawn_in_pty(["--model", "llama3.2:latest", "-c"], ore_env)
    try:
        _drain(master, 1.0)  # the banner and the first prompt
        os.write(master, b"first in the repl\r")
        shown = _drain(master, 20.0, until=b"echo: first in the repl")
        assert b"echo: first in the repl" in shown
        listed = run_ore("log", "list", "-n", "5", env=ore_env)  # the REPL still running
        assert proc.poll() is None
        assert "first in the repl" in listed.stdout, listed.stderr
        os.write(master, b"/exit\r")
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
