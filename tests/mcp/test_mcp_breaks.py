"""Three breaks an outside tester found in `ore mcp` (issue 24), each driven through a real
`ore mcp` process: a file name that is not UTF-8 (the SDK cannot encode a lone surrogate), a
signal while a call is under way (its answer must still be written), and a client that closes
stdin right after its requests (each still answered)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from ore.cli.graph import graph

ORE = Path(sys.executable).with_name("ore")
#: `café.py` written in Latin-1: the byte 0xe9 is not UTF-8, held as the surrogate U+DCE9.
CAFE = os.fsdecode(b"caf\xe9.py")

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "breaks", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def _call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def _serve(root: Path, home: Path, body: Any) -> Any:
    async def main() -> Any:
        params = StdioServerParameters(
            command=str(ORE), args=["mcp", "--root", str(root)], env={"ORE_HOME": str(home)}
        )
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                with anyio.fail_after(30):  # a server that died would leave the client waiting
                    return await body(session)

    return anyio.run(main)


def _cli_json(root: Path, home: Path, *args: str) -> Any:
    result = CliRunner(env={"ORE_HOME": str(home)}).invoke(
        graph, [*args, "--root", str(root), "--json"]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.invariant
@pytest.mark.skipif(shutil.which("git") is None, reason="the repro is a git repository")
def test_a_file_name_that_is_not_utf8_is_answered_as_the_cli_json_shows_it(
    tmp_path: Path,
) -> None:
    root, home = tmp_path / "r", tmp_path / "home"
    root.mkdir()
    (root / CAFE).write_text("def f():\n    return 1\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "x"]):
        subprocess.run([*git, *step], cwd=root, check=True, capture_output=True)
    cases: dict[str, tuple[dict[str, Any], list[str]]] = {
        "files": ({}, ["files"]),
        "top_files": ({}, ["top-files"]),
        "find_symbol": ({"name": "f"}, ["symbol", "f"]),
        "search": ({"query": "return"}, ["search", "return"]),
        "communities": ({}, ["communities"]),
        "signature": ({}, ["signature"]),
        "conventions": ({}, ["conventions"]),
    }
    expected = {name: _cli_json(root, home, *cli) for name, (_a, cli) in cases.items()}
    assert expected["top_files"][0]["path"] == "caf\\xe9.py"  # the CLI's escape: `\xNN`

    async def body(session: ClientSession) -> Any:
        got: dict[str, Any] = {}
        for name, (args, _cli) in cases.items():
            result = await session.call_tool(name, args)
            assert not result.is_error, (name, result.content)
            assert result.structured_content is not None
            assert json.loads(result.content[0].text) == result.structured_content["result"]
            got[name] = result.structured_content["result"]
        missing = await session.call_tool("get_context", {"file": "cafe.py", "line": 1})
        got["error"] = (missing.is_error, missing.content[0].text)
        shown = {"file": "caf\\xe9.py", "line": 1}  # the name as results show it, given back
        got["get_context"] = (await session.call_tool("get_context", shown)).structured_content
        return got

    got = _serve(root, home, body)
    for name in cases:
        assert got[name] == expected[name], name
    is_error, text = got["error"]  # an error naming the file: the same escape
    assert is_error and "caf\\xe9.py" in text, text
    context = _cli_json(root, home, "context", CAFE, "--line", "1")
    assert got["get_context"] == {"result": context}
    assert context["path"] == "caf\\xe9.py" and "return 1" in context["chunks"][0]["text"]


def _big_tree(root: Path, files: int = 60) -> None:
    """A tree on which `duplicates` at its smallest windows takes a while (a second or so)."""
    for n in range(files):
        body = "".join(
            f"def f{n}_{k}(a, b):\n    c = a + b * {k}\n    d = c - a\n    return d * {n}\n\n"
            for k in range(60)
        )
        (root / f"m{n}.py").write_text(body)


def _spawn(root: Path, home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(ORE), "mcp", "--root", str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ORE_HOME": str(home)},
    )


def _replies(out: bytes) -> dict[int, dict[str, Any]]:
    return {m["id"]: m for m in map(json.loads, out.decode().splitlines()) if "id" in m}


def _ended(proc: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, bytes]:
    """stdout and stderr read to their ends while the process ends, its stdin left open:
    `communicate()` would close stdin at once, and the server could then end on the end of its
    input (exit 0) before its signal task ran."""
    import threading

    read: dict[str, bytes] = {}

    def drain(name: str, stream: Any) -> None:
        read[name] = stream.read()

    threads = [
        threading.Thread(target=drain, args=("out", proc.stdout), daemon=True),
        threading.Thread(target=drain, args=("err", proc.stderr), daemon=True),
    ]
    for thread in threads:
        thread.start()
    proc.wait(timeout=timeout)
    for thread in threads:
        thread.join(timeout=10)
    return read.get("out", b""), read.get("err", b"")


@pytest.mark.invariant
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_during_a_call_ends_the_server_after_its_answer_is_written(
    tmp_path: Path, signum: int, code: int
) -> None:
    root, home = tmp_path / "r", tmp_path / "home"
    root.mkdir()
    _big_tree(root)
    proc = _spawn(root, home)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(_line(HELLO) + _line(INITIALIZED) + _line(_call(2, "stats", {})))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    assert json.loads(proc.stdout.readline())["id"] == 2  # indexed: the next call is the slow one
    proc.stdin.write(_line(_call(3, "duplicates", {"min_lines": 2, "min_tokens": 1})))
    proc.stdin.flush()
    time.sleep(0.3)
    proc.send_signal(signum)  # stdin stays open: the signal alone ends the server
    try:
        out, err = _ended(proc, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    assert proc.returncode == code, err
    assert b"Traceback" not in err, err
    reply = _replies(out)[3]
    assert "error" not in reply and not reply["result"].get("isError"), reply
    assert reply["result"]["structuredContent"]["result"]  # the answer itself, whole


@pytest.mark.invariant
def test_a_client_that_closes_stdin_after_its_requests_gets_every_answer(tmp_path: Path) -> None:
    root, home = tmp_path / "r", tmp_path / "home"
    root.mkdir()
    _big_tree(root)
    requests = [
        _call(2, "duplicates", {"min_lines": 2, "min_tokens": 1}),
        _call(3, "top_files", {"limit": 2}),
        _call(4, "find_symbol", {"name": "f1_1"}),
    ]
    piped = _line(HELLO) + _line(INITIALIZED) + b"".join(map(_line, requests))
    done = subprocess.run(  # `printf '...' | ore mcp`: stdin ends right after the requests
        [str(ORE), "mcp", "--root", str(root)],
        input=piped,
        capture_output=True,
        timeout=120,
        env={**os.environ, "ORE_HOME": str(home)},
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    replies = _replies(done.stdout)
    assert sorted(replies) == [1, 2, 3, 4], done.stdout[-500:]
    for n in (2, 3, 4):
        assert replies[n]["result"]["structuredContent"]["result"], replies[n]


@pytest.mark.invariant
def test_a_second_signal_ends_the_server_at_once(tmp_path: Path) -> None:
    root, home = tmp_path / "r", tmp_path / "home"
    root.mkdir()
    _big_tree(root, files=120)  # a call of a few seconds: the second signal must not wait for it
    proc = _spawn(root, home)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(_line(HELLO) + _line(INITIALIZED) + _line(_call(2, "stats", {})))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    assert json.loads(proc.stdout.readline())["id"] == 2
    proc.stdin.write(_line(_call(3, "duplicates", {"min_lines": 2, "min_tokens": 1})))
    proc.stdin.flush()
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        out, _err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGTERM  # killed by the signal itself: no answer waited on
    assert time.monotonic() - start < 1.0
    assert 3 not in _replies(out)


def test_a_request_the_client_cancelled_is_not_waited_for_when_stdin_ends(tmp_path: Path) -> None:
    root, home = tmp_path / "r", tmp_path / "home"
    root.mkdir()
    _big_tree(root)
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "no longer needed"},
    }
    piped = b"".join(
        map(
            _line,
            [
                HELLO,
                INITIALIZED,
                _call(2, "duplicates", {"min_lines": 2, "min_tokens": 1}),
                cancel,
                _call(3, "top_files", {"limit": 2}),
            ],
        )
    )
    done = subprocess.run(
        [str(ORE), "mcp", "--root", str(root)],
        input=piped,
        capture_output=True,
        timeout=120,
        env={**os.environ, "ORE_HOME": str(home)},
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    replies = _replies(done.stdout)
    assert sorted(replies) == [
        1,
        3,
    ]  # the cancelled one is never answered (the spec), nor waited on
    assert replies[3]["result"]["structuredContent"]["result"]


@pytest.mark.invariant
def test_a_root_swapped_for_a_link_to_another_folder_is_never_read_through(
    tmp_path: Path,
) -> None:
    """The root is fixed when the server starts: the folder, not its path. Removed and put back
    as a symbolic link to a folder outside it, it is refused at the next call (`search`,
    `get_context`), and nothing of the other folder is answered."""
    root, outside, home = tmp_path / "R", tmp_path / "out", tmp_path / "home"
    root.mkdir()
    (root / "core.py").write_text("def f():\n    return 1\n")
    outside.mkdir()
    (outside / "core.py").write_text('SECRET_TOKEN = "xyz"\n')

    async def body(session: ClientSession) -> Any:
        assert not (await session.call_tool("stats", {})).is_error
        shutil.rmtree(root)
        root.symlink_to(outside, target_is_directory=True)
        found = await session.call_tool("search", {"query": "SECRET"})
        shown = await session.call_tool("get_context", {"file": "core.py", "line": 1})
        return found, shown

    for reply in _serve(root, home, body):
        text = reply.content[0].text
        assert reply.is_error, text
        assert "start the server again" in text and "SECRET" not in text
