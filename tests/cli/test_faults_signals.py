"""SIGTERM and SIGHUP end ORE as cleanly as Ctrl-C does (issue 26, item 2): at a terminal the
modes readline set are undone and a cursor the live view hid is shown again, nothing is left
half-written, and the exit code is 128 + N, as a shell reports a signal."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path

import pytest
from _cli import ORE, needs_ore

pytestmark = needs_ore

SHOW_CURSOR = b"\x1b[?25h"
HIDE_CURSOR = b"\x1b[?25l"
ENDING = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGHUP, id="SIGHUP")]


def terminal_env(ore_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in ore_env.items() if k not in ("NO_COLOR", "COLORTERM", "FORCE_COLOR")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "40"}


class Terminal:
    """`ore ARGS` on a pseudo-terminal whose slave end the test keeps open, so its modes can be
    read before ORE starts, while it runs and after it ended."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.master, self.slave = pty.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
        self.before = termios.tcgetattr(self.slave)
        self.shown = bytearray()
        self.proc = subprocess.Popen(
            [ORE or "ore", *args],
            stdin=self.slave,
            stdout=self.slave,
            stderr=self.slave,
            env=env,
            start_new_session=True,
        )

    def modes(self) -> list[object]:
        return termios.tcgetattr(self.slave)

    def read_until(self, wanted: bytes, timeout: float = 20) -> None:
        """Read what ORE shows until `wanted` appears in it."""
        deadline = time.monotonic() + timeout
        while wanted not in self.shown and time.monotonic() < deadline:
            self._read(0.1)
        assert wanted in self.shown, bytes(self.shown)

    def end(self, signum: int, timeout: float = 20) -> int:
        """Send `signum` to ORE, read what it shows until it exits; its exit code."""
        os.kill(self.proc.pid, signum)
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.1)
        self._read(0.1)
        return self.proc.wait(timeout=5)

    def _read(self, wait: float) -> None:
        ready, _, _ = select.select([self.master], [], [], wait)
        if ready:
            with contextlib.suppress(OSError):
                self.shown += os.read(self.master, 65536)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)
        os.close(self.slave)


@pytest.fixture
def terminal():
    opened: list[Terminal] = []

    def start(args: list[str], env: dict[str, str]) -> Terminal:
        opened.append(Terminal(args, env))
        return opened[-1]

    yield start
    for each in opened:
        each.close()


@pytest.mark.invariant
@pytest.mark.parametrize("signum", ENDING)
def test_a_signal_at_the_repl_prompt_restores_the_terminal(
    fake_ollama, ore_env, terminal, signum
) -> None:
    term = terminal(["-c"], terminal_env(ore_env))
    term.read_until(b"> ")
    time.sleep(0.2)  # readline has the terminal now: raw, no echo
    during = term.modes()
    assert during[3] & termios.ECHO == 0 and during != term.before  # the test can see a change
    code = term.end(signum)
    assert code == 128 + signum
    assert term.modes() == term.before
    assert b"Traceback" not in term.shown


@pytest.mark.invariant
@pytest.mark.parametrize("signum", ENDING)
def test_a_signal_mid_stream_shows_the_cursor_and_keeps_nothing_half_saved(
    fake_ollama, ore_env, terminal, signum
) -> None:
    fake_ollama.reply = "# Heading\n\n" + "word " * 200
    fake_ollama.pace = 0.05  # ten seconds of answer
    term = terminal(["--save-session", "s", "tell me"], terminal_env(ore_env))
    term.read_until(b"word word")  # streaming, rendered
    code = term.end(signum)
    assert code == 128 + signum
    hidden = term.shown.rfind(HIDE_CURSOR)  # by a live view or a progress line, if either does
    assert hidden < 0 or term.shown.rfind(SHOW_CURSOR) > hidden, bytes(term.shown)
    assert term.modes() == term.before
    assert b"Traceback" not in term.shown
    sessions = Path(ore_env["ORE_HOME"]) / "sessions"
    assert not [p for p in sessions.glob("*") if p.name.startswith(".")]  # no temp file
    assert not (sessions / "s.json").exists()  # no empty session left behind


