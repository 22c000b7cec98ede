"""Imports that exist only for the type checker: recorded as such, kept as edges of kind `type`,
and left out of `cycles` unless asked for.

A Python import inside the body of `if TYPE_CHECKING:` (or `if typing.TYPE_CHECKING:`, any
`X.TYPE_CHECKING`) never runs, and neither does a TypeScript `import type` / `export type ...
from`. A loop that only closes through such an import is no import cycle at runtime: projects
write them precisely to avoid one. An import in the `else:` of that `if` does run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import needs_ore, run_ore
from _trees import write_tree

from ore.graph import open_graph
from ore.graph.index.extract import extract

#: One runtime cycle (run_a <-> run_b, closed by an import in an `else:`), and three loops that
#: close only through a typing-only import, one per way of writing the guard.
TREE = {
    "pkg/__init__.py": "",
    # runtime: run_a -> run_b -> run_a (the else branch runs)
    "pkg/run_a.py": "from pkg import run_b\n",
    "pkg/run_b.py": (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    pass\n"
        "else:\n"
        "    from pkg import run_a\n"
    ),
    # typing only: a -> b at runtime, b -> a under `if TYPE_CHECKING:`
    "pkg/a.py": "from pkg import b\n",
    "pkg/b.py": (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg import a\n"
        "def f(x: a.A) -> None: ...\n"
    ),
    # typing only: c -> d under `if typing.TYPE_CHECKING:`, d -> c at runtime
    "pkg/c.py": "import typing\nif typing.TYPE_CHECKING:\n    import pkg.d\n",
    "pkg/d.py": "from . import c\n",
    # typing only: x -> y nested under `if t.TYPE_CHECKING:`, y -> x at runtime
    "pkg/x.py": (
        "import sys\n"
        "import typing as t\n"
        "if t.TYPE_CHECKING:\n"
        "    if sys.version_info >= (3, 11):\n"
        "        from pkg.y import Y\n"
    ),
    "pkg/y.py": "from pkg.x import *\nclass Y: ...\n",
}

RUNTIME = ("pkg/run_a.py", "pkg/run_b.py")
TYPING_ONLY = [("pkg/a.py", "pkg/b.py"), ("pkg/c.py", "pkg/d.py"), ("pkg/x.py", "pkg/y.py")]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "proj", TREE)


# -- extraction ----------------------------------------------------------------------------


def test_an_import_in_the_body_of_if_type_checking_is_typing_only() -> None:
    src = b"""import os
from typing import TYPE_CHECKING
import typing, typing as t
if TYPE_CHECKING:
    from m1 import A
    import m2
    if True:
        import m3
if typing.TYPE_CHECKING:
    import m4
elif os.name:
    import m5
else:
    import m6
if t.TYPE_CHECKING:
    from . import m7
if not TYPE_CHECKING:
    import m8
if TYPE_CHECKING or os.name:
    import m9
def f():
    if TYPE_CHECKING:
        import m10
"""
    record = extract("m.py", "python", src)
    typing_only = {imp.module or imp.names[0]: imp.runs == "never" for imp in record.imports}
    assert typing_only == {
        "os": False,
        "typing": False,
        "m1": True,
        "m2": True,
        "m3": True,
        "m4": True,
        "m5": False,  # an elif, an else: code that runs
        "m6": False,
        "m7": True,
        "m8": False,
        "m9": False,  # only the plain guard is read
        "m10": True,
    }
    # the statement's form is kept: resolution reads `from` and `import` as before
    assert [imp.kind for imp in record.imports if imp.module in ("m1", "m2")] == ["from", "import"]


def test_typescript_type_imports_are_typing_only_too() -> None:
    src = b"""import a from './a';
