"""The judgment ops of the `codebase` tool (`duplicates`, `similar`, `conventions`, `consistent`,
`place`, `signature`, `files`; `overview` is the signature), their routing hints, and the one
way code reaches them: text piped to ORE or a `--tool-arg`, never the prompt's words or a file."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_graph_duplicates import EXACT, ORIGINAL, RENAMED, STRUCTURAL, UNRELATED
from test_graph_judgment import BAD, GOOD, HOUSE

from ore.errors import GraphError, ToolError
from ore.graph.judgment.snippets import added_code, one_snippet, pieces
from ore.graph.ops import MAX_CHARS, OPS, SNIPPET_ARG, TOOL_MAX_TOKENS, run_query
from ore.router import route, targets_from
from ore.skills import discover_skills
from ore.tools import TOOL_REGISTRY
from ore.tools.gate import run_gated
from ore.turn import ContextPlan, gather

CODEBASE = TOOL_REGISTRY["codebase"]
READ = frozenset({"filesystem-read"})
JUDGMENT_OPS = ("duplicates", "similar", "conventions", "consistent", "place", "signature", "files")


def tree(base: Path, name: str, files: dict[str, str]) -> Path:
    root = base / name
    root.mkdir()
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def clones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tree(
        tmp_path,
        "proj",
        {
            "shop/orders.py": "import json\n\n\n" + ORIGINAL,
            "shop/report.py": "X = 1\n\n" + EXACT + "\n\n" + UNRELATED,
            "billing/invoices.py": RENAMED,
            "stock/levels.py": STRUCTURAL,
        },
    )
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def house(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tree(tmp_path, "house", HOUSE)
    monkeypatch.chdir(root)
    return root


def output(args: dict[str, str]) -> str:
    return run_gated(CODEBASE, args, READ).output


# -- the ops, on trees whose answers are known -------------------------------------------------


def test_every_judgment_op_is_in_the_one_table() -> None:
    assert set(JUDGMENT_OPS) <= set(OPS)
    assert {op for op, spec in OPS.items() if SNIPPET_ARG in spec.args} == {
        "duplicates",
        "similar",
        "consistent",
        "place",
    }


def test_duplicates_op_groups_clones_and_matches_a_snippet(clones: Path) -> None:
    groups = run_query(clones, "duplicates", {})
    assert groups.startswith("1. exact clone") and "shop/orders.py:4-14" in groups
    assert "billing/invoices.py" in groups  # the renamed copy
    snippet = RENAMED.replace("tally_invoices", "count_paid")
    text = run_query(clones, "duplicates", {"snippet": snippet, "limit": "3"})
    assert text.startswith("code like the snippet:\n")
    assert "renamed" in text and "billing/invoices.py" in text
    assert run_query(clones, "duplicates", {"snippet": "def f(a, b):\n    return a ** b\n"}) == (
        "no code like the snippet (nothing scores 0.5 or more)"
    )
    with pytest.raises(GraphError, match="'paths' applies to clone groups"):
        run_query(clones, "duplicates", {"snippet": snippet, "paths": "shop"})
    assert run_query(clones, "duplicates", {"min_tokens": "900"}) == "no duplicates"
    only = run_query(clones, "duplicates", {"paths": "shop,billing", "min_lines": "5"})
    assert "stock/levels.py" not in only


def test_the_judgment_ops_answer_on_the_house(house: Path) -> None:
    assert "fetch_user" in run_query(house, "similar", {"name": "get_user_by_id"})
    naming = run_query(house, "conventions", {"topic": "naming"})
    assert naming.startswith("naming (") and "function names: snake_case" in naming
    bad = run_query(house, "consistent", {"snippet": BAD, "paths": "app"})
    assert "`getUser` is camelCase" in bad
    assert run_query(house, "consistent", {"snippet": GOOD, "paths": "app"}).startswith(
        "deviation 0.00"
    )
    placed = run_query(house, "place", {"description": "compute the tax amount of an invoice"})
    first_file = placed.split("files:\n", 1)[1].splitlines()[0].split()
    assert first_file[1].startswith("app/billing/")
    assert "web/ui.ts" in run_query(house, "files", {"language": "typescript"})
    ranked = run_query(house, "files", {"limit": "1"}).splitlines()
    assert len(ranked) == 2 and ranked[1].split()[1] == "app/errors.py"


@pytest.mark.parametrize("level", ["lean", "standard", "deep", "max"])
def test_signature_and_overview_fit_the_tools_cap(house: Path, level: str) -> None:
    for op in ("signature", "overview"):
        text = run_query(house, op, {"level": level, "max_tokens": "4000"})
        assert len(text) <= MAX_CHARS and not text.endswith("narrow the query)")
        assert text.endswith(f"of {TOOL_MAX_TOKENS} tokens, level {level})")
    lean = run_query(house, "overview", {"level": "lean", "max_tokens": "40"})
    assert lean.endswith("of 40 tokens, level lean)") and "central files" in lean
    assert "central files" in run_query(house, "overview", {})


@pytest.mark.parametrize(
    ("op", "args", "message"),
    [
        ("consistent", {}, "needs the code to compare"),
        ("similar", {}, "needs 'name=...'"),
        ("similar", {"name": "x", "snippet": GOOD}, "a name or a snippet, not both"),
        ("place", {}, "needs 'description=...'"),
        ("duplicates", {"exclude_tests": "maybe"}, "true or false"),
        ("conventions", {"topic": "style"}, "unknown topic"),
        ("signature", {"level": "huge"}, "unknown level"),
        ("files", {"sort": "age"}, "unknown sort"),
        ("duplicates", {"snippet": "def (:\n"}, "does not parse"),
        ("consistent", {"snippet": "\x00\x01"}, "binary"),
        ("similar", {"snippet": "x = 1\n" * 200_000}, "limit is 1 MB"),
    ],
)
def test_bad_judgment_arguments_are_one_line(
    house: Path, op: str, args: dict[str, str], message: str
) -> None:
    with pytest.raises(GraphError, match=message) as info:
        run_query(house, op, args)
    assert "\n" not in info.value.message


def test_an_empty_tree_is_one_line_through_the_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree(tmp_path, "empty", {}))
    with pytest.raises(ToolError, match="op 'duplicates': no source files are indexed"):
        output({"op": "duplicates", "snippet": GOOD})
    assert output({"op": "duplicates"}).endswith("no duplicates")
    assert output({"op": "files"}).endswith("no files indexed")


# -- the tool: confinement, the query line, piped text -----------------------------------------


@pytest.mark.invariant
@pytest.mark.parametrize("paths", ["../outside.py", "app,../outside.py", "/etc"])
def test_paths_outside_the_root_are_refused(house: Path, paths: str) -> None:
    (house.parent / "outside.py").write_text("SECRET = 1\n", encoding="utf-8")
    for op, extra in (("conventions", {}), ("consistent", {"snippet": GOOD}), ("duplicates", {})):
        with pytest.raises(ToolError, match="outside the allowed folder"):
            run_gated(CODEBASE, {"op": op, "paths": paths, **extra}, READ)


def test_the_query_line_shows_code_by_its_size(house: Path) -> None:
    result = run_gated(CODEBASE, {"op": "consistent", "snippet": BAD}, READ)
    first = result.output.splitlines()[0]
    assert first == f"Query: consistent snippet=<6 lines, {len(BAD)} bytes>"
    assert result.metadata["args"] == {"snippet": f"<6 lines, {len(BAD)} bytes>"}
    assert "def getUser" not in result.output
    short = run_gated(CODEBASE, {"op": "place", "description": "parse invoices"}, READ)
    assert short.output.startswith("Query: place description=parse invoices\n")


def test_piped_text_fills_the_snippet_only_where_an_op_compares_code() -> None:
    piped = "def f():\n    pass\n"
    for op in ("duplicates", "consistent", "place", "similar"):
        assert CODEBASE.piped_args({"op": op}, piped) == {"snippet": piped}
    for op in ("overview", "top-files", "search", "conventions", "signature", "files", "bogus"):
        assert CODEBASE.piped_args({"op": op}, piped) == {}
    assert CODEBASE.piped_args({}, piped) == {}  # the default op, overview
    assert CODEBASE.piped_args({"op": "similar", "name": "get_user"}, piped) == {}
    assert CODEBASE.piped_args({"op": "duplicates", "snippet": "x = 1"}, piped) == {}
    assert CODEBASE.piped_args({"op": "duplicates"}, None) == {}
    assert CODEBASE.piped_args({"op": "duplicates"}, "  \n") == {}
    for tool in TOOL_REGISTRY.values():
        if tool.name != "codebase":
            assert tool.piped_args({"op": "duplicates"}, piped) == {}


@pytest.mark.invariant
def test_a_snippet_is_never_routable() -> None:
    assert SNIPPET_ARG not in CODEBASE.routable_args and "root" not in CODEBASE.routable_args
    assert CODEBASE.extract_args("does this duplicate snippet=def f(): pass") == {
        "op": "duplicates"
    }


def test_gather_passes_piped_text_as_the_snippet(clones: Path) -> None:
    plan = ContextPlan(granted=READ, route_threshold=0.5)
    snippet = RENAMED.replace("tally_invoices", "count_paid")
    prompt = "does this duplicate existing code?\n\n" + snippet
    ctx = gather(prompt, plan, piped=snippet)
    assert ctx.routing is not None and ctx.routing.args == {"op": "duplicates"}
    (result,) = ctx.tool_results
    assert result.output.startswith("Query: duplicates snippet=<")
    assert "billing/invoices.py" in result.output
    plain = gather(prompt, plan)  # nothing piped: clone groups of the whole tree
    assert plain.tool_results[0].output.startswith("Query: duplicates\n1. ")


def test_gather_gives_an_explicit_tool_the_piped_snippet_unless_the_command_line_did(
    clones: Path,
) -> None:
    plan = ContextPlan(granted=READ, tool=CODEBASE, tool_args={"op": "duplicates"})
    (piped,) = gather("q", plan, piped=ORIGINAL).tool_results
    assert "exact" in piped.output
    given_ = ContextPlan(
        granted=READ, tool=CODEBASE, tool_args={"op": "duplicates", "snippet": UNRELATED}
    )
    (kept,) = gather("q", given_, piped=ORIGINAL).tool_results
    assert "greet" in kept.output and "shop/orders.py" not in kept.output


# -- diffs -------------------------------------------------------------------------------------

DIFF = """diff --git a/app/new.py b/app/new.py
new file mode 100644
--- /dev/null
+++ b/app/new.py
@@ -0,0 +1,4 @@
+def helper(x):
+    return x
+
+
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1,3 +1,4 @@
 # Title
