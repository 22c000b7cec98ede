"""Indexing a deeply nested file is linear in its nesting (issue 21, item 6).

tree-sitter keeps no parent links: `node.parent` walks down from the root, so asking it per
symbol made one 939 KB nested JS file take 348 s. Extraction now never asks (where a node sits
comes from the query), and that is what is checked here, with the nodes it touches counted
instead of timed.
"""

from __future__ import annotations

from typing import Any

import pytest

from ore.graph.index import extract as extract_module
from ore.graph.index.extract import extract


class _Counted:
    """A tree-sitter node that counts the nodes reached through it and refuses `parent`."""

    def __init__(self, node: Any, seen: list[int]) -> None:
        self._node = node
        self._seen = seen
        seen[0] += 1

    def __getattr__(self, name: str) -> Any:
        if name == "parent":
            raise AssertionError("extraction asked a node for its parent (a walk from the root)")
        value = getattr(self._node, name)
        if callable(value):

            def call(*args: Any) -> Any:
                return self._wrap(value(*args))

            return call
        return self._wrap(value)

    def _wrap(self, value: Any) -> Any:
        import tree_sitter

        if isinstance(value, tree_sitter.Node):
            return _Counted(value, self._seen)
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        return value


@pytest.fixture
def visits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every node extraction touches, counted (`[count]`); `parent` fails the test."""
    seen = [0]
    real = extract_module._cursor

    class Cursor:
        def __init__(self, query: Any) -> None:
            self._cursor = real(query)

        def set_byte_range(self, start: int, end: int) -> None:  # a file read again
            self._cursor.set_byte_range(start, end)

        def captures(self, root: Any) -> dict[str, list[_Counted]]:
            found = self._cursor.captures(root)
            return {key: [_Counted(n, seen) for n in nodes] for key, nodes in found.items()}

    monkeypatch.setattr(extract_module, "_cursor", Cursor)
    return seen


def _js(depth: int) -> bytes:
    """Functions nested `depth` deep, each with calls, a `new`, a `require` and a class."""
    opening = "".join(
        f"function f{i}(a) {{ g(a); new C(a); const m{i} = require('./m{i % 5}');"
        f" class K{i} extends B {{ m{i}() {{}} }}\n"
        for i in range(depth)
    )
    return (opening + "}" * depth + "\n").encode()


def _python(depth: int) -> bytes:
    """Calls and attribute calls nested `depth` deep, in a module with imports and a class."""
    head = "import os\nfrom a import b\n\nclass A(b.Base):\n    @b.deco\n    def m(self): pass\n\n"
    return (head + "x = " + "b.f(os.g(" * depth + "1" + "))" * depth + "\n").encode()


def _ts(depth: int) -> bytes:
    """Namespaces nested `depth` deep, each with a qualified type and an interface."""
    opening = "".join(
        f"namespace N{i} {{ interface I{i} {{ a: ns.T; b: U }} function h{i}(): V {{}}\n"
        for i in range(depth)
    )
    return (
        "import * as ns from './ns';\nimport { U, V } from './u';\n" + opening + "}" * depth + "\n"
    ).encode()


CASES = [("javascript", _js), ("python", _python), ("typescript", _ts)]


@pytest.mark.parametrize(("language", "make"), CASES)
def test_extraction_never_walks_up_and_touches_nodes_linearly(
    visits: list[int], language: str, make: Any
) -> None:
    counts = []
    for depth in (500, 2000):
        visits[0] = 0
        record = extract(f"deep.{language}", language, make(depth))
        assert not record.parse_error
        counts.append(visits[0])
    assert counts[1] <= 4.4 * counts[0]  # four times as deep; a walk per symbol is 16 times


def test_a_20000_deep_js_file_keeps_every_symbol_and_import() -> None:
    record = extract("deep.js", "javascript", _js(20_000))
    kinds = [s.kind for s in record.symbols]
    assert kinds.count("function") == 20_000
    assert kinds.count("class") == kinds.count("method") == 20_000
    assert len([i for i in record.imports if i.kind == "require"]) == 20_000
    assert record.imports[0].binds == ("m0",)  # what `const m0 = require(...)` binds


def test_the_same_records_as_walking_up_would_give() -> None:
    # methods (Python in a class body, decorated too; Rust in an impl and a trait), a Go and a
    # TS qualified type counted with its qualifier, a `require` bound by its declarator
    py = extract(
        "a.py",
        "python",
        b"class A:\n    @d\n    def m(self): pass\n    def n(self): pass\ndef top(): pass\n",
    )
    assert [(s.name, s.kind) for s in py.symbols] == [
        ("A", "class"),
        ("m", "method"),
        ("n", "method"),
        ("top", "function"),
    ]
    rs = extract(
        "a.rs",
        "rust",
        b"use a::{x, T};\nstruct S;\nimpl S { fn a(&self) -> x::T {} }\n"
        b"trait Q { fn b(); }\nfn c() -> T {}\n",
    )
    assert {(s.name, s.kind) for s in rs.symbols} >= {
        ("a", "method"),
        ("b", "method"),
        ("c", "function"),
    }
    assert rs.refs == (("T", 1), ("x.T", 1))  # the `T` of `x::T` is not counted bare
    go = extract(
        "a.go", "go", b'package a\nimport "pkg/p"\nvar v p.T\nfunc f() p.T { return nil }\n'
    )
    assert go.refs == (("p.T", 2),)
    ts = extract("a.ts", "typescript", b"import * as ns from './ns';\nlet a: ns.T;\n")
    assert ts.refs == (("ns.T", 1),)
    js = extract("a.js", "javascript", b"const { a, b: c } = require('./m');\nf(require('./n'));\n")
    assert [(i.module, i.names, i.binds) for i in js.imports] == [
        ("./m", ("a", "b"), ("a", "c")),
        ("./n", (), ()),
    ]


def test_a_file_nested_deeper_than_tree_sitter_counts_is_indexed_at_once() -> None:
    # 300,000 nested calls (900 KB): tree-sitter's query cursor counts depth in 16 bits and,
    # past 65,535 levels, took minutes; matches start no deeper than any real code nests
    record = extract("deep.py", "python", ("x = " + "f(" * 300_000 + ")" * 300_000).encode())
    assert [s.name for s in record.symbols] == ["x"]
