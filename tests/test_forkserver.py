"""The fork server the CLI tests run `ore` through (tests/_forkserver.py) gives a script what a
fresh process gives it: the same argv, sys.path, working folder, environment, umask, open
descriptors, standard streams, and the same exit status and output for each way a script ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _forkserver import ForkServer

#: One script for every case: argv[1] names what it does.
SCRIPT = """
import sys
CASES = {
    "probe": PROBE,
    "exit-0": "import sys; print('out'); sys.exit()",
    "exit-3": "import sys; sys.stderr.write('err\\n'); sys.exit(3)",
    "exit-text": "import sys; sys.exit('a message')",
    "exception": "raise ValueError('boom')",
    "thread-and-atexit": THREAD,
    "keyboard-interrupt": "raise KeyboardInterrupt",
    "unflushed": "import sys; sys.stdout.write('no newline, never flushed')",
    "slow": "import time; time.sleep(60)",
}
exec(CASES[sys.argv[1]])
"""

PROBE = """
import json, os, sys
print(json.dumps({
    "argv": sys.argv,
    "path0": sys.path[0],
    "cwd": os.getcwd(),
    "env": dict(os.environ),
    "umask": os.umask(0o077),
    "fds": sorted(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None,
    "streams": [
        (s.encoding, s.errors, s.line_buffering, s.isatty(), s.seekable())
        for s in (sys.stdin, sys.stdout, sys.stderr)
    ],
    "stdin": sys.stdin.read(),
    "main": __name__,
}))
"""

THREAD = """
import atexit, threading, time
atexit.register(print, 'at exit')
threading.Thread(target=lambda: (time.sleep(0.2), print('thread done'))).start()
print('main done')
"""

ENDINGS = ["exit-0", "exit-3", "exit-text", "exception", "thread-and-atexit"]
ENDINGS += ["keyboard-interrupt", "unflushed"]


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("bin") / "probe"
    body = f"PROBE = {PROBE!r}\nTHREAD = {THREAD!r}\n{SCRIPT}"
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(0o755)
    return str(path)


@pytest.fixture(scope="module")
def server(script: str) -> Iterator[ForkServer]:
    server = ForkServer(script)
    yield server
    server.close()


def _both(
    server: ForkServer, args: list[str], env: dict[str, str], cwd: Path, data: bytes = b""
) -> tuple[subprocess.CompletedProcess[bytes], subprocess.CompletedProcess[bytes]]:
    assert server.usable(env)
    forked = server.run(args, env=env, input=data, cwd=str(cwd), timeout=30)
    spawned = subprocess.run(
        [server.script, *args], input=data, capture_output=True, env=env, cwd=cwd, timeout=30
    )
    return forked, spawned


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "PROBE_SETTING": "ä ünïcode", "TZ": "UTC"}


def test_a_forked_run_starts_as_a_fresh_process(server: ForkServer, tmp_path: Path) -> None:
    forked, spawned = _both(
        server, ["probe", "two words"], _env(tmp_path), tmp_path, "piped ✓\n".encode()
    )
    assert forked.returncode == spawned.returncode == 0, forked.stderr + spawned.stderr
    assert forked.stderr == spawned.stderr == b""
    assert json.loads(forked.stdout) == json.loads(spawned.stdout)


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_forked_run_ends_as_a_fresh_process_does(
    server: ForkServer, tmp_path: Path, ending: str
) -> None:
    forked, spawned = _both(server, [ending], _env(tmp_path), tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        spawned.returncode,
        spawned.stdout,
        spawned.stderr,
    )


def test_a_run_whose_startup_settings_differ_is_not_forked(server: ForkServer) -> None:
    assert server.usable(dict(os.environ))
    assert not server.usable({**os.environ, "PYTHONIOENCODING": "latin-1"})
    assert not server.usable({**os.environ, "LC_ALL": "C"})


def test_a_run_past_its_time_limit_is_killed_as_subprocess_run_does(server: ForkServer) -> None:
    env = dict(os.environ)
    assert server.usable(env)
    with pytest.raises(subprocess.TimeoutExpired):
        server.run(["slow"], env=env, input=b"", cwd=None, timeout=0.5)
    after = server.run(["exit-0"], env=env, input=b"", cwd=None, timeout=30)
    assert (after.returncode, after.stdout) == (0, b"out\n")  # the server still serves
