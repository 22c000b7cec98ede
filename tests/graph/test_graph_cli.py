"""`ore graph ...` through click's CliRunner (and once as a real process), and the tool."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from ore.cli.graph import graph
from ore.errors import GraphError
from ore.graph.ops import MAX_CHARS, OPS, run_query


@pytest.fixture
def root(tmp_path: Path) -> Path:
    files = {
        "pkg/__init__.py": "",
        "pkg/base.py": "class Base:\n    pass\n",
        "pkg/impl.py": "from pkg.base import Base\n\nclass Impl(Base):\n    pass\n",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "from pkg import a\n",
    }
    base = tmp_path / "proj"
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return base


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(graph, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


COMMANDS = [
    ["stats"],
    ["top-files"],
    ["hits"],
    ["communities"],
    ["symbol", "Base"],
    ["dependents", "pkg/base.py"],
    ["dependencies", "pkg/impl.py", "--depth", "2"],
    ["search", "class"],
    ["context", "pkg/impl.py", "--line", "3", "--window", "1"],
    ["path", "pkg/impl.py", "pkg/base.py"],
    ["cycles"],
    ["export", "--format", "json"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_command_answers_in_json_and_as_a_table(root: Path, args: list[str]) -> None:
    code, out, err = run(*args, "--root", str(root), "--json")
    assert (code, err) == (0, "")
    json.loads(out)
    if args[0] != "export":
        code, table, err = run(*args, "--root", str(root))
        assert (code, err) == (0, "")
        assert table.strip() and not table.lstrip().startswith(("{", "["))


def test_json_shapes(root: Path) -> None:
    top = json.loads(run("top-files", "--root", str(root), "--json", "--limit", "2")[1])
    assert len(top) == 2 and {"path", "score"} <= set(top[0])
    hits = json.loads(run("hits", "--root", str(root), "--json")[1])
    assert set(hits) == {"hubs", "authorities"}
    groups = json.loads(run("communities", "--root", str(root), "--json")[1])
    assert {"id", "files"} == set(groups[0])
    sym = json.loads(run("symbol", "Base", "--root", str(root), "--json")[1])
    assert sym[0] | {"signature": ""} == {
        "name": "Base",
        "kind": "class",
        "path": "pkg/base.py",
        "line": 1,
        "end_line": 2,
        "signature": "",
        "exact": True,
    }
    deps = json.loads(run("dependents", "pkg/base.py", "--root", str(root), "--json")[1])
    assert deps[0]["path"] == "pkg/impl.py" and "weight" in deps[0]
    cycles = json.loads(run("cycles", "--root", str(root), "--json")[1])
    assert cycles[0]["files"] == ["pkg/a.py", "pkg/b.py"]


def test_missing_root_is_one_line_exit_1(tmp_path: Path) -> None:
    code, out, err = run("stats", "--root", str(tmp_path / "missing"))
    assert code == 1 and out == ""
    assert err.startswith("Error: root ") and err.count("\n") == 1


def test_unknown_file_is_one_line_exit_1(root: Path) -> None:
    code, out, err = run("dependents", "pkg/nope.py", "--root", str(root))
    assert code == 1 and out == ""
    assert err.startswith("Error: unknown file 'pkg/nope.py'") and err.count("\n") == 1


def test_empty_result_is_one_line_exit_0(root: Path) -> None:
    code, out, _ = run("symbol", "Nothing_Like_This", "--root", str(root))
    assert (code, out) == (0, "no symbol named 'Nothing_Like_This'\n")
    code, out, _ = run("symbol", "Nothing_Like_This", "--root", str(root), "--json")
    assert (code, json.loads(out)) == (0, [])


def test_usage_errors_exit_2(root: Path) -> None:
    assert run("top-files", "--limit", "0", "--root", str(root))[0] == 2
    assert run("export", "--format", "dot", "--json", "--root", str(root))[0] == 2
    assert run("context", "pkg/a.py", "--root", str(root))[0] == 2  # --line is required


def test_every_command_has_help() -> None:
    for name, command in graph.commands.items():
        assert command.help and command.help.strip(), name
        assert isinstance(command, click.Command)


def test_module_runs_as_a_process(root: Path, tmp_path: Path) -> None:
    env = dict(os.environ, ORE_HOME=str(tmp_path / "orehome"))
    done = subprocess.run(
        [sys.executable, "-m", "ore.cli.graph", "stats", "--root", str(root), "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["files"] == 5
    assert done.stderr == ""  # no progress when stderr is not a terminal


def test_help_does_not_import_heavy_modules() -> None:
    code = "import sys, ore.cli.graph; print(sorted(m for m in sys.modules if m.split('.')[0] in ('networkx', 'tree_sitter')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# -- the tool --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "args", "needle"),
    [
        ("overview", {}, "central files"),
        ("stats", {}, "files"),
        ("top-files", {"limit": "2"}, "pkg/"),
        ("hits", {}, "authority"),
        ("communities", {}, "community"),
        ("symbol", {"name": "Impl"}, "pkg/impl.py:3"),
        ("dependents", {"file": "pkg/base.py"}, "pkg/impl.py"),
        ("dependencies", {"file": "pkg/impl.py", "depth": "2"}, "pkg/base.py"),
        ("search", {"query": "Base"}, "pkg/impl.py"),
        ("context", {"file": "pkg/impl.py", "line": "1,3", "window": "0"}, "class Impl"),
        ("path", {"from": "pkg/impl.py", "to": "pkg/base.py"}, "->"),
        ("cycles", {}, "pkg/a.py"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_tool_ops(root: Path, op: str, args: dict[str, str], needle: str) -> None:
    text = run_query(root, op, args)
    assert needle in text
    assert len(text) <= MAX_CHARS


def test_tool_covers_every_op() -> None:
    assert set(OPS) == {
        "overview",
        "stats",
        "top-files",
        "hits",
        "communities",
        "symbol",
        "dependents",
        "dependencies",
        "search",
        "context",
        "path",
        "cycles",
        "duplicates",
        "similar",
        "conventions",
        "consistent",
        "place",
        "signature",
        "files",
    }


def test_tool_rejects_bad_ops_and_args(root: Path) -> None:
    with pytest.raises(GraphError, match="unknown codebase op"):
        run_query(root, "delete-everything", {})
    with pytest.raises(GraphError, match="needs 'name="):
        run_query(root, "symbol", {})
    with pytest.raises(GraphError, match="whole number"):
        run_query(root, "top-files", {"limit": "many"})
    with pytest.raises(GraphError, match="takes no argument 'bogus'"):
        run_query(root, "stats", {"bogus": "1"})
    with pytest.raises(GraphError, match="unknown file"):
        run_query(root, "dependents", {"file": "pkg/none.py"})


def test_tool_output_is_capped(tmp_path: Path) -> None:
    base = tmp_path / "big"
    base.mkdir()
    for n in range(200):
        (base / f"module_number_{n}.py").write_text(f"def function_number_{n}():\n    pass\n")
    text = run_query(base, "search", {"query": "function_number", "limit": "500"})
    assert len(text) <= MAX_CHARS and text.endswith("(truncated; narrow the query)")
