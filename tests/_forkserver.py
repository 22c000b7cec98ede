"""Running the installed `ore` in a fresh process without paying its imports each time.

A CLI test runs `ore` hundreds of times, and most of each run is Python importing the same
third-party libraries (the `ollama` client and pydantic alone take ~0.17 s of a ~0.2 s run).
So each test process (each xdist worker) starts one helper, the fork server: an interpreter
that imports those libraries once (never ORE itself) and then, for each run, forks a child
that does what a freshly started `ore` does:

- stdin, stdout and stderr are the caller's pipes (fds 0, 1, 2) and no other descriptor is
  open; the working folder, umask and the whole environment are the caller's;
- `sys.argv` and `sys.path[0]` are the console script's, and the script itself (the installed
  `ore`) runs as `__main__`, so ORE is imported afresh, in the child, with its environment;
- the exit is Python's: `SystemExit`'s code, a traceback and 1 for an uncaught error, non-daemon
  threads joined, `atexit` run, stdout flushed (120 when that fails), death by SIGINT after an
  uncaught KeyboardInterrupt.

What differs from a fresh interpreter is only what was decided at its start-up: the libraries
already in `sys.modules`, and the interpreter's own settings. So a run whose environment
differs from the server's in a start-up setting (PYTHON*, LANG, LC_*, NETWORKX_*) is spawned
afresh instead, as is every run when `ORE_TESTS_SPAWN=1`. Tests about the process itself
(signals, ptys, closed pipes, what gets imported, `python -m ore`) start `ore` themselves.

This file is both sides: `ForkServer` is the client the tests use (tests/_cli.py), and run as a
script it is the server.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import selectors
import socket
import struct
import subprocess
import sys
import time
from typing import Any

__all__ = ["ForkServer", "startup_env"]

#: Imported once by the server: what `ore` imports that ORE does not own.
PRELOAD = ("click", "httpx", "ollama", "yaml", "jsonschema", "networkx")
#: Environment settings a Python process (or a preloaded library) reads when it starts.
STARTUP_PREFIXES = ("PYTHON", "LC_", "NETWORKX_")
STARTUP_NAMES = ("LANG", "LANGUAGE")

_HEADER = struct.Struct("!I")


def startup_env(env: dict[str, str]) -> dict[str, str]:
    """The part of `env` a process reads when it starts, before ORE runs."""
    return {k: v for k, v in env.items() if k.startswith(STARTUP_PREFIXES) or k in STARTUP_NAMES}


def _send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    payload = json.dumps(message).encode()
    header = _HEADER.pack(len(payload))
    if fds:
        socket.send_fds(sock, [header], fds)
    else:
        sock.sendall(header)
    sock.sendall(payload)


def _recv_exactly(sock: socket.socket, size: int, data: bytes = b"") -> bytes:
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise EOFError("the fork server went away")
        data += chunk
    return data


def _recv(sock: socket.socket, maxfds: int = 0) -> tuple[dict[str, Any], list[int]]:
    fds: list[int] = []
    if maxfds:
        data, fds, _flags, _addr = socket.recv_fds(sock, _HEADER.size, maxfds)
        if not data:
            raise EOFError("the fork server went away")
    else:
        data = b""
    header = _recv_exactly(sock, _HEADER.size, data)
    (size,) = _HEADER.unpack(header)
    return json.loads(_recv_exactly(sock, size)), fds


# -- the client ------------------------------------------------------------------------------


class ForkServer:
    """One fork server for `script` (the installed `ore`), started on first use."""

    def __init__(self, script: str) -> None:
        self.script = script
        self.proc: subprocess.Popen[bytes] | None = None
        self.sock: socket.socket | None = None
        self.env: dict[str, str] = {}
        self.broken = False

    def usable(self, env: dict[str, str]) -> bool:
        if self.broken:
            return False
        if self.sock is None:
            self._start()
        return not self.broken and startup_env(env) == self.env

    def _start(self) -> None:
        with open(self.script, encoding="utf-8", errors="replace") as f:
            first = f.readline()
        interpreter = first[2:].strip() if first.startswith("#!") else sys.executable
        if not os.path.isabs(interpreter) or " " in interpreter:
            self.broken = True  # `#!/usr/bin/env python` and the like: spawn afresh
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ORE_", "OLLAMA_"))}
        self.proc = subprocess.Popen(
            [interpreter, os.path.abspath(__file__), str(theirs.fileno()), self.script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=[theirs.fileno()],
            env=env,
        )
        theirs.close()
        self.sock = ours
        atexit.register(self.close)
        try:
            hello, _ = _recv(ours)
        except EOFError:
            self.broken = True
            raise RuntimeError(f"the fork server did not start: {self._stderr()}") from None
        if not hello.get("ok"):
            self.broken = True
            return
        self.env = hello["env"]

    def _stderr(self) -> str:
        if self.proc is None or self.proc.stderr is None:
            return ""
        self.proc.kill()
        return self.proc.stderr.read().decode(errors="replace")

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def run(
        self, args: list[str], *, env: dict[str, str], input: bytes, cwd: str | None, timeout: float
    ) -> subprocess.CompletedProcess[bytes]:
        """Like `subprocess.run([script, *args], input=..., capture_output=True, ...)`."""
        assert self.sock is not None
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        umask = os.umask(0o022)
        os.umask(umask)
        request = {
            "args": args,
            "env": env,
            "cwd": os.path.abspath(cwd) if cwd is not None else os.getcwd(),
            "umask": umask,
        }
        try:
            _send(self.sock, request, [in_r, out_w, err_w])
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        (started, _) = _recv(self.sock)
        pid = started["pid"]
        cmd = [self.script, *args]
        try:
            stdout, stderr, timed_out = _communicate(in_w, out_r, err_r, input, timeout)
        except BaseException:
            os.kill(pid, 9)
            _recv(self.sock)
            raise
        if timed_out:
            os.kill(pid, 9)
            _recv(self.sock)
            raise subprocess.TimeoutExpired(cmd, timeout, output=stdout, stderr=stderr)
        (ended, _) = _recv(self.sock)
        code = os.waitstatus_to_exitcode(ended["status"])
        return subprocess.CompletedProcess(cmd, code, stdout, stderr)


def _communicate(
    in_w: int, out_r: int, err_r: int, data: bytes, timeout: float
) -> tuple[bytes, bytes, bool]:
    """Write `data` to `in_w` (then close it) while reading `out_r` and `err_r` to their end."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    deadline = time.monotonic() + timeout
    offset = 0
    writing = bool(data)
    if not writing:
        os.close(in_w)
    try:
        with selectors.DefaultSelector() as selector:
            if writing:
                os.set_blocking(in_w, False)
                selector.register(in_w, selectors.EVENT_WRITE)
            selector.register(out_r, selectors.EVENT_READ)
            selector.register(err_r, selectors.EVENT_READ)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    return b"".join(chunks[out_r]), b"".join(chunks[err_r]), True
                for key, _events in selector.select(left):
                    if key.fd == in_w:
                        try:
                            offset += os.write(in_w, data[offset : offset + 65536])
                        except BrokenPipeError:
                            offset = len(data)  # the child stopped reading, as subprocess.run
                        if offset >= len(data):
                            selector.unregister(in_w)
                            os.close(in_w)
                            writing = False
                    elif chunk := os.read(key.fd, 65536):
                        chunks[key.fd].append(chunk)
                    else:
                        selector.unregister(key.fd)
    finally:
        if writing:
            os.close(in_w)
        os.close(out_r)
        os.close(err_r)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r]), False


