"""One table of operations (`ore.graph.ops.OPS`) drives `ore graph ... --json`, the `codebase`
tool and the MCP tools, so they cannot drift.

Two checks. Every `ore graph` subcommand with `--json` answers through its OPS entry (the
answer replaced in the table shows up in the CLI's output). And the `--json` bytes of every
subcommand, for many argument combinations on a frozen fixture tree (one_table_tree.json), are
the bytes captured before the CLI moved onto the table (one_table_golden.json: a SHA-256 and a
length per command line). When the graph's answers change on purpose, write the file again:
`ORE_ONE_TABLE_WRITE=1 python -m pytest -n 0 tests/graph/test_one_table.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from ore.cli.graph import graph
from ore.graph import ops
from ore.graph.ops import OPS

HERE = Path(__file__).parent
TREE = json.loads((HERE / "one_table_tree.json").read_text(encoding="utf-8"))
GOLDEN = HERE / "one_table_golden.json"

#: `export --json` is the graph file format itself (`--format json`), not a query's answer.
NOT_A_QUERY = {"export"}

#: Command lines (`{snip}` is the folder of the snippet files; `<name` pipes one to stdin).
COMMANDS: tuple[str, ...] = (
    "stats",
    "top-files",
    "top-files --limit 3",
    "hits",
    "hits --limit 2",
    "communities",
    "symbol find_user",
    "symbol summarize_orders --limit 1",
    "symbol nosuchname",
    "symbol get",
    "dependents shop/orders.py",
    "dependents orders.py --depth 3",
    "dependents shop/orders.py --depth 2 --limit 1",
    "dependencies billing/invoices.py --depth 2",
    "dependencies stock/levels.py",
    "dependencies web/app.js",
    "search def",
    "search Error --limit 3",
    "search nothing-here-at-all",
    "search return --by-file",
    "search return --by-file --limit 2",
    "context shop/orders.py --line 5",
    "context shop/orders.py --line 4 --line 12 --window 1",
    "context app/errors.py --line 1 --window 0",
    "path billing/invoices.py shop/orders.py",
    "path shop/orders.py billing/invoices.py",
    "path stock/levels.py stock/cycle.py",
    "cycles",
    "cycles --limit 1",
    "duplicates",
    "duplicates --limit 1",
    "duplicates shop",
    "duplicates shop tests",
    "duplicates --exclude-tests",
    "duplicates --min-lines 3 --min-tokens 5",
    "duplicates --min-lines 40",
    "duplicates --kind exact",
    "duplicates --kind renamed --kind structural",
    "duplicates --snippet {snip}/exact.py",
    "duplicates --snippet {snip}/exact.py --limit 1 --exclude-tests",
    "duplicates --snippet - <exact.py",
    "similar find_user",
    "similar get_user --mode signature",
    "similar summarize_orders --mode shape --limit 2",
    "similar find_user --include-context",
    "similar --snippet {snip}/good.py",
    "similar --snippet {snip}/bad.py --mode shape",
    "similar --snippet - --mode signature <good.py",
    "conventions",
    "conventions errors",
    "conventions naming --path app",
    "conventions imports --path app --path tests --include-context",
    "conventions tests",
    "consistent --snippet {snip}/good.py",
    "consistent --snippet {snip}/bad.py",
    "consistent --snippet {snip}/bad.py --criteria naming",
    "consistent --snippet {snip}/bad.py --with app --lang python",
    "consistent --snippet - --include-context <bad.py",
    "place 'find a user by id'",
    "place 'summarize orders in a currency' --limit 2",
    "place 'log errors' --snippet {snip}/bad.py",
    "place 'billing invoices' --include-context",
    "signature",
    "signature --level lean",
    "signature --level deep --max-tokens 300",
    "files",
    "files --language python --sort size",
    "files --sort path --limit 4",
    "files --language go",
    "files --language rust",
)


def _tree(base: Path) -> tuple[Path, Path]:
    root, snips = base / "proj", base / "snips"
    for rel, text in TREE["tree"].items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    snips.mkdir()
    for name, text in TREE["snippets"].items():
        (snips / name).write_text(text, encoding="utf-8")
    return root, snips


def _argv(line: str, root: Path, snips: Path) -> tuple[list[str], str | None]:
    import shlex

    words = shlex.split(line.replace("{snip}", str(snips)))
    stdin = None
    if words[-1].startswith("<"):
        stdin = (snips / words.pop()[1:]).read_text(encoding="utf-8")
    return [*words, "--root", str(root), "--json"], stdin


def _run(argv: list[str], stdin: str | None) -> tuple[int, str]:
    result = CliRunner().invoke(graph, argv, input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout


@pytest.fixture
def fixture_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "orehome"))
    return _tree(tmp_path)


@pytest.mark.invariant
def test_every_json_subcommand_is_an_op() -> None:
    with_json = {
        name
        for name, command in graph.commands.items()
        if any(p.name == "as_json" for p in command.params)
    }
    assert with_json - NOT_A_QUERY <= set(OPS), with_json - NOT_A_QUERY - set(OPS)
    assert set(OPS) - {"overview"} <= with_json  # and every op has its command
    assert {line.split()[0] for line in COMMANDS} == with_json - NOT_A_QUERY


class _Marker:
    """Stands for any op's answer (`hubs`: what `ore graph hits` looks at)."""

    hubs = ("a.py",)

    def to_dict(self) -> dict[str, Any]:
        return {"from": "the table"}


@pytest.mark.invariant
def test_the_json_comes_from_the_table(
    fixture_tree: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replace every op's answer in the table: each command line's --json is then the
    replacement, so no subcommand builds its own."""
    root, snips = fixture_tree
    table = dict(OPS)
    for name, op in OPS.items():
        table[name] = op._replace(answer=lambda g, a: _Marker())
    monkeypatch.setattr(ops, "OPS", table)
    for line in COMMANDS:
        code, out = _run(*_argv(line, root, snips))
        assert code == 0, line
        assert json.loads(out) == {"from": "the table"}, line


def _digest(out: str, root: Path, snips: Path) -> dict[str, Any]:
    text = out.replace(str(root), "<root>").replace(str(snips), "<snips>")
    data = text.encode("utf-8")
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_json_bytes_are_unchanged(fixture_tree: tuple[Path, Path]) -> None:
    root, snips = fixture_tree
    found = {}
    for line in COMMANDS:
        code, out = _run(*_argv(line, root, snips))
        found[line] = {"exit": code, **_digest(out, root, snips)}
    if os.environ.get("ORE_ONE_TABLE_WRITE"):
        GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    changed = [line for line in COMMANDS if found[line] != want.get(line)]
    assert not changed, changed


def test_usage_errors_stay_usage_errors(fixture_tree: tuple[Path, Path]) -> None:
    root, snips = fixture_tree
    for line in (
        "duplicates shop --snippet {snip}/exact.py",
        "similar",
        "similar find_user --snippet {snip}/good.py",
        "files --sort nope",
        "top-files --limit 0",
    ):
        argv, stdin = _argv(line, root, snips)
        result = CliRunner().invoke(graph, argv, input=stdin)
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), line
    assert isinstance(graph, click.Group)
