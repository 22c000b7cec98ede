"""`ore graph`'s text answers: lines numbered as the index numbers them (at `\\n` only), every
file name shown on one line through the one terminal boundary, and the small answers of an
odd question (an empty NAME, a language with no file, an empty tree, `pkg//core.py`)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from _cli import needs_ore, run_in_pty, run_ore

from ore.graph import open_graph
from ore.graph.index.source import text_lines
from ore.graph.ops import run_query

pytestmark = needs_ore

# Each character `str.splitlines` breaks a line at and `\n`-splitting (the index, tree-sitter,
# git, grep -n) does not; then a `\r\n` ending, which both count as one line break.
_ODD_BREAKS = {
    "form_feed": "\x0c",
    "lone_cr": "\r",
    "line_separator": "\u2028",
    "next_line": "\x85",
    "vertical_tab": "\x0b",
    "file_separator": "\x1c",
}


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "proj"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode())
    return root


@pytest.mark.parametrize("odd", list(_ODD_BREAKS.values()), ids=list(_ODD_BREAKS))
def test_search_and_context_number_lines_as_the_symbols_do(tmp_path: Path, odd: str) -> None:
    text = f"def f():\n    return 1\n{odd}\ndef g():  # {odd} here too\n    return 2\r\ndef h():\n"
    root = _tree(tmp_path, {"ff.py": text})
    g = open_graph(root, jobs=1)
    [found] = [s for s in g.symbol("g") if s.exact]
    assert found.line == 4
    hits = {h.text: h.line for h in g.search("return")}
    assert hits == {"return 1": 2, "return 2": 5}
    assert [h.line for h in g.search("def h")] == [6]
    [chunk] = g.context("ff.py", [4], window=0).chunks
    assert (chunk.start, chunk.end) == (4, 4) and chunk.text.startswith("def g():")
    [chunk] = g.context("ff.py", [5], window=0).chunks
    assert chunk.text == "    return 2"  # the \r of \r\n is part of the line break
    assert [len(c.text.split("\n")) for c in g.context("ff.py", [1], window=9).chunks] == [6]
    # the codebase tool's text answers are the same lines
    assert "    5: return 2" in run_query(root, "search", {"query": "return 2"})
    assert "     4  def g():" in run_query(
        root, "context", {"file": "ff.py", "line": "4", "window": "0"}
    )


def test_text_lines_split_at_newlines_only() -> None:
    assert text_lines("") == []
    assert text_lines("a\nb\n") == ["a", "b"]
    assert text_lines("a\r\nb") == ["a", "b"]
    assert text_lines("a\rb\x0cc\u2028d\x85e\n\n") == ["a\rb\x0cc\u2028d\x85e", ""]


# Every kind of control a name can hold: a line break, a tab, a carriage return, an escape
# sequence, a right-to-left override. `ore graph files` shows each escaped on the name's line.
_NAMES = {
    "new\nline.py": "new\\x0aline.py",
    "t\tab.py": "t\\x09ab.py",
    "c\rr.py": "c\\x0dr.py",
    "e\x1b[31mred.py": "e\\x1b[31mred.py",
    "rl\u202eyp.py": "rl\\u202eyp.py",
    "ls\u2028ep.py": "ls\\u2028ep.py",
}
_BODY = (
    "import os\nfrom b import base\n\n\ndef {name}(items, seen):\n"
    "    total = 0\n    for item in items:\n        if item not in seen:\n"
    "            seen.add(item)\n            total += len(item)\n    return total\n"
)
_COMMANDS = [
    ["stats"],
    ["files"],
    ["top-files"],
    ["hits"],
    ["communities"],
    ["search", "import"],
    ["search", "import", "--by-file"],
    ["symbol", "count"],
    ["dependents", "b.py"],
    ["dependencies", "new\\x0aline.py"],
    ["context", "new\\x0aline.py", "--line", "1"],
    ["path", "new\\x0aline.py", "b.py"],
    ["duplicates"],
    ["similar", "count_items"],
    ["conventions", "imports"],
    ["place", "count items seen"],
    ["export", "--format", "mermaid"],
    ["export", "--format", "dot"],
    ["export", "--format", "graphml"],
    ["signature"],
]

#: What the answers that name none of the odd files say instead (the root's odd name included).
_ANSWERS_NAMING_NO_ODD_FILE = {
    "stats": "ro\\x0aot",
    "dependencies new\\x0aline.py": "  b.py",
    "export --format dot": '"new&#92;x0aline.py"',  # DOT's backslash is an entity
}


@pytest.fixture(scope="module")
def odd_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    base = tmp_path_factory.mktemp("names")
    root = base / "ro\not"  # the root's own name is shown by `stats`
    root.mkdir()
    (root / "b.py").write_text("base = 1\n")
    for name in _NAMES:
        (root / name).write_text(_BODY.format(name="count_items"))
    env = {**os.environ, "ORE_HOME": str(base / "home"), "NO_COLOR": "1"}
    return root, env


@pytest.mark.invariant
@pytest.mark.parametrize("args", _COMMANDS, ids=lambda a: "-".join(a).replace(" ", "_"))
def test_every_graph_answer_shows_a_file_name_on_one_line_through_the_boundary(
    odd_root: tuple[Path, dict[str, str]], args: list[str]
) -> None:
    root, env = odd_root
    shown = run_in_pty(["graph", *args, "--root", str(root)], env).decode()
    assert "Error" not in shown, shown
    for raw in ("\x1b", "\r", "\t", "\u202e", "\u2028", "\nline.py", "ro\not"):
        assert raw not in shown, (raw, shown)
    said = _ANSWERS_NAMING_NO_ODD_FILE.get(" ".join(args))
    if said is not None:
        assert said in shown, shown
    else:  # the answer names at least one of the odd files, escaped as `files` shows it
        assert any(escaped in shown for escaped in _NAMES.values()), shown


def test_json_keeps_the_names_exact(odd_root: tuple[Path, dict[str, str]]) -> None:
    root, env = odd_root
    result = run_ore("graph", "search", "import", "--json", "--root", str(root), env=env)
    assert result.returncode == 0, result.stderr
    assert '"new\\nline.py"' in result.stdout and '"t\\tab.py"' in result.stdout


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "ORE_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}


def test_similar_says_what_is_wrong_with_the_name(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/core.py": "class Nursery:\n    def start(self):\n        pass\n"})
    env = _env(tmp_path)
    for name, said in (("", "the name to compare is empty"), ("Nursery.", "'Nursery.' names")):
        result = run_ore("graph", "similar", name, "--root", str(root), env=env)
        assert result.returncode == 1 and "snippet" not in result.stderr, result.stderr
        assert re.match(f"Error: {re.escape(said)}", result.stderr), result.stderr


def test_small_answers_of_an_odd_question(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"pkg/core.py": "def run():\n    return 1\n"})
    env = _env(tmp_path)
    typescript = run_ore("graph", "files", "--language", "typescript", "--root", str(root), env=env)
    assert typescript.stdout == "no TypeScript file is indexed\n", typescript
    for spelled in ("pkg//core.py", "pkg/./core.py", "./pkg/core.py", "pkg/../pkg/core.py"):
        result = run_ore("graph", "context", spelled, "--line", "1", "--root", str(root), env=env)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("pkg/core.py:1-2\n"), result.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    hits = run_ore("graph", "hits", "--root", str(empty), env=env)
    assert (hits.returncode, hits.stdout) == (0, "no files indexed\n"), hits
