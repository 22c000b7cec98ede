"""An outside tester's pass over `ore mcp` (issue 24), each case a real `ore mcp` process: a
client that goes away without closing stdin first, files swapped for links out of the root or
for FIFOs between calls, and an empty folder."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ORE = Path(sys.executable).with_name("ore")

HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "outside", "version": "0"},
    },
}


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()


def test_a_client_that_stops_reading_ends_the_server_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    proc = subprocess.Popen(
        [str(ORE), "mcp", "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ORE_HOME": str(tmp_path / "home")},
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(_line(HELLO))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdout.close()  # the client crashed: its end of the server's stdout is gone
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "stats", "arguments": {}}}
    try:
        for n in range(2, 30):
            proc.stdin.write(_line({**call, "id": n}))
            proc.stdin.flush()
            time.sleep(0.1)
    except BrokenPipeError:
        pass  # the server is gone, as it should be
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    code = proc.wait(timeout=30)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert "Traceback" not in err and "Error" not in err, err
    assert code == 0


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
                return await body(session)

    return anyio.run(main)


def test_links_out_of_the_root_and_fifos_swapped_in_between_calls(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "app").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.py").write_text(
        'TOKEN = "hunter2"\n\n\ndef secret_fn():\n    return TOKEN\n'
    )
    (root / "app" / "util.py").write_text("def fmt(x):\n    return str(x)\n")
    (root / "app" / "views.py").write_text(
        "from app.util import fmt\n\n\ndef show(x):\n    return fmt(x)\n"
    )
    (root / "out").symlink_to(outside)
    util = root / "app" / "util.py"

    async def body(session: ClientSession) -> list[tuple[str, bool, str]]:
        seen: list[tuple[str, bool, str]] = []

        async def ask(name: str, args: dict[str, Any]) -> None:
            result = await session.call_tool(name, args)
            seen.append((name, bool(result.is_error), result.content[0].text))

        await ask("get_context", {"file": "app/util.py", "line": 1})
        util.unlink()
        util.symlink_to(outside / "secret.py")  # swapped for a link out of the root
        for file in (
            "app/util.py",
            "out/secret.py",
            "../outside/secret.py",
            str(outside / "secret.py"),
        ):
            await ask("get_context", {"file": file, "line": 1})
        await ask("find_symbol", {"name": "secret_fn"})
        await ask("search", {"query": "hunter2"})
        util.unlink()
        os.mkfifo(util)  # a FIFO at an indexed path: never opened, never waited on
        os.mkfifo(root / "app" / "new.py")
        await ask("stats", {})
        await ask("get_context", {"file": "app/views.py", "line": 1})
        return seen

    seen = _serve(root, tmp_path / "home", body)
    assert not seen[0][1] and "def fmt" in seen[0][2]
    for name, _, text in seen[1:]:
        assert "hunter2" not in text and "secret_fn" not in text, (name, text)
    assert all(is_error for _, is_error, _ in seen[1:5])
    stats = json.loads(seen[-2][2])
    assert stats["files"] == 1 and stats["skipped"] == {"not_a_file": 2}
    assert not seen[-1][1] and "def show" in seen[-1][2]


def test_every_tool_on_an_empty_folder_is_an_answer_or_one_line(tmp_path: Path) -> None:
    from ore.mcp.tools import TOOLS

    root = tmp_path / "empty"
    root.mkdir()
    needs = {
        "find_symbol": {"name": "x"},
        "dependents": {"file": "a.py"},
        "dependencies": {"file": "a.py"},
        "search": {"query": "x"},
        "get_context": {"file": "a.py", "line": 1},
        "path": {"from": "a.py", "to": "b.py"},
        "similar": {"name": "f"},
        "consistent": {"snippet": "def f():\n    return 1\n"},
        "place": {"description": "a parser"},
    }

    async def body(session: ClientSession) -> list[tuple[str, bool, str]]:
        out = []
        for name in TOOLS:
            result = await session.call_tool(name, needs.get(name, {}))
            out.append((name, bool(result.is_error), result.content[0].text))
        return out

    for name, is_error, text in _serve(root, tmp_path / "home", body):
        assert text and "Traceback" not in text, name
        if is_error:
            assert "\n" not in text, (name, text)
    assert sorted(os.listdir(root)) == []  # nothing written in the served folder


def test_a_context_window_too_wide_is_cut_around_the_line_with_a_note(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "big.py").write_text(
        "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(20_000))
    )

    async def body(session: ClientSession) -> Any:
        args = {"file": "big.py", "line": 30_001, "window": 1_000_000}
        return await session.call_tool("get_context", args)

    result = _serve(root, tmp_path / "home", body)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    assert "truncated" in result.structured_content["note"]
    (chunk,) = result.structured_content["result"]["chunks"]
    assert chunk["start"] < 30_001 < chunk["end"]
    assert "def f10000(x):" in chunk["text"]


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_ends_an_idle_server_at_once(tmp_path: Path, signum, code) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    proc = subprocess.Popen(
        [str(ORE), "mcp", "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ORE_HOME": str(tmp_path / "home")},
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        proc.stdin.write(_line(HELLO))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1  # serving, stdin still open
        proc.send_signal(signum)
        assert proc.wait(timeout=10) == code
        assert b"Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
