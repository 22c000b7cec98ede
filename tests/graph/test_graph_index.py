"""Extraction and import resolution, language by language, on small fixture trees."""

from __future__ import annotations

from pathlib import Path

import pytest

from ore.graph import open_graph
from ore.graph.index.extract import extract


def tree(base: Path, files: dict[str, str]) -> Path:
    root = base / "proj"
    root.mkdir(exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def imports_of(root: Path) -> set[tuple[str, str]]:
    """The import edges, typing-only ones (kind `type`) too."""
    g = open_graph(root, jobs=1)
    return {(e.source, e.target) for e in g.index.edges if e.kind != "reference"}


# -- extraction ------------------------------------------------------------------------------


def test_python_symbols_have_kinds_lines_and_signatures() -> None:
    src = b"X = 1\nclass A(B):\n    @d\n    def m(self, a: int) -> None:\n        pass\n\ndef f(\n    x,\n):\n    return x\n"
    record = extract("a.py", "python", src)
    got = {(s.name, s.kind, s.line, s.end_line) for s in record.symbols}
    assert got == {
        ("X", "variable", 1, 1),
        ("A", "class", 2, 5),
        ("m", "method", 4, 5),
        ("f", "function", 7, 10),
    }
    sig = {s.name: s.signature for s in record.symbols}
    assert sig["m"] == "def m(self, a: int) -> None"
    assert sig["f"] == "def f(x,)"


def test_python_syntax_error_keeps_what_parses() -> None:
    record = extract(
        "a.py", "python", b"def good():\n    pass\n\ndef bad(:\n\nclass C:\n    pass\n"
    )
    assert record.parse_error
    assert {"good", "C"} <= {s.name for s in record.symbols}


@pytest.mark.parametrize(
    ("language", "path", "src", "expected"),
    [
        (
            "javascript",
            "a.js",
            "class K {}\nfunction f() {}\nconst g = () => 1;\nlet v = 2;",
            {("K", "class"), ("f", "function"), ("g", "function"), ("v", "variable")},
        ),
        (
            "typescript",
            "a.ts",
            "interface I {}\ntype T = I;\nenum E { A }\nexport class C { m() {} }",
            {("I", "interface"), ("T", "type"), ("E", "enum"), ("C", "class"), ("m", "method")},
        ),
        ("tsx", "a.tsx", "export function App() { return <div/>; }", {("App", "function")}),
        (
            "go",
            "a.go",
            "package a\ntype S struct{}\ntype I interface{}\nfunc F() {}\nfunc (s S) M() {}",
            {("S", "class"), ("I", "interface"), ("F", "function"), ("M", "method")},
        ),
        (
            "rust",
            "a.rs",
            "struct S;\nenum E { A }\ntrait T {}\nimpl S { fn m(&self) {} }\nfn f() {}",
            {("S", "class"), ("E", "enum"), ("T", "interface"), ("m", "method"), ("f", "function")},
        ),
    ],
    ids=["javascript", "typescript", "tsx", "go", "rust"],
)
def test_symbols_per_language(
    language: str, path: str, src: str, expected: set[tuple[str, str]]
) -> None:
    record = extract(path, language, src.encode())
    assert {(s.name, s.kind) for s in record.symbols} == expected


def test_js_import_kinds() -> None:
    src = b"""import a from './a'; import type {T} from './t.js'; export * from './b';
const c = require('./c'); const d = import('./d'); import 'pkg';"""
    record = extract("x.ts", "typescript", src)
    assert [(i.module, i.kind) for i in record.imports] == [
        ("./a", "import"),
        ("./t.js", "type"),
        ("./b", "export"),
        ("./c", "require"),
        ("./d", "dynamic"),
        ("pkg", "import"),
    ]


# -- Python resolution -----------------------------------------------------------------------


def test_python_absolute_and_relative_imports(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "import pkg.b\nfrom . import c\nfrom .sub import d\nfrom .. import nothing\n",
            "pkg/b.py": "",
            "pkg/c.py": "",
            "pkg/sub/__init__.py": "from ..b import x\n",
            "pkg/sub/d.py": "from ...pkg import b\n",
        },
    )
    assert imports_of(root) == {
        ("pkg/a.py", "pkg/b.py"),
        ("pkg/a.py", "pkg/c.py"),
        ("pkg/a.py", "pkg/sub/d.py"),
        ("pkg/sub/__init__.py", "pkg/b.py"),
    }


def test_from_package_import_name_prefers_submodule_else_package(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "pkg/__init__.py": "VALUE = 1\n",
            "pkg/mod.py": "",
            "main.py": "from pkg import mod, VALUE\n",
        },
    )
    assert imports_of(root) == {("main.py", "pkg/mod.py"), ("main.py", "pkg/__init__.py")}