import type { T } from './t';
export type { U } from './u';
export { v } from './v';
"""
    record = extract("x.ts", "typescript", src)
    assert [(i.module, i.kind, i.runs == "never") for i in record.imports] == [
        ("./a", "import", False),
        ("./t", "type", True),
        ("./u", "export", True),
        ("./v", "export", False),
    ]


# -- edges ---------------------------------------------------------------------------------


def test_a_typing_only_dependency_is_an_edge_of_kind_type(root: Path) -> None:
    g = open_graph(root, jobs=1)
    kinds = {(e.source, e.target): e.kind for e in g.index.edges if e.kind != "reference"}
    assert kinds["pkg/a.py", "pkg/b.py"] == "import"
    assert kinds["pkg/b.py", "pkg/a.py"] == "type"
    assert kinds["pkg/c.py", "pkg/d.py"] == "type"
    assert kinds["pkg/run_b.py", "pkg/run_a.py"] == "import"
    # still a dependency: dependents and dependencies see it, and say which kind it is
    dependents = {n.path: n.kinds for n in g.dependents("pkg/a.py")}
    assert "type" in dependents["pkg/b.py"]
    assert "pkg/d.py" in {n.path for n in g.dependencies("pkg/c.py")}


def test_one_runtime_import_makes_the_edge_a_runtime_one(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "proj",
        {
            "m.py": "import n\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import n\n",
            "n.py": "",
        },
    )
    g = open_graph(root, jobs=1)
    assert [(e.source, e.target, e.kind) for e in g.index.edges] == [("m.py", "n.py", "import")]


# -- cycles --------------------------------------------------------------------------------


def test_cycles_are_runtime_cycles_unless_type_imports_are_asked_for(root: Path) -> None:
    g = open_graph(root, jobs=1)
    cycles = g.cycles()
    assert [c.files for c in cycles] == [RUNTIME]
    assert cycles[0].runtime and cycles[0].cycle[0] == cycles[0].cycle[-1]
    every = g.cycles(include_type_imports=True)
    assert sorted(c.files for c in every) == sorted([RUNTIME, *TYPING_ONLY])
    assert {c.files: c.runtime for c in every} == {
        RUNTIME: True,
        **{files: False for files in TYPING_ONLY},
    }


def test_a_component_is_made_of_runtime_imports(tmp_path: Path) -> None:
    """p -> q -> p at runtime, and r joins them only through a typing-only import: the cycle
    is p and q; with type imports the component holds r, and its loop shown is the runtime
    one."""
    root = write_tree(
        tmp_path / "proj",
        {
            "p.py": "import q\nimport r\n",
            "q.py": "import p\n",
            "r.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import p\n",
        },
    )
    g = open_graph(root, jobs=1)
    assert [c.files for c in g.cycles()] == [("p.py", "q.py")]
    [whole] = g.cycles(include_type_imports=True)
    assert whole.files == ("p.py", "q.py", "r.py")
    assert whole.runtime and set(whole.cycle) == {"p.py", "q.py"}


def test_moving_an_import_under_type_checking_is_seen_on_the_next_query(root: Path) -> None:
    """The cache keeps the flag: a warm query answers alike, and an edit that only moves an
    import under the guard changes the answer."""
    assert [c.files for c in open_graph(root, jobs=1).cycles()] == [RUNTIME]
    assert [c.files for c in open_graph(root, jobs=1).cycles()] == [RUNTIME]  # warm
    (root / "pkg/run_b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import run_a\n"
    )
    assert open_graph(root, jobs=1).cycles() == []


def test_a_warm_graph_patched_by_such_an_edit_answers_as_a_fresh_one(root: Path) -> None:
    """`ore mcp`'s graph, patched in memory: moving an import under the guard is an import
    change (the edge becomes `type`), not an edit that keeps the edges."""
    from ore.graph.serve import WarmGraph

    warm = WarmGraph(root)
    try:
        assert [c.files for c in warm.graph().cycles()] == [RUNTIME]
        (root / "pkg/run_b.py").write_text(
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import run_a\n"
        )
        patched = warm.graph()
        assert patched.cycles() == []
        assert len(patched.cycles(include_type_imports=True)) == 1 + len(TYPING_ONLY)
    finally:
        warm.close()
    fresh = open_graph(root, jobs=1)
    assert fresh.index.edge_columns == patched.index.edge_columns


# -- the command ---------------------------------------------------------------------------


@needs_ore
def test_the_command_lists_runtime_cycles_and_all_with_the_flag(
    root: Path, ore_env: dict[str, str]
) -> None:
    plain = run_ore("graph", "cycles", "--root", str(root), "--json", env=ore_env)
    assert (plain.returncode, plain.stderr) == (0, "")
    assert [(tuple(c["files"]), c["runtime"]) for c in json.loads(plain.stdout)] == [
        (RUNTIME, True)
    ]
    flag = "--include-type-imports"
    every = run_ore("graph", "cycles", flag, "--root", str(root), "--json", env=ore_env)
    assert (every.returncode, every.stderr) == (0, "")
    found = {tuple(c["files"]): c["runtime"] for c in json.loads(every.stdout)}
    assert found == {RUNTIME: True, **{files: False for files in TYPING_ONLY}}
    table = run_ore("graph", "cycles", flag, "--root", str(root), env=ore_env)
    assert table.returncode == 0
    assert table.stdout.count("only through deferred imports") == len(TYPING_ONLY)
