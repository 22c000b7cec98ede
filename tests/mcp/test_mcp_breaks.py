"""Three breaks an outside tester found in `ore mcp` (issue 24), each driven through a real
`ore mcp` process: a file name that is not UTF-8 (the SDK cannot encode a lone surrogate), a
signal while a call is under way (its answer must still be written), and a client that closes
stdin right after its requests (each still answered)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
        return got

    got = _serve(root, home, body)
    for name in cases:
        assert got[name] == expected[name], name
    is_error, text = got["error"]  # an error naming the file: the same escape
    assert is_error and "caf\\xe9.py" in text, text
