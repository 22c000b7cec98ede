"""The MCP tools as the graph's op table derives them (no server, no SDK needed): choices held
equal to `ore graph`'s, arguments checked, big results cut with a note, and `ore mcp --help`
importing neither the SDK nor the graph."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ore.cli import graph_judgment
from ore.errors import GraphError
from ore.graph.ops import ARG_CHOICES, ARG_KINDS, OPS
from ore.graph.serve import WarmGraph
from ore.mcp import tools
from ore.mcp.tools import MAX_RESULT_CHARS, TOOLS, arguments, call_tool, fitted


def test_choices_are_the_cli_choices() -> None:
    assert ARG_CHOICES["mode"] == graph_judgment.MODES
    assert ARG_CHOICES["topic"] == graph_judgment.TOPICS
    assert ARG_CHOICES["criteria"] == graph_judgment.CRITERIA
    assert ARG_CHOICES["level"] == graph_judgment.LEVELS
    assert ARG_CHOICES["sort"] == graph_judgment.SORTS
    assert ARG_CHOICES["language"] == graph_judgment.LANGUAGES


def test_every_op_but_the_overview_alias_is_a_tool_with_what_a_model_needs() -> None:
    assert {op.name for op in OPS.values() if not op.tool} == {"overview"}
    assert len(TOOLS) == len(OPS) - 1
    for spec in TOOLS.values():
        assert spec.op.data is not None and len(spec.description) > 60
        props = spec.input_schema["properties"]
        assert set(props) <= set(ARG_KINDS) and set(spec.op.required) <= set(props)


def test_arguments_are_checked_against_the_schema() -> None:
    top = TOOLS["top_files"]
    assert arguments(top, {"limit": 3}) == {"limit": "3"}
    assert arguments(TOOLS["duplicates"], {"exclude_tests": True, "paths": ["a", "b/c"]}) == {
        "exclude_tests": "true",
        "paths": "a,b/c",
    }
    for bad in ({"limit": True}, {"limit": 1.5}, {"limit": 0}, {"x": 1}, [1], "limit"):
        with pytest.raises(GraphError):
            arguments(top, bad)
    with pytest.raises(GraphError, match="needs 'file'"):
        arguments(TOOLS["dependents"], {})
    paths = TOOLS["duplicates"]  # the schema's own bounds on a list of paths hold too
    assert arguments(paths, {"paths": ["a"] * 256})["paths"].count("a") == 256
    for bad in (["a"] * 257, ["x" * 4097]):
        with pytest.raises(GraphError, match=r"at most 256|longer than 4096"):
            arguments(paths, {"paths": bad})


def test_a_big_result_is_cut_with_a_note() -> None:
    rows = [{"path": f"f{n}.py", "text": "x" * 100} for n in range(2000)]
    reply = fitted(rows)
    assert not reply.error and reply.note.startswith("truncated: ")
    assert len(reply.text) <= MAX_RESULT_CHARS and reply.data == rows[: len(reply.data)]
    inner = fitted({"path": "a.py", "chunks": rows})
    assert inner.note and inner.data["chunks"] == rows[: len(inner.data["chunks"])]
    assert fitted({"text": "x" * (MAX_RESULT_CHARS + 1)}).error
    assert json.loads(fitted(rows[:3]).text) == rows[:3]


def test_a_big_list_deep_inside_a_result_is_cut_with_a_note_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`consistent` on a long snippet: its deviations sit inside a criterion inside a list; the
    bulk of them is cut (the criteria and the score stay), and the note says where."""
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    root = tmp_path / "p"
    root.mkdir()
    for n in range(4):
        body = "".join(f"def snake_{n}_{k}(value):\n    return value + {k}\n\n" for k in range(20))
        (root / f"m{n}.py").write_text("import logging\n\n" + body)
    snippet = "".join(f"def Camel{k}(Value):\n    print(Value)\n\n" for k in range(1500))
    warm = WarmGraph(root)
    whole = TOOLS["consistent"].op.data(
        warm.graph(), arguments(TOOLS["consistent"], {"snippet": snippet})
    )
    assert len(json.dumps(whole)) > MAX_RESULT_CHARS  # the case: over the bound
    reply = call_tool(warm, "consistent", {"snippet": snippet})
    assert not reply.error and reply.note.startswith("truncated: ")
    assert "deviations" in reply.note and len(reply.text) <= MAX_RESULT_CHARS
    shown = json.loads(reply.text)
    assert shown["score"] == whole["score"]
    assert [c["criterion"] for c in shown["criteria"]] == [
        c["criterion"] for c in whole["criteria"]
    ]
    nested = {"top": {"rows": [{"keep": 1, "many": list(range(30_000))}]}}
    assert fitted(nested).note.startswith("truncated: ") and not fitted(nested).error


def test_a_call_in_process_answers_and_never_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ORE_HOME", str(tmp_path / "home"))
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.py").write_text("import b\n\n\ndef f():\n    return b.g()\n")
    (tmp_path / "p" / "b.py").write_text("def g():\n    return 1\n")
    warm = WarmGraph(tmp_path / "p")
    reply = call_tool(warm, "dependents", {"file": "b.py"})
    assert [r["path"] for r in reply.data] == ["a.py"]
    assert call_tool(warm, "dependents", {"file": "b.py"}).data == reply.data
    assert warm.refreshes == 1  # nothing changed: the graph in memory answered
    assert call_tool(warm, "nosuch", {}).error
    assert call_tool(warm, "get_context", {"file": "a.py", "line": 99}).error
    monkeypatch.setattr(tools, "TOOLS", {})  # even the table gone is an error reply
    assert call_tool(warm, "stats", {}).error


PROBE = """
import sys
from ore.cli import main
try:
    main(["mcp", "--help"])
except SystemExit:
    pass
print(sorted(m for m in ("mcp", "mcp_types", "anyio", "pydantic", "networkx", "tree_sitter")
             if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.invariant
def test_ore_mcp_help_imports_neither_the_sdk_nor_the_graph() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, stdin=subprocess.DEVNULL
    )
    assert "Serve the codebase graph over MCP" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr
