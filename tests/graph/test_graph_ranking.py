"""Ranking: a reference edge is evidence of a dependency, and leaves never outrank what they use."""

from __future__ import annotations

from pathlib import Path

from ore.graph import CodeGraph, open_graph


def graph(base: Path, files: dict[str, str]) -> CodeGraph:
    root = base / "proj"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return open_graph(root, jobs=1)


def references(g: CodeGraph) -> set[tuple[str, str]]:
    return {(e.source, e.target) for e in g.index.edges if e.kind == "reference"}


# A project file that happens to define common method names, and code that calls those methods on
# receivers the caller never imported: none of these calls says which file it depends on.
COMMON_NAMES = (
    "class MutableList:\n"
    "    def append(self, x): pass\n"
    "    def items(self): pass\n"
    "    def get(self, k): pass\n"
    "    def format(self): pass\n"
    "def super(): pass\n"
)
CALLER = (
    "def work(xs, d):\n"
    "    xs.append(1)\n"
    "    for k, v in d.items():\n"
    "        d.get(k)\n"
    "    return '{}'.format(super().__init__())\n"
)


def test_method_calls_on_unknown_receivers_are_not_references(tmp_path: Path) -> None:
    files = {f"app/m{n}.py": CALLER for n in range(6)}
    files["app/__init__.py"] = ""
    files["gis/mutable_list.py"] = COMMON_NAMES
    g = graph(tmp_path, files)
    assert not any(target == "gis/mutable_list.py" for _source, target in references(g))
    assert g.dependents("gis/mutable_list.py") == []


def test_references_are_names_bound_by_imports(tmp_path: Path) -> None:
    g = graph(
        tmp_path,
        {
            "pkg/__init__.py": "from pkg.base import Model\n",
            "pkg/base.py": "class Model:\n    pass\n",
            "pkg/util.py": "def helper():\n    pass\nclass Widget:\n    pass\n",
            "pkg/deco.py": "def register(f):\n    return f\n",
            "a.py": "from pkg.util import helper\nhelper()\n",  # from m import f; f()
            "b.py": "import pkg.util\npkg.util.helper()\n",  # qualified through a module
            "c.py": "from pkg import util as u\nclass W(u.Widget):\n    pass\n",  # subclass via alias
            "d.py": "from pkg import Model\nclass M(Model):\n    pass\n",  # through a re-export
            "e.py": "from pkg import deco\n@deco.register\ndef f():\n    pass\n",
            "f.py": "helper()\nWidget()\n",  # never imported: no edge
        },
    )
    refs = references(g)
    assert {("a.py", "pkg/util.py"), ("b.py", "pkg/util.py"), ("c.py", "pkg/util.py")} <= refs
    assert ("d.py", "pkg/base.py") in refs  # the definer behind `pkg/__init__.py`
    assert ("e.py", "pkg/deco.py") in refs
    assert not any(source == "f.py" for source, _target in refs)


def test_private_names_weigh_less(tmp_path: Path) -> None:
    g = graph(
        tmp_path,
        {
            "lib.py": "def compute_total():\n    pass\ndef _private():\n    pass\n",
            "c.py": "from lib import compute_total\ncompute_total()\n",
            "e.py": "from lib import _private\n_private()\n",
        },
    )
    weight = {(e.source, e.target, e.kind): e.weight for e in g.index.edges}
    assert 0 < weight["e.py", "lib.py", "reference"] < weight["c.py", "lib.py", "reference"] < 1
    assert weight["c.py", "lib.py", "reference"] < weight["c.py", "lib.py", "import"]


def test_test_files_never_outrank_the_code_they_test(tmp_path: Path) -> None:
    # The test module defines helpers named like dict methods (`items`, `values`, `keys`, `get`)
    # and the application calls those methods on its own dicts everywhere.
    files = {
        "app/__init__.py": "",
        "app/core.py": "def total(xs):\n    return sum(xs)\n",
        "tests/test_core.py": (
            "from app.core import total\n"
            "def items(): return [1]\ndef values(): return [2]\n"
            "def keys(): return [3]\ndef get(): return 4\n"
            "def test_total():\n    assert total(items()) == 1\n"
        ),
    }
    for n in range(8):
        files[f"app/view{n}.py"] = (
            "from app.core import total\n"
            "def show(d):\n    return total(d.values()) + len(d.keys()) + len(d.items()) + d.get(1)\n"
        )
    g = graph(tmp_path, files)
    order = [f.path for f in g.top_files(None)]
    assert order.index("app/core.py") < order.index("tests/test_core.py")
    assert g.dependents("tests/test_core.py") == []


def test_a_helper_only_tests_import_stays_below_the_code(tmp_path: Path) -> None:
    # `tests/_helpers.py` runs the program as a subprocess and is imported by every test module,
    # as ORE's own `tests/_cli.py` is; the application's modules import one another. Rank that
    # comes only from tests must not lift the helper above the application, not even its leaf.
    files = {
        "app/__init__.py": "",
        "app/core.py": "def total(xs):\n    return sum(xs)\n",
        "app/api.py": "from app.core import total\ndef serve(d):\n    return total(d)\n",
        "app/cli.py": "from app.api import serve\nfrom app.core import total\n",
        "tests/_helpers.py": "import subprocess\ndef run(*args):\n    return subprocess.run(args)\n",
    }
    for n in range(12):
        files[f"tests/test_{n}.py"] = (
            "from app.core import total\nfrom tests._helpers import run\n"
            "def test_it():\n    assert run('app') and total([1]) == 1\n"
        )
    g = graph(tmp_path, files)
    order = [f.path for f in g.top_files(None)]
    for app in ("app/core.py", "app/api.py", "app/cli.py"):
        assert order.index(app) < order.index("tests/_helpers.py"), order


def test_go_same_package_and_qualified_references(tmp_path: Path) -> None:
    g = graph(
        tmp_path,
        {
            "go.mod": "module example.com/app\n",
            "util/do.go": "package util\nfunc Do() {}\ntype Thing struct{}\n",
            "util/more.go": "package util\nfunc More() { Do() }\n",
            "main.go": (
                'package main\nimport "example.com/app/util"\n'
                "func main() { util.Do(); var t util.Thing; x.Get(); _ = t }\n"
            ),
            "other/get.go": "package other\nfunc Get() {}\n",
        },
    )
    refs = references(g)
    assert {("util/more.go", "util/do.go"), ("main.go", "util/do.go")} <= refs
    assert ("main.go", "util/more.go") not in refs  # More is not used
    assert not any(target == "other/get.go" for _source, target in refs)


def test_js_references_follow_imports_not_member_names(tmp_path: Path) -> None:
    g = graph(
        tmp_path,
        {
            "src/api.ts": "export function fetchUser() {}\nexport class Client {}\n",
            "src/index.ts": "export * from './api';\n",
            "src/list.ts": "export function push() {}\nexport function map() {}\n",
            "src/app.ts": (
                "import { fetchUser } from './index';\nimport * as ns from './api';\n"
                "fetchUser(); new ns.Client(); [1].map(x => x); arr.push(2);\n"
            ),
        },
    )
    refs = references(g)
    assert ("src/app.ts", "src/api.ts") in refs  # through the `export *` barrel
    assert not any(target == "src/list.ts" for _source, target in refs)