def test_import_of_missing_submodule_goes_to_nearest_package(tmp_path: Path) -> None:
    root = tree(tmp_path, {"pkg/__init__.py": "", "main.py": "import pkg.gone\nimport os\n"})
    g = open_graph(root, jobs=1)
    assert {(e.source, e.target) for e in g.index.edges} == {("main.py", "pkg/__init__.py")}
    assert g.index.externals["main.py"] == ("os",)


def test_src_layout_is_an_import_base(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "src/lib/__init__.py": "",
            "src/lib/core.py": "",
            "tests/test_core.py": "from lib.core import thing\nfrom lib import core\n",
        },
    )
    assert imports_of(root) == {("tests/test_core.py", "src/lib/core.py")}


def test_root_that_is_itself_a_package(tmp_path: Path) -> None:
    root = tree(tmp_path, {"__init__.py": "", "a.py": "from proj import b\nimport b\n", "b.py": ""})
    # `import b` would need proj/ on sys.path, which a package's own folder is not
    assert imports_of(root) == {("a.py", "b.py")}


def test_imports_inside_functions_and_type_checking(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "m/__init__.py": "",
            "m/a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from m.b import B\n"
                "def f():\n    from m import c\n    return c\n"
            ),
            "m/b.py": "",
            "m/c.py": "",
        },
    )
    assert imports_of(root) == {("m/a.py", "m/b.py"), ("m/a.py", "m/c.py")}


def test_script_imports_its_own_folder(tmp_path: Path) -> None:
    root = tree(tmp_path, {"tools/run.py": "import helper\n", "tools/helper.py": ""})
    assert imports_of(root) == {("tools/run.py", "tools/helper.py")}


# -- JS / TS resolution ----------------------------------------------------------------------


def test_js_ts_specifiers(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "src/main.ts": (
                "import {a} from './a';\nimport b from './b.js';\nimport './dir';\n"
                "export {c} from './c';\nimport type {T} from './types';\n"
                "import React from 'react';\nimport x from '@scope/pkg/deep';\n"
            ),
            "src/a.ts": "",
            "src/b.ts": "",
            "src/dir/index.tsx": "",
            "src/c.mjs": "",
            "src/types.d.ts": "",
            "lib/old.js": "const m = require('../src/a'); import('./lazy.js').then(() => 0);",
            "lib/lazy.js": "",
        },
    )
    g = open_graph(root, jobs=1)
    assert {(e.source, e.target) for e in g.index.edges if e.kind != "reference"} == {
        ("src/main.ts", "src/a.ts"),
        ("src/main.ts", "src/b.ts"),
        ("src/main.ts", "src/dir/index.tsx"),
        ("src/main.ts", "src/c.mjs"),
        ("src/main.ts", "src/types.d.ts"),
        ("lib/old.js", "src/a.ts"),
        ("lib/old.js", "lib/lazy.js"),
    }
    assert g.index.externals["src/main.ts"] == ("@scope/pkg", "react")


# -- Go and Rust -----------------------------------------------------------------------------


def test_go_module_imports(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "go.mod": "module example.com/app\n\ngo 1.22\n",
            "main.go": 'package main\nimport (\n  "fmt"\n  "example.com/app/util"\n)\nfunc main() { util.Do(); fmt.Println() }\n',
            "util/do.go": "package util\nfunc Do() {}\n",
            "util/do_test.go": "package util\n",
        },
    )
    assert imports_of(root) == {("main.go", "util/do.go")}


def test_rust_mod_and_crate_paths(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "src/lib.rs": "mod net;\nmod util;\nuse crate::net::Client;\n",
            "src/net/mod.rs": "pub mod http;\nuse super::util::helper;\n",
            "src/net/http.rs": "use crate::util;\nuse std::io;\n",
            "src/util.rs": "pub fn helper() {}\n",
        },
    )
    assert imports_of(root) == {
        ("src/lib.rs", "src/net/mod.rs"),
        ("src/lib.rs", "src/util.rs"),
        ("src/net/mod.rs", "src/net/http.rs"),
        ("src/net/mod.rs", "src/util.rs"),
        ("src/net/http.rs", "src/util.rs"),
    }


# -- reference edges -------------------------------------------------------------------------


def test_reference_edges_follow_imports_and_are_lighter(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "a.py": "def compute_total():\n    pass\n",
            "b.py": "def compute_total():\n    pass\n",
            "c.py": "from a import compute_total\ncompute_total()\n",
            "d.py": "def _private():\n    pass\n",
            "e.py": "from d import _private\n_private()\n",
        },
    )
    g = open_graph(root, jobs=1)
    edges = {(e.source, e.target, e.kind): e.weight for e in g.index.edges}
    assert ("c.py", "a.py", "import") in edges
    assert ("c.py", "a.py", "reference") in edges
    assert ("c.py", "b.py", "reference") not in edges  # the imported definer wins
    assert 0 < edges["e.py", "d.py", "reference"] < edges["c.py", "a.py", "reference"] < 1
