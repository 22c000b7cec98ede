"""Running the installed `ore` command in tests: one way, shared by every CLI test file.

`run_ore` runs it as a process of its own through tests/_forkserver.py, which saves each run
the imports of the libraries ORE uses (the docstring there says what stays the same as a fresh
`ore` and when a run is spawned afresh instead; `ORE_TESTS_SPAWN=1` spawns every run)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from _forkserver import ForkServer

__all__ = ["ORE", "needs_ore", "one_line_error", "run_in_pty", "run_ore", "spawn_in_pty"]

#: The `ore` installed next to this interpreter (the venv under test), else the one on PATH.
ORE = shutil.which("ore", path=os.path.dirname(sys.executable)) or shutil.which("ore")

#: `pytestmark = needs_ore` skips a module when the command is not installed.
needs_ore = pytest.mark.skipif(ORE is None, reason="the ore command is not installed")

#: This test process's fork server for `ore` (started by the first run that can use it);
#: none when ORE_TESTS_SPAWN=1, to spawn every run afresh.
_SERVER = ForkServer(ORE) if ORE is not None and os.environ.get("ORE_TESTS_SPAWN") != "1" else None


def run_ore(
    *args: str,
    env: dict[str, str],
    input: bytes | str = b"",
    cwd: Path | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    """`ore ARGS...` as a subprocess with `input` on stdin; stdout and stderr as text."""
    data = input.encode() if isinstance(input, str) else input
    if _SERVER is not None and _SERVER.usable(env):
        result = _SERVER.run(
            list(args), env=env, input=data, cwd=None if cwd is None else str(cwd), timeout=timeout
        )
    else:
        result = subprocess.run(
            [ORE or "ore", *args],
            input=data,
            capture_output=True,
            env=env,
            cwd=cwd,
            timeout=timeout,
        )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def usage_error(result: subprocess.CompletedProcess[str]) -> str:
    """The `Error: ...` line of a usage mistake: exit 2, click's `Usage:` shape, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[0].startswith("Usage: ore") and lines[1].startswith("Try 'ore"), result.stderr
    assert len(lines) == 3 and lines[2].startswith("Error: "), result.stderr
    return lines[2]


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The single stderr line of a failed run (and proof there is no traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


#: The waiting spinner's frames (`ore.cli.progress`): drawn at a terminal only while a reply
#: takes longer than a moment, which a loaded machine can make any reply take.
_PROGRESS = re.compile(
    rb"(?:\r\x1b\[K[^\s]{1,3} (?:waiting for the model|indexing \d+/\d+ files) \d+s)+"
    rb"\r\x1b\[K"
)


def without_progress(shown: bytes) -> bytes:
    """What a terminal showed, without the waiting spinner's frames and their erasing (for
    tests of exact bytes, which must not depend on how loaded the machine is)."""
    return _PROGRESS.sub(b"", shown)


def spawn_in_pty(
    args: list[str], env: dict[str, str], columns: int = 100, *, owner: bool = False
) -> tuple[subprocess.Popen[bytes], int]:
    """`ore ARGS` started with stdin, stdout and stderr on one pseudo-terminal (40 rows,
    `columns` wide, no \\n -> \\r\\n), in a session of its own; the process and the
    terminal's other end, which the caller reads, writes and closes. With `owner`, the
    terminal is the session's controlling terminal, as `ssh -t`, a tmux window or `script -c`
    start a command: its exit then hangs the terminal up (SIGHUP to the foreground group)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.ONLCR  # no \n -> \r\n: read back exactly what was written
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    proc = subprocess.Popen(
        [ORE or "ore", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
        preexec_fn=_own_terminal if owner else None,  # after the new session is made
    )
    os.close(slave)
    return proc, master


def _own_terminal() -> None:
    """In the child, its new session made: stdin's terminal becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def run_in_pty(
    args: list[str],
    env: dict[str, str],
    typed: Sequence[str] = (),
    timeout: float = 30,
    columns: int = 100,
) -> bytes:
    """`ore ARGS` with stdin, stdout and stderr on one pseudo-terminal (40 rows, `columns` wide); each of `typed`
    is typed after the output so far has gone quiet. Returns everything ORE wrote."""
    proc, master = spawn_in_pty(args, env, columns)
    out = bytearray()
    pending = list(typed)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.3)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif pending:
                os.write(master, (pending.pop(0) + "\r").encode())
            elif proc.poll() is not None:
                break
        proc.wait(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return bytes(out)
