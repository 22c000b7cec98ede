"""`ore mcp` driven by the MCP SDK's own client (`ClientSession` over `stdio_client`): the tool
list, every tool against `ore graph ... --json`, edits seen by the next call, bad arguments as
error results, and the server ending when its stdin closes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("mcp")

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from ore.cli.graph import graph
from ore.mcp.tools import TOOLS

ORE = Path(sys.executable).with_name("ore")

LOOP = """def total(items, rate):
    subtotal = 0
    for item in items:
        price = item.price * item.quantity
        if item.discount:
            price = price - price * item.discount
        subtotal = subtotal + price
    tax = subtotal * rate
    return round(subtotal + tax, 2)
"""

TREE = {
    "app/__init__.py": "",
    "app/models.py": (
        '"""Models."""\n\n\nclass User:\n    """A user."""\n\n    def __init__(self, name):\n'
        "        self.name = name\n\n\ndef load_user(name):\n    return User(name)\n"
    ),
    "app/views.py": (
        "from app.models import User, load_user\nfrom app import util\n\n\n"
        "def show(name):\n    return util.fmt(load_user(name))\n\n\n"
        "def make(name):\n    return User(name)\n"
    ),
    "app/util.py": "from app import views\n\n\ndef fmt(user):\n    return str(user)\n",
    "app/orders.py": "import json\n\n\n" + LOOP,
    "app/report.py": "X = 1\n\n\n" + LOOP,
}


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "orehome"))
    return tmp_path / "orehome"


@pytest.fixture
def proj(tmp_path: Path, home: Path) -> Path:
    return make_tree(tmp_path / "proj", TREE)


def cli_json(root: Path, *args: str) -> Any:
    """What `ore graph ARGS --root ROOT --json` prints."""
    result = CliRunner().invoke(graph, [*args, "--root", str(root), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


Session = Callable[[ClientSession], Awaitable[Any]]


def with_server(root: Path, home: Path, body: Session) -> Any:
    """Run `body` with a client session on `ore mcp --root ROOT`."""

    async def main() -> Any:
        params = StdioServerParameters(
            command=str(ORE),
            args=["mcp", "--root", str(root)],
            env={"ORE_HOME": str(home), "NO_COLOR": "1"},
        )
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await body(session)

    return anyio.run(main)


async def call(session: ClientSession, name: str, args: dict[str, Any]) -> Any:
    result = await session.call_tool(name, args)
    assert not result.is_error, (name, result.content)
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content["result"]
    return result.structured_content["result"]


def test_tools_are_the_table_with_schemas_and_descriptions(proj: Path, home: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = with_server(proj, home, body)
    assert [t.name for t in tools] == list(TOOLS)
    names = {t.name for t in tools}
    assert {"top_files", "dependents", "find_symbol", "duplicates", "get_context"} <= names
    for tool in tools:
        assert tool.description and "Read-only" in tool.description
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        for prop in schema["properties"].values():
            assert prop["description"] and prop["type"] in ("string", "integer", "boolean", "array")
        assert tool.annotations is not None and tool.annotations.read_only_hint is True


def test_every_tool_equals_the_cli_json(proj: Path, home: Path, tmp_path: Path) -> None:
    snippet = tmp_path / "draft.py"
    snippet.write_text(LOOP.replace("total", "grand_total"), encoding="utf-8")
    code = snippet.read_text(encoding="utf-8")
    cases: dict[str, tuple[dict[str, Any], list[str]]] = {
        "stats": ({}, ["stats"]),
        "top_files": ({}, ["top-files"]),
        "hits": ({"limit": 3}, ["hits", "--limit", "3"]),
        "communities": ({}, ["communities"]),
        "find_symbol": ({"name": "User"}, ["symbol", "User"]),
        "dependents": ({"file": "app/models.py"}, ["dependents", "app/models.py"]),
        "dependencies": (
            {"file": "views.py", "depth": 2},
            ["dependencies", "views.py", "--depth", "2"],
        ),
        "search": ({"query": "def ", "limit": 4}, ["search", "def ", "--limit", "4"]),
        "get_context": (
            {"file": "app/models.py", "line": 4, "window": 2},
            ["context", "app/models.py", "--line", "4", "--window", "2"],
        ),
        "path": (
            {"from": "app/util.py", "to": "app/models.py"},
            ["path", "app/util.py", "app/models.py"],
        ),
        "cycles": ({}, ["cycles"]),
        "duplicates": ({"min_lines": 4}, ["duplicates", "--min-lines", "4"]),
        "similar": ({"name": "load_user"}, ["similar", "load_user"]),
        "conventions": ({"topic": "naming"}, ["conventions", "naming"]),
        "consistent": (
            {"snippet": code, "language": "python"},
            ["consistent", "--snippet", str(snippet), "--lang", "python"],
        ),
        "place": ({"description": "load a user by name"}, ["place", "load a user by name"]),
        "signature": ({"level": "lean"}, ["signature", "--level", "lean"]),
        "files": ({"sort": "size"}, ["files", "--sort", "size"]),
    }
    assert set(cases) == set(TOOLS)
    cli_json(proj, "files")  # indexed: `stats` counts no file re-parsed, as the server's will
    expected = {name: cli_json(proj, *cli) for name, (_args, cli) in cases.items()}
    dup_expected = cli_json(proj, "duplicates", "--snippet", str(snippet))

    async def body(session: ClientSession) -> Any:
        got = {name: await call(session, name, args) for name, (args, _cli) in cases.items()}
        got["duplicates_snippet"] = await call(
            session, "duplicates", {"snippet": code, "language": "python"}
        )
        return got

    got = with_server(proj, home, body)
    for name in cases:
        assert got[name] == expected[name], name
    assert got["duplicates_snippet"] == dup_expected
    assert expected["duplicates"] and dup_expected  # the planted clone is found both ways
    assert expected["cycles"] and expected["path"]


def test_edits_additions_and_deletions_reach_the_next_call(proj: Path, home: Path) -> None:
    async def body(session: ClientSession) -> Any:
        seen = {"before": await call(session, "find_symbol", {"name": "Invoice"})}
        models = proj / "app" / "models.py"
        models.write_text(models.read_text() + "\n\nclass Invoice:\n    pass\n")
        seen["edited"] = await call(session, "find_symbol", {"name": "Invoice"})
        (proj / "app" / "extra.py").write_text("from app.models import Invoice\n")
        seen["added"] = await call(session, "dependents", {"file": "app/models.py"})
        (proj / "app" / "report.py").unlink()
        seen["deleted"] = await call(session, "files", {"sort": "path"})
        seen["dups"] = await call(session, "duplicates", {"min_lines": 4})
        return seen

    seen = with_server(proj, home, body)
    assert not [m for m in seen["before"] if m["exact"]]
    first = seen["edited"][0]
    assert (first["path"], first["exact"]) == ("app/models.py", True)
    assert "app/extra.py" in [n["path"] for n in seen["added"]]
    paths = [f["path"] for f in seen["deleted"]]
    assert "app/report.py" not in paths and "app/extra.py" in paths
    assert seen["dups"] == cli_json(proj, "duplicates", "--min-lines", "4") == []


@pytest.mark.invariant
def test_bad_arguments_are_error_results(proj: Path, home: Path) -> None:
    bad = [
        ("nope", {}),
        ("top_files", {"limit": "ten"}),
        ("top_files", {"limit": 0}),
        ("top_files", {"colour": "red"}),
        ("dependents", {}),
        ("dependents", {"file": "app/missing.py"}),
        ("get_context", {"file": "/etc/passwd", "line": 1}),
        ("get_context", {"file": "../outside.py", "line": 1}),
        ("get_context", {"file": "app/models.py", "line": 10_000}),
        ("similar", {"mode": "colour", "name": "x"}),
        ("duplicates", {"exclude_tests": "maybe"}),
        ("conventions", {"paths": "app"}),
    ]
    (proj.parent / "outside.py").write_text("SECRET = 1\n")

    async def body(session: ClientSession) -> Any:
        out = []
        for name, args in bad:
            result = await session.call_tool(name, args)
            out.append((name, result.is_error, result.content[0].text))
        out.append(("after", False, json.dumps(await call(session, "stats", {}))))
        return out

    results = with_server(proj, home, body)
    for name, is_error, text in results[:-1]:
        assert is_error, (name, text)
        assert text and "\n" not in text and "Traceback" not in text and "SECRET" not in text
    assert json.loads(results[-1][2])["files"] == len(TREE)  # the server is still answering


@pytest.mark.invariant
def test_closing_stdin_ends_the_server(proj: Path, home: Path) -> None:
    env = {**os.environ, "ORE_HOME": str(home)}
    proc = subprocess.Popen(
        [str(ORE), "mcp", "--root", str(proj)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(hello) + "\n").encode())
    proc.stdin.flush()
    reply = json.loads(proc.stdout.readline())
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "ore"
    start = time.monotonic()
    proc.stdin.close()
    code = proc.wait(timeout=20)
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    assert code == 0 and b"Traceback" not in err, err
    assert time.monotonic() - start < 20


def test_a_bad_root_or_no_sdk_is_one_line(tmp_path: Path, home: Path) -> None:
    done = subprocess.run(
        [str(ORE), "mcp", "--root", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("Error: root ") and done.stderr.count("\n") == 1
    hide = "import sys; sys.modules['mcp'] = None; from ore.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", hide, "mcp", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "Error: ore mcp needs the MCP SDK; pip install 'ore[mcp]'\n"