+More words.
 text
 end
diff --git a/app/old.py b/app/old.py
--- a/app/old.py
+++ b/app/old.py
@@ -10,5 +10,7 @@ def f():
     a = 1
-    b = 2
+    b = 3
+    c = 4
     return a
\\ No newline at end of file
@@ -30 +32,2 @@
-x = 1
+x = 2
+y = 3
"""


def test_a_diff_is_read_as_the_runs_of_code_it_adds() -> None:
    runs = added_code(DIFF)
    assert runs is not None
    assert [(p.path, p.start, p.end, p.language) for p in runs] == [
        ("app/new.py", 1, 4, "python"),
        ("README.md", 2, 2, None),
        ("app/old.py", 11, 12, "python"),
        ("app/old.py", 32, 33, "python"),
    ]
    assert runs[0].text == "def helper(x):\n    return x\n"
    assert runs[2].text == "b = 3\nc = 4\n"  # dedented
    assert added_code("def f():\n    return 1\n") is None
    assert [p.path for p in pieces(DIFF)] == ["app/new.py", "app/old.py", "app/old.py"]
    code, language = one_snippet(DIFF)
    assert language == "python" and code.startswith("def helper(x):")
    only_docs = "--- a/x.md\n+++ b/x.md\n@@ -1 +1 @@\n-a\n+b\n"
    with pytest.raises(GraphError, match="adds no code"):
        pieces(only_docs)


@given(st.text(max_size=400))
def test_reading_any_text_as_a_diff_never_raises(text: str) -> None:
    found = added_code("@@ -1,3 +1,3 @@\n" + text)
    assert found is not None
    assert all(p.start >= 1 and p.end >= p.start for p in found)


# -- routing -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "args"),
    [
        ("does this duplicate existing code?", {"op": "duplicates"}),
        ("is there duplicate code in the billing module?", {"op": "duplicates"}),
        (
            "is there already a function that fetches users by id?",
            {"op": "similar", "name": "fetch_user_by_id"},
        ),
        ("is there already a function like parse_date?", {"op": "similar", "name": "parse_date"}),
        ("Is there already a function that does this?", {"op": "similar"}),
        ("what is the convention for error handling?", {"op": "conventions", "topic": "errors"}),
        ("what's the convention for logging here", {"op": "conventions", "topic": "logging"}),
        ("what are the naming conventions?", {"op": "conventions", "topic": "naming"}),
        ("what is the convention for this?", {"op": "conventions"}),
        (
            "where should I put a function that parses invoices?",
            {"op": "place", "description": "a function that parses invoices"},
        ),
        ("where should I put this?", {"op": "place"}),
        ("is this consistent with app/users?", {"op": "consistent", "paths": "app/users"}),
        ("is this consistent with the rest of the codebase?", {"op": "consistent"}),
        ("does this follow the conventions?", {"op": "consistent"}),
    ],
)
def test_review_questions_route_to_their_op(prompt: str, args: dict[str, str]) -> None:
    catalog = discover_skills()
    targets = targets_from(TOOL_REGISTRY.values(), catalog.skills.values())
    decision = route(prompt, targets, tools=TOOL_REGISTRY)
    assert (decision.target, decision.target_type) == ("codebase", "tool")
    assert decision.args == args
    assert decision.confidence >= 0.5


@pytest.mark.parametrize(
    "prompt",
    ["where should we go for dinner?", "review this diff", "is it raining?", "duplicate"],
)
def test_other_prompts_do_not_route_to_the_judgment_ops(prompt: str) -> None:
    catalog = discover_skills()
    targets = targets_from(TOOL_REGISTRY.values(), catalog.skills.values())
    decision = route(prompt, targets, tools=TOOL_REGISTRY)
    assert decision.target != "codebase" or decision.args.get("op") not in JUDGMENT_OPS