# -- the server ------------------------------------------------------------------------------


def _serve(sock: socket.socket, script: str) -> None:
    # What a console script gets as sys.path[0]: its own folder (not this file's).
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    import importlib
    import site

    if site.ENABLE_USER_SITE:  # the user's site folder depends on HOME, which each run sets
        _send(sock, {"ok": False})
        return
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    _send(sock, {"ok": True, "env": startup_env(dict(os.environ))})
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    while True:
        try:
            request, fds = _recv(sock, maxfds=3)
        except (EOFError, ConnectionError):
            return
        pid = os.fork()
        if pid == 0:
            _child(request, fds, script)  # never returns
        for fd in fds:
            os.close(fd)
        _send(sock, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        _send(sock, {"status": status})


def _child(request: dict[str, Any], fds: list[int], script: str) -> None:
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1024)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        sys.argv = [script, *request["args"]]
    except BaseException as exc:  # the child must never return into the server's loop
        os.write(2, f"fork server: could not start ore: {exc!r}\n".encode())
        os._exit(127)
    os._exit(_run_as_main(script))


def _run_as_main(script: str) -> int:
    """Run `script` as `python script` would, and return the exit status Python would give."""
    import runpy
    import signal
    import threading
    import traceback

    code = 0
    interrupted = False
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        value = exc.code
        if value is None:
            code = 0
        elif isinstance(value, int):
            code = value
        else:
            with contextlib.suppress(Exception):
                print(value, file=sys.stderr)
            code = 1
    except KeyboardInterrupt as exc:
        _excepthook(exc, script)
        interrupted = True
        code = 1
    except BaseException as exc:
        _excepthook(exc, script)
        code = 1
    # Python's own shutdown, in its order: threads, atexit, then the standard streams.
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except Exception:
            if stream is sys.stdout:
                with contextlib.suppress(Exception):
                    sys.stderr.write(f"Exception ignored in: {stream!r}\n")
                    traceback.print_exc()
                    sys.stderr.flush()
            code = 120
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code


def _excepthook(exc: BaseException, script: str) -> None:
    """Print `exc` as a fresh process would: its traceback from the script's own frame on,
    without this module's and runpy's frames above it."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != script:
        tb = tb.tb_next
    if tb is not None:
        exc = exc.with_traceback(tb)
    sys.excepthook(type(exc), exc, exc.__traceback__)


if __name__ == "__main__":
    _serve(socket.socket(fileno=int(sys.argv[1])), sys.argv[2])
