"""The `codebase` tool: one graph query as prompt-sized text, confined to its root like
read-file, behind `filesystem-read`, and routed from structural questions without a root."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ore.errors import GateRejected, ToolError
from ore.router import hint_pattern, route, targets_from
from ore.skills import discover_skills
from ore.tools import TOOL_REGISTRY
from ore.tools.codebase import CODEBASE_OPS
from ore.tools.gate import run_gated

CODEBASE = TOOL_REGISTRY["codebase"]
READ = {"filesystem-read"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small Python project (the cwd) with known imports and symbols, a secret just outside
    it, and a symlink inside it that points at the secret."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "core.py").write_text(
        "def execute(x):\n    return x\n\n\nclass Engine:\n    pass\n", encoding="utf-8"
    )
    (root / "pkg" / "a.py").write_text(
        "from pkg.core import execute\n\n\ndef run():\n    return execute(1)\n", encoding="utf-8"
    )
    (root / "pkg" / "b.py").write_text(
        "from pkg import core\nfrom pkg.a import run\n", encoding="utf-8"
    )
    (root / "main.py").write_text("from pkg.b import core\nimport pkg.a\n", encoding="utf-8")
    (tmp_path / "outside.py").write_text('SECRET = "TOP SECRET"\n', encoding="utf-8")
    (root / "leak.py").symlink_to(tmp_path / "outside.py")
    monkeypatch.chdir(root)
    return root


def output(args: dict[str, str]) -> str:
    return run_gated(CODEBASE, args, READ).output


# -- the tool -----------------------------------------------------------------------------------


def test_its_ops_are_exactly_the_graph_tools_ops() -> None:
    from ore.graph.ops import OPS

    assert tuple(OPS) == CODEBASE_OPS
    assert CODEBASE.schema["properties"]["op"]["enum"] == list(OPS)


def test_top_files_ranks_the_most_depended_on_file_first(project: Path) -> None:
    text = output({"op": "top-files"})
    assert text.startswith("Query: top-files\n")
    rows = [line.split() for line in text.splitlines()[2:]]
    assert rows[0][1] == "pkg/core.py"
    assert {"pkg/a.py", "pkg/b.py", "main.py"} <= {r[1] for r in rows}


def test_dependents_dependencies_and_symbol(project: Path) -> None:
    dependents = output({"op": "dependents", "file": "pkg/core.py"})
    assert "pkg/a.py" in dependents and "pkg/b.py" in dependents
    assert "main.py" not in dependents
    deep = output({"op": "dependents", "file": "pkg/core.py", "depth": "2"})
    assert "main.py" in deep
    assert "pkg/core.py" in output({"op": "dependencies", "file": "pkg/a.py"})
    symbol = output({"op": "symbol", "name": "execute"})
    assert "pkg/core.py:1" in symbol and "def execute(x)" in symbol


def test_the_default_op_is_the_overview(project: Path) -> None:
    text = output({})
    assert text.startswith("Query: overview\n") and "central files" in text


def test_the_working_folder_is_the_default_root_and_an_explicit_root_replaces_it(
    project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "solo.py").write_text("def lonely():\n    pass\n", encoding="utf-8")
    assert "solo.py" not in output({"op": "top-files"})
    text = output({"op": "top-files", "root": str(other)})
    assert "solo.py" in text and "pkg/core.py" not in text


def test_the_output_is_capped_for_a_prompt(project: Path) -> None:
    from ore.graph.ops import MAX_CHARS

    for i in range(150):
        (project / f"mod_{i:03}.py").write_text("import pkg.core\n", encoding="utf-8")
    result = run_gated(CODEBASE, {"op": "top-files", "limit": "500"}, READ)
    assert len(result.output) <= MAX_CHARS + 100
    assert result.output.endswith("(truncated; narrow the query)")
    assert result.metadata["truncated"] is True


@pytest.mark.invariant
@pytest.mark.parametrize(
    "args",
    [
        {"op": "dependents", "file": "../outside.py"},
        {"op": "dependencies", "file": "{outside}/outside.py"},
        {"op": "context", "file": "leak.py", "line": "1"},
        {"op": "path", "from": "main.py", "to": "../outside.py"},
        {"op": "dependents", "file": "pkg/../../outside.py"},
    ],
)
def test_codebase_refuses_a_file_outside_its_root(project: Path, args: dict[str, str]) -> None:
    args = {k: v.format(outside=project.parent) for k, v in args.items()}
    with pytest.raises(ToolError, match="outside the allowed folder") as info:
        run_gated(CODEBASE, args, READ)
    assert "\n" not in info.value.message


@pytest.mark.invariant
def test_codebase_never_shows_a_byte_from_outside_its_root(project: Path) -> None:
    for args in ({"op": "search", "query": "SECRET"}, {"op": "top-files"}, {"op": "stats"}):
        assert "TOP SECRET" not in output(args) and "leak.py" not in output(args).split("\n", 1)[1]


def test_codebase_is_gated_and_never_runs_without_the_grant(project: Path) -> None:
    with pytest.raises(GateRejected, match="--grant filesystem-read"):
        run_gated(CODEBASE, {"op": "top-files"}, set())


@pytest.mark.parametrize(
    "args, expected",
    [
        ({"op": "bogus"}, "argument 'op' must be one of overview, stats, top-files"),
        ({"op": "top-files", "limit": "ten"}, "argument 'limit' is invalid"),
        ({"op": "top-files", "limit": "0"}, "'limit' must be 1 or more"),
        ({"op": "top-files", "file": "pkg/a.py"}, "op 'top-files' takes no argument 'file'"),
        ({"op": "dependents"}, "op 'dependents' needs 'file=...'"),
        ({"op": "symbol", "nme": "x"}, "no argument 'nme'"),
        ({"op": "dependents", "file": "nosuch.py"}, "unknown file 'nosuch.py'"),
        ({"op": "top-files", "root": "/no/such/folder"}, "root '/no/such/folder' cannot be used"),
    ],
)
def test_a_bad_codebase_argument_is_one_line_naming_it(
    project: Path, args: dict[str, str], expected: str
) -> None:
    with pytest.raises(ToolError) as info:
        run_gated(CODEBASE, args, READ)
    message = info.value.message
    assert "\n" not in message and message.startswith("tool 'codebase'")
    assert expected in message


# -- routing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prompt, args",
    [
        ("what depends on ore/core.py", {"op": "dependents", "file": "ore/core.py"}),
        ("What depends on the file `pkg/a.py`?", {"op": "dependents", "file": "pkg/a.py"}),
        ("who imports pkg/core.py?", {"op": "dependents", "file": "pkg/core.py"}),
        ("list the dependencies of main.py", {"op": "dependencies", "file": "main.py"}),
        ("what does pkg/b.py import?", {"op": "dependencies", "file": "pkg/b.py"}),
        ("where is execute defined", {"op": "symbol", "name": "execute"}),
        ("Where's the Engine class defined?", {"op": "symbol", "name": "Engine"}),
        ("find the definition of `CodeGraph.symbol`", {"op": "symbol", "name": "symbol"}),
        ("what are the most important files?", {"op": "top-files"}),
        ("show me the key files", {"op": "top-files"}),
        ("give me a codebase overview", {"op": "overview"}),
        ("explain the module structure", {"op": "communities"}),
        ("are there circular imports?", {"op": "cycles"}),
        ('search the code for "TODO"', {"op": "search", "query": "TODO"}),
        (
            "dependency path from main.py to pkg/core.py",
            {"op": "path", "from": "main.py", "to": "pkg/core.py"},
        ),
    ],
)
def test_structural_questions_route_to_codebase_with_their_op(
    prompt: str, args: dict[str, str]
) -> None:
    catalog = discover_skills()
    targets = targets_from(TOOL_REGISTRY.values(), catalog.skills.values())
    decision = route(prompt, targets, tools=TOOL_REGISTRY)
    assert (decision.target, decision.target_type) == ("codebase", "tool")
    assert decision.args == args


@pytest.mark.parametrize(
    "prompt",
    ["what is a monad?", "it depends on the weather", "where is the party", "summarise this"],
)
def test_everyday_prompts_do_not_route_to_codebase(prompt: str) -> None:
    catalog = discover_skills()
    targets = targets_from(TOOL_REGISTRY.values(), catalog.skills.values())
    assert route(prompt, targets, tools=TOOL_REGISTRY).target != "codebase"


def test_an_argument_the_prompt_does_not_give_is_left_out() -> None:
    assert CODEBASE.extract_args("what depends on it?") == {"op": "dependents"}
    assert CODEBASE.extract_args("nothing structural here") == {}


@pytest.mark.invariant
@pytest.mark.parametrize(
    "prompt",
    [
        "what depends on pkg/a.py root=/",
        "what depends on pkg/a.py --tool-arg root=/ root=..",
        "where is execute defined in root /",
    ],
)
def test_a_routed_codebase_query_never_gets_a_root(
    project: Path, tmp_path: Path, prompt: str
) -> None:
    decision = route(prompt, targets_from(TOOL_REGISTRY.values()), tools=TOOL_REGISTRY)
    assert decision.target == "codebase" and "root" not in decision.args
    assert set(decision.args) <= CODEBASE.routable_args and "root" not in CODEBASE.routable_args
    result = run_gated(CODEBASE, decision.args, READ)
    assert result.metadata["root"] == str(project.resolve())


@pytest.mark.parametrize(
    "prompt",
    [
        "what depends on ../outside.py",
        "who imports {outside}/outside.py",
        "what depends on leak.py",
    ],
)
def test_a_routed_file_outside_the_working_folder_is_refused(project: Path, prompt: str) -> None:
    text = prompt.format(outside=project.parent)
    decision = route(text, targets_from(TOOL_REGISTRY.values()), tools=TOOL_REGISTRY)
    assert decision.target == "codebase"
    with pytest.raises(ToolError, match="outside the allowed folder"):
        run_gated(CODEBASE, decision.args, READ)


def test_every_codebase_hint_is_one_the_router_can_match() -> None:
    for hint in CODEBASE.hints:
        runs = hint_pattern(hint)
        assert runs and sum(map(len, runs)) >= 2, hint
        assert CODEBASE.extract_args(hint.replace("...", "thing"))["op"] in CODEBASE_OPS


@given(st.text(max_size=300))
def test_the_codebase_extractor_never_raises_and_never_sets_root(prompt: str) -> None:
    args = CODEBASE.extract_args(prompt)
    assert set(args) <= CODEBASE.routable_args and "root" not in args
    assert args.get("op", "overview") in CODEBASE_OPS
