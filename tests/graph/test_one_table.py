"""One table of operations (`ore.graph.ops.OPS`) drives `ore graph ... --json`, the `codebase`
tool and the MCP tools, so they cannot drift.

Two checks. Every `ore graph` subcommand with `--json` answers through its OPS entry (the
answer replaced in the table shows up in the CLI's output). And the `--json` bytes of every
subcommand, for 77 argument combinations on a frozen fixture tree (one_table_tree.json), are the
graph's answer as the command gave it before it moved onto the table (`COMMANDS`: the graph's
methods called as the command called them), and the bytes captured before the move
(one_table_golden.json: a SHA-256 and a length per command line) wherever the graph's answer has
not changed since. When the graph's answers change on purpose, write the file again:
`ORE_ONE_TABLE_WRITE=1 python -m pytest -n 0 tests/graph/test_one_table.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from ore.cli.graph import graph
from ore.errors import GraphError
from ore.graph import ops
from ore.graph.ops import OPS

HERE = Path(__file__).parent
TREE = json.loads((HERE / "one_table_tree.json").read_text(encoding="utf-8"))
GOLDEN = HERE / "one_table_golden.json"

#: `export --json` is the graph file format itself (`--format json`), not a query's answer.
NOT_A_QUERY = {"export"}

KINDS = ("exact", "renamed", "structural")
_Ref = Callable[[Any, Path], Any]


def _text(snips: Path, name: str) -> str:
    return (snips / name).read_text(encoding="utf-8")


def _one(snips: Path, name: str, piped: bool, language: str | None = None) -> tuple[str, Any]:
    """The snippet as the command read it: a file (its name says its language) or stdin."""
    from ore.graph.judgment.snippets import one_snippet

    return one_snippet(_text(snips, name), language, "" if piped else str(snips / name))


def _dup_of(name: str, piped: bool = False, limit: int = 10, exclude: bool = False) -> _Ref:
    def ref(g: Any, s: Path) -> Any:
        from ore.graph.judgment.snippets import duplicates_in

        shown = "" if piped else str(s / name)
        return duplicates_in(g, _text(s, name), name=shown, limit=limit, exclude_tests=exclude)

    return ref


def _groups(exclude: bool = False, **kw: Any) -> _Ref:
    given = {"min_lines": 5, "min_tokens": 15, "paths": (), "kinds": KINDS, "limit": None, **kw}
    return lambda g, s: g.duplicates(exclude_tests=exclude, **given)


def _similar_to(name: str, piped: bool = False, mode: str = "name") -> _Ref:
    def ref(g: Any, s: Path) -> Any:
        code, lang = _one(s, name, piped)
        return g.similar(None, snippet=code, mode=mode, language=lang, limit=10)

    return ref


def _consistent(name: str, piped: bool = False, language: str | None = None, **kw: Any) -> _Ref:
    def ref(g: Any, s: Path) -> Any:
        code, lang = _one(s, name, piped, language)
        return g.consistent(code, language=lang, **kw)

    return ref


#: Each command line (`{snip}` is the folder of the snippet files; `<name` pipes one to stdin)
#: and the answer the command gave before it answered through the table: the graph's methods
#: called as it called them then, so this reference moves with the graph, never with the CLI.
COMMANDS: dict[str, _Ref] = {
    "stats": lambda g, s: g.stats(),
    "top-files": lambda g, s: g.top_files(20),
    "top-files --limit 3": lambda g, s: g.top_files(3),
    "hits": lambda g, s: g.hits(20),
    "hits --limit 2": lambda g, s: g.hits(2),
    "communities": lambda g, s: g.communities(),
    "symbol find_user": lambda g, s: g.symbol("find_user", 20),
    "symbol summarize_orders --limit 1": lambda g, s: g.symbol("summarize_orders", 1),
    "symbol nosuchname": lambda g, s: g.symbol("nosuchname", 20),
    "symbol get": lambda g, s: g.symbol("get", 20),
    "dependents shop/orders.py": lambda g, s: g.dependents("shop/orders.py", 1)[:50],
    "dependents orders.py --depth 3": lambda g, s: g.dependents("orders.py", 3)[:50],
    "dependents shop/orders.py --depth 2 --limit 1": lambda g, s: g.dependents("shop/orders.py", 2)[
        :1
    ],
    "dependencies billing/invoices.py --depth 2": lambda g, s: g.dependencies(
        "billing/invoices.py", 2
    )[:50],
    "dependencies stock/levels.py": lambda g, s: g.dependencies("stock/levels.py", 1)[:50],
    "dependencies web/app.js": lambda g, s: g.dependencies("web/app.js", 1)[:50],
    "search def": lambda g, s: g.search("def", 50),
    "search Error --limit 3": lambda g, s: g.search("Error", 3),
    "search nothing-here-at-all": lambda g, s: g.search("nothing-here-at-all", 50),
    "search return --by-file": lambda g, s: g.search_by_file("return", 50),
    "search return --by-file --limit 2": lambda g, s: g.search_by_file("return", 2),
    "context shop/orders.py --line 5": lambda g, s: g.context("shop/orders.py", (5,), 5),
    "context shop/orders.py --line 4 --line 12 --window 1": lambda g, s: g.context(
        "shop/orders.py", (4, 12), 1
    ),
    "context app/errors.py --line 1 --window 0": lambda g, s: g.context("app/errors.py", (1,), 0),
    "path billing/invoices.py shop/orders.py": lambda g, s: g.path(
        "billing/invoices.py", "shop/orders.py"
    ),
    "path shop/orders.py billing/invoices.py": lambda g, s: g.path(
        "shop/orders.py", "billing/invoices.py"
    ),
    "path stock/levels.py stock/cycle.py": lambda g, s: g.path("stock/levels.py", "stock/cycle.py"),
    "cycles": lambda g, s: g.cycles(50),
    "cycles --limit 1": lambda g, s: g.cycles(1),
    "cycles --include-type-imports": lambda g, s: g.cycles(50, include_type_imports=True),
    "cycles --include-deferred-imports": lambda g, s: g.cycles(50, include_deferred_imports=True),
    "duplicates": _groups(),
    "duplicates --limit 1": _groups(limit=1),
    "duplicates shop": _groups(paths=("shop",)),
    "duplicates shop tests": _groups(paths=("shop", "tests")),
    "duplicates --exclude-tests": _groups(exclude=True),
    "duplicates --min-lines 3 --min-tokens 5": _groups(min_lines=3, min_tokens=5),
    "duplicates --min-lines 40": _groups(min_lines=40),
    "duplicates --kind exact": _groups(kinds=("exact",)),
    "duplicates --kind renamed --kind structural": _groups(kinds=("renamed", "structural")),
    "duplicates --snippet {snip}/exact.py": _dup_of("exact.py"),
    "duplicates --snippet {snip}/exact.py --limit 1 --exclude-tests": _dup_of(
        "exact.py", limit=1, exclude=True
    ),
    "duplicates --snippet - <exact.py": _dup_of("exact.py", piped=True),
    "similar find_user": lambda g, s: g.similar("find_user", mode="name", limit=10),
    "similar get_user --mode signature": lambda g, s: g.similar(
        "get_user", mode="signature", limit=10
    ),
    "similar summarize_orders --mode shape --limit 2": lambda g, s: g.similar(
        "summarize_orders", mode="shape", limit=2
    ),
    "similar find_user --include-context": lambda g, s: g.similar(
        "find_user", limit=10, include_context=True
    ),
    "similar --snippet {snip}/good.py": _similar_to("good.py"),
    "similar --snippet {snip}/bad.py --mode shape": _similar_to("bad.py", mode="shape"),
    "similar --snippet - --mode signature <good.py": _similar_to("good.py", True, "signature"),
    "conventions": lambda g, s: g.conventions(None),
    "conventions errors": lambda g, s: g.conventions("errors"),
    "conventions naming --path app": lambda g, s: g.conventions("naming", paths=("app",)),
    "conventions imports --path app --path tests --include-context": lambda g, s: g.conventions(
        "imports", paths=("app", "tests"), include_context=True
    ),
    "conventions tests": lambda g, s: g.conventions("tests"),
    "consistent --snippet {snip}/good.py": _consistent("good.py"),
    "consistent --snippet {snip}/bad.py": _consistent("bad.py"),
    "consistent --snippet {snip}/bad.py --criteria naming": _consistent(
        "bad.py", criteria="naming"
    ),
    "consistent --snippet {snip}/bad.py --with app --lang python": _consistent(
        "bad.py", paths=("app",), language="python"
    ),
    "consistent --snippet - --include-context <bad.py": _consistent(
        "bad.py", True, include_context=True
    ),
    "place 'find a user by id'": lambda g, s: g.place("find a user by id", limit=5),
    "place 'summarize orders in a currency' --limit 2": lambda g, s: g.place(
        "summarize orders in a currency", limit=2
    ),
    "place 'log errors' --snippet {snip}/bad.py": lambda g, s: g.place(
        "log errors", snippet=_one(s, "bad.py", False)[0], limit=5
    ),
    "place 'billing invoices' --include-context": lambda g, s: g.place(
        "billing invoices", limit=5, include_context=True
    ),
    "signature": lambda g, s: g.signature("standard", None),
    "signature --level lean": lambda g, s: g.signature("lean", None),
    "signature --level deep --max-tokens 300": lambda g, s: g.signature("deep", 300),
    "files": lambda g, s: g.list_files(sort="rank"),
    "files --language python --sort size": lambda g, s: g.list_files(
        language="python", sort="size"
    ),
    "files --sort path --limit 4": lambda g, s: g.list_files(sort="path", limit=4),
    "files --language go": lambda g, s: g.list_files(language="go"),
    "files --language rust": lambda g, s: g.list_files(language="rust"),
    # Empty words reach the graph, which answers or says what is wrong, as it always has.
    "symbol ''": lambda g, s: g.symbol("", 20),
    "search ''": lambda g, s: g.search("", 50),
    "dependents ''": lambda g, s: g.dependents("", 1),
    "similar ''": lambda g, s: g.similar("", limit=10),
    "place ''": lambda g, s: g.place("", limit=5),
    "duplicates --snippet {snip}/empty.py": _dup_of("empty.py"),
    "consistent --snippet {snip}/empty.py": _consistent("empty.py"),
}


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


def _reference(line: str, root: Path, snips: Path) -> tuple[int, str]:
    """What the command printed before it answered through the table: its exit code and the
    JSON document of the graph's answer (`to_dict()` as it called it; nothing on an error)."""
    from ore.graph import open_graph
    from ore.graph.render.export import json_text

    try:
        found = COMMANDS[line](open_graph(root), snips)
    except GraphError:
        return 1, ""
    if isinstance(found, list):
        data: Any = [r.to_dict() for r in found]
    else:
        data = None if found is None else found.to_dict()
    return 0, json_text(data, indent=None) + "\n"


def test_json_bytes_are_unchanged(fixture_tree: tuple[Path, Path]) -> None:
    """Every command line's --json is, byte for byte, the graph's answer as the command gave
    it before the table; and the bytes captured then (one_table_golden.json) still come out for
    every line whose answer the graph has not changed since."""
    root, snips = fixture_tree
    from ore.graph import open_graph

    open_graph(root)  # indexed once: `stats` says what the refresh before it parsed again
    found, reference = {}, {}
    for line in COMMANDS:
        code, out = _run(*_argv(line, root, snips))
        ref_code, ref_out = _reference(line, root, snips)
        assert (code, out) == (ref_code, ref_out), line
        found[line] = {"exit": code, **_digest(out, root, snips)}
        reference[line] = {"exit": ref_code, **_digest(ref_out, root, snips)}
    if os.environ.get("ORE_ONE_TABLE_WRITE"):
        GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    same = [line for line in COMMANDS if reference[line] == want.get(line)]
    assert len(same) >= len(COMMANDS) // 2, "the graph's answers moved: write the golden again"
    assert all(found[line] == want[line] for line in same)


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


class _Recorder:
    """A graph that records every question asked of it (and answers a long list)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        def ask(*args: Any, **kwargs: Any) -> list[int]:
            self.calls.append((name, args, kwargs))
            return list(range(1000))

        return ask


#: The arguments an op needs, so that its defaults can be asked about.
NEEDS = {
    "symbol": {"name": "x"},
    "dependents": {"file": "a.py"},
    "dependencies": {"file": "a.py"},
    "search": {"query": "q"},
    "context": {"file": "a.py", "line": "1"},
    "path": {"from": "a.py", "to": "b.py"},
    "similar": {"name": "n"},
    "place": {"description": "d"},
    "consistent": {"snippet": "x = 1\n"},
}


def test_the_commands_defaults_are_the_tables() -> None:
    """An option the command line leaves at its default asks the graph what the table asks
    when the argument is not given (what an MCP tool does): the defaults cannot drift."""
    checked = 0
    for name, command in graph.commands.items():
        if name in NOT_A_QUERY:
            continue
        spec = OPS[name]
        for param in command.params:
            key = param.name or ""
            plain = isinstance(param.default, (int, str)) and not isinstance(param.default, bool)
            if key not in spec.args or not isinstance(param, click.Option) or not plain:
                continue
            default = str(param.default)
            given: Any = _Recorder()  # a graph, as far as the table can tell
            bare: Any = _Recorder()
            base = NEEDS.get(name, {})
            assert spec.answer is not None
            answers = (
                spec.answer(given, {**base, key: default}),
                spec.answer(bare, base),
            )
            assert given.calls == bare.calls and answers[0] == answers[1], (name, key)
            checked += 1
    assert checked >= 12