@pytest.mark.parametrize("signum", ENDING)
def test_a_signal_while_waiting_for_the_model_ends_ore_promptly(
    fake_ollama, ore_env, terminal, signum
) -> None:
    fake_ollama.delay = 20.0  # nothing arrives: whatever shows the wait is still showing it
    term = terminal(["--save-session", "w", "hi"], terminal_env(ore_env))
    deadline = time.monotonic() + 10
    while not fake_ollama.chat_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)
    started = time.monotonic()
    code = term.end(signum)
    assert code == 128 + signum and time.monotonic() - started < 5
    assert term.modes() == term.before
    hidden = term.shown.rfind(HIDE_CURSOR)
    assert hidden < 0 or term.shown.rfind(SHOW_CURSOR) > hidden
    assert b"Traceback" not in term.shown
    assert not (Path(ore_env["ORE_HOME"]) / "sessions" / "w.json").exists()


@pytest.mark.parametrize("signum", ENDING)
def test_a_signal_mid_reply_in_a_conversation_ends_it_and_restores_the_terminal(
    fake_ollama, ore_env, terminal, signum
) -> None:
    fake_ollama.reply = "word " * 200
    fake_ollama.pace = 0.05
    term = terminal(["-c", "--save-session", "c"], terminal_env(ore_env))
    term.read_until(b"> ")
    os.write(term.master, b"tell me\r")
    term.read_until(b"word word")
    code = term.end(signum)
    assert code == 128 + signum  # not "reply cancelled": the conversation ends
    assert b"cancelled" not in term.shown and b"Traceback" not in term.shown
    assert term.modes() == term.before
    assert not (Path(ore_env["ORE_HOME"]) / "sessions" / "c.json").exists()


@pytest.mark.parametrize("signum", ENDING)
def test_a_signal_in_a_pipe_exits_128_plus_n_without_a_traceback(
    fake_ollama, ore_env, signum
) -> None:
    fake_ollama.hang = 20.0
    proc = subprocess.Popen(
        [ORE or "ore", "hi"],
        env=ore_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 10
    while not fake_ollama.chat_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 128 + signum
    assert out == b"" and b"Traceback" not in err


def test_an_ignored_sighup_stays_ignored(fake_ollama, ore_env) -> None:
    """`nohup ore ...`: a hang-up is ignored, as the user asked."""
    fake_ollama.delay = 1.0
    proc = subprocess.Popen(
        ["nohup", ORE or "ore", "hi"],
        env=ore_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 10
    while not fake_ollama.chat_requests() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGHUP)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0 and out == b"echo: hi\n"


# -- the graph's forked workers ----------------------------------------------------------------


def _tree(root: Path, files: int = 3000) -> Path:
    """Enough Python files that a cold index forks workers and takes a while."""
    body = "".join(
        f"def f{j}(x):\n    return x + {j}\n\n\nclass C{j}:\n    pass\n" for j in range(40)
    )
    root.mkdir()
    for i in range(files):
        (root / f"m{i}.py").write_text(f"import m{(i + 1) % files}\n{body}", encoding="utf-8")
    return root


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(n) for n in text.split()]


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting for a reaper is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: no worker is forked")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_graphs_workers_end_with_their_parent(ore_env, tmp_path, signum) -> None:
    root = _tree(tmp_path / "proj")
    proc = subprocess.Popen(
        [ORE or "ore", "graph", "top-files", "--root", str(root)],
        env=ore_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    workers: list[int] = []
    while not workers and proc.poll() is None and time.monotonic() < deadline:
        workers = _children(proc.pid)
        time.sleep(0.01)
    if not workers:
        proc.kill()
        pytest.skip("the index finished before a worker could be seen (a fast machine)")
    os.kill(proc.pid, signum)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == (-signum if signum == signal.SIGKILL else 128 + signum)
    assert b"Traceback" not in err
    deadline = time.monotonic() + 10
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(_running, workers)), workers
