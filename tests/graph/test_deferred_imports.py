"""Imports inside a function run only when it is called: recorded as such (`Import.runs ==
"call"`), kept as edges of kind `lazy`, and left out of `cycles` unless asked for; so do those
in the body of `if __name__ == "__main__":`, which run only when the file is run as a script
(`script`: rich's `pager.py` imports `rich.__main__` there for a demo).

Python code imports inside a function precisely to break an import-time cycle (python-dateutil's
`tz.py` imports `rrule` inside a method, `rrule.py` imports `parser` inside one, and importing
the package never loops). A module-level `try: import x / except ImportError:` and an import in
a class body do run when the module is imported: those count. The edge kinds order by when the
earliest import between two files runs: `import` (at import time), `lazy` (when a function is
called), `type` (never: for the type checker).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import needs_ore, run_ore
from _trees import write_tree

from ore.graph import open_graph
from ore.graph.index.extract import extract

TREE = {
    "pkg/__init__.py": "",
    # dateutil's loop: parser -> tz at import time, tz -> rrule and rrule -> parser in functions
    "pkg/parser.py": "from pkg import tz\n",
    "pkg/tz.py": (
        "import sys\ndef gettz(name):\n    from pkg import rrule\n    return rrule.rrule(name)\n"
    ),
    "pkg/rrule.py": (
        "class rrule:\n"
        "    def parse(self, text):\n"
        "        from pkg.parser import parse\n"
        "        return parse(text)\n"
    ),
    # nested: an import deep in a function in a function, under an `if` and a `try`
    "pkg/nest_a.py": "from pkg import nest_b\n",
    "pkg/nest_b.py": (
        "def outer():\n"
        "    async def inner():\n"
        "        if True:\n"
        "            try:\n"
        "                from pkg import nest_a\n"
        "            except ImportError:\n"
        "                nest_a = None\n"
        "    return inner\n"
    ),
    # a demo under `if __name__ == "__main__":` runs only when the file is run as a script
    "pkg/demo_a.py": "from pkg import demo_b\n",
    "pkg/demo_b.py": 'if __name__ == "__main__":\n    from pkg.demo_a import main\n    main()\n',
    # counted: a module-level `try:` import runs when the module is imported
    "pkg/try_a.py": (
        "try:\n    from pkg import try_b\nexcept ImportError:  # pragma: no cover\n    try_b = None\n"
    ),
    "pkg/try_b.py": "import pkg.try_a\n",
    # counted: an import in a class body runs when the class statement does, at import time
    "pkg/cls_a.py": "class A:\n    from pkg import cls_b\n",
    "pkg/cls_b.py": "from pkg import cls_a\n",
}

EAGER = [("pkg/cls_a.py", "pkg/cls_b.py"), ("pkg/try_a.py", "pkg/try_b.py")]
DEFERRED = [
    ("pkg/demo_a.py", "pkg/demo_b.py"),
    ("pkg/nest_a.py", "pkg/nest_b.py"),
    ("pkg/parser.py", "pkg/rrule.py", "pkg/tz.py"),
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "proj", TREE)


# -- extraction ----------------------------------------------------------------------------


def test_an_import_in_a_function_body_runs_when_it_is_called() -> None:
    src = b"""import m1
try:
    import m2
except ImportError:
    m2 = None
class K:
    import m3
    def method(self):
        import m4
    @property
    def prop(self):
        from . import m5
def f():
    if m1:
        from m6 import x
    def g():
        try:
            import m7
        except ImportError:
            pass
    class Inner:
        import m8
    from typing import TYPE_CHECKING
    if TYPE_CHECKING:
        import m9
async def af():
    import m10
@decorator
def df():
    import m11
lam = lambda: __import__("m12")
if m1:
    import m13
if __name__ == "__main__":
    import m14
    def main():
        import m15
else:
    import m16
"""
    record = extract("m.py", "python", src)
    runs = {imp.module or imp.names[0]: imp.runs for imp in record.imports}
    assert runs == {
        "m1": "import",
        "m2": "import",  # a module-level try: runs at import time
        "m3": "import",  # a class body: runs when the class statement does
        "m4": "call",
        "m5": "call",
        "m6": "call",
        "m7": "call",
        "m8": "call",  # a class in a function: made when the function runs
        "typing": "call",
        "m9": "never",  # for the type checker, wherever it is
        "m10": "call",
        "m11": "call",
        "m13": "import",
        "m14": "script",  # only when the file is run as a script
        "m15": "call",
        "m16": "import",  # the else of that guard runs on import
    }


def test_an_edit_that_moves_an_import_into_a_function_is_read_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`ore mcp` re-reads only the top-level nodes an edit touched (`revisit`): the record is
    the one a fresh read of the whole tree gives."""
    from ore.graph.index import extract as extraction
    from ore.graph.index import languages, revisit

    monkeypatch.setattr(languages, "_LAST", [])
    monkeypatch.setattr(revisit, "_KEPT", [])
    text = b"import a\n\ndef f():\n    return 1\n\nclass K:\n    import c\n"
    extraction.extract("m.py", "python", text)
    extraction.extract("m.py", "python", text + b"# one\n")  # the first edit reads all
    for edit in (b"    import b\n    return 1\n", b"    if x:\n        import b\n"):
        record = extraction.extract("m.py", "python", text.replace(b"    return 1\n", edit))
        assert record == extract("m.py", "python", text.replace(b"    return 1\n", edit))
        assert [i.runs for i in record.imports] == ["import", "call", "import"]


# -- edges ---------------------------------------------------------------------------------


def test_an_edge_of_imports_in_functions_only_is_lazy(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path / "proj",
        {
            "a.py": "import b\ndef f():\n    import b\n",  # one at import time: `import`
            "b.py": "def f():\n    import c\n",  # only in a function: `lazy`
            "c.py": (  # in a function and for the type checker: `lazy` (it runs, when called)
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    import d\n"
                "def f():\n    import d\n"
            ),
            "d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n",
        },
    )
    g = open_graph(root, jobs=1)
    kinds = {(e.source, e.target): e.kind for e in g.index.edges if e.kind != "reference"}
    assert kinds == {
        ("a.py", "b.py"): "import",
        ("b.py", "c.py"): "lazy",
        ("c.py", "d.py"): "lazy",
        ("d.py", "a.py"): "type",
    }
    # still a dependency: dependents and dependencies see it, and say which kind it is
    assert "lazy" in {n.path: n.kinds for n in g.dependents("c.py")}["b.py"]
    assert "c.py" in {n.path for n in g.dependencies("b.py")}
    assert g.stats().import_edges == 4


def test_exports_carry_the_lazy_kind(root: Path) -> None:
    from ore.graph.render.export import export

    g = open_graph(root, jobs=1)
    edges = json.loads(export(g, "json"))["edges"]
    assert {"source": "pkg/tz.py", "target": "pkg/rrule.py", "kind": "lazy"}.items() <= next(
        e for e in edges if (e["source"], e["target"]) == ("pkg/tz.py", "pkg/rrule.py")
    ).items()
    assert '<data key="kind">lazy</data>' in export(g, "graphml")
    assert "kind=lazy, style=dashed" in export(g, "dot")
    assert "-.->" in export(g, "mermaid")


# -- cycles --------------------------------------------------------------------------------


def test_cycles_closed_only_in_functions_are_listed_only_when_asked_for(root: Path) -> None:
    g = open_graph(root, jobs=1)
    assert sorted(c.files for c in g.cycles()) == EAGER
    assert all(c.runtime for c in g.cycles())
    every = g.cycles(include_deferred_imports=True)
    assert {c.files: c.runtime for c in every} == {
        **{files: True for files in EAGER},
        **{files: False for files in DEFERRED},
    }
    # the earlier keyword, kept as its alias, answers the same
    assert g.cycles(include_type_imports=True) == every
    # the signature's cycle line counts the same cycles as `cycles`
    text = g.signature("max", None).text
    assert "import cycles (2):" in text
    assert "pkg/rrule.py" not in text.split("import cycles (2):")[1].split(":\n")[0]


def test_a_component_is_only_as_large_as_its_import_time_edges(tmp_path: Path) -> None:
    """p <-> q at import time, and r joins them only through an import in a function: the
    cycle is p and q; with deferred imports the component holds r, its loop the eager one."""
    root = write_tree(
        tmp_path / "proj",
        {"p.py": "import q\nimport r\n", "q.py": "import p\n", "r.py": "def f():\n    import p\n"},
    )
    g = open_graph(root, jobs=1)
    assert [c.files for c in g.cycles()] == [("p.py", "q.py")]
    [whole] = g.cycles(include_deferred_imports=True)
    assert whole.files == ("p.py", "q.py", "r.py")
    assert whole.runtime and set(whole.cycle) == {"p.py", "q.py"}


def test_moving_an_import_into_a_function_is_seen_warm_and_patched(root: Path) -> None:
    """The cache keeps when each import runs, and `ore mcp`'s graph, patched in memory, reads
    an import moved into a function as an import change: both answer as a fresh graph."""
    from ore.graph.serve import WarmGraph

    assert sorted(c.files for c in open_graph(root, jobs=1).cycles()) == EAGER
    assert sorted(c.files for c in open_graph(root, jobs=1).cycles()) == EAGER  # warm
    warm = WarmGraph(root)
    try:
        assert sorted(c.files for c in warm.graph().cycles()) == EAGER
        (root / "pkg/try_b.py").write_text("def f():\n    import pkg.try_a\n")
        patched = warm.graph()
        assert [c.files for c in patched.cycles()] == [EAGER[0]]
        assert len(patched.cycles(include_deferred_imports=True)) == 1 + 1 + len(DEFERRED)
    finally:
        warm.close()
    fresh = open_graph(root, jobs=1)
    assert fresh.index.edge_columns == patched.index.edge_columns
    assert [c.files for c in fresh.cycles()] == [EAGER[0]]


# -- the command ---------------------------------------------------------------------------


@needs_ore
def test_the_command_lists_eager_cycles_and_deferred_ones_with_the_flag(
    root: Path, ore_env: dict[str, str]
) -> None:
    plain = run_ore("graph", "cycles", "--root", str(root), "--json", env=ore_env)
    assert (plain.returncode, plain.stderr) == (0, "")
    assert sorted((tuple(c["files"]), c["runtime"]) for c in json.loads(plain.stdout)) == [
        (files, True) for files in EAGER
    ]
    expected = {**{f: True for f in EAGER}, **{f: False for f in DEFERRED}}
    for flag in ("--include-deferred-imports", "--include-type-imports"):
        every = run_ore("graph", "cycles", flag, "--root", str(root), "--json", env=ore_env)
        assert (every.returncode, every.stderr) == (0, "")
        assert {tuple(c["files"]): c["runtime"] for c in json.loads(every.stdout)} == expected
    table = run_ore(
        "graph", "cycles", "--include-deferred-imports", "--root", str(root), env=ore_env
    )
    assert table.returncode == 0
    assert table.stdout.count("only through deferred imports") == len(DEFERRED)
    shown = run_ore("graph", "dependents", "pkg/rrule.py", "--root", str(root), env=ore_env)
    assert shown.returncode == 0
    assert "lazy" in next(line for line in shown.stdout.splitlines() if "pkg/tz.py" in line)
