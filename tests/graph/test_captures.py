"""What the captures make of a definition: a method or a function (a def under `if`/`try` in a
class body is a method), and whether other files can import it (`Symbol.reach`)."""

from __future__ import annotations

from pathlib import Path

from _trees import write_tree

from ore.graph import open_graph
from ore.graph.index.extract import extract
from ore.graph.index.records import EXPORTED, INNER, LOCAL
from ore.graph.judgment.signature import build_signature

# -- Python: methods and nesting -------------------------------------------------------------

_GUARDED = b"""import sys
class S:
    if sys.version_info >= (3, 11):
        def get(self, url):
            return url
    elif sys.platform == "win32":
        def get(self, url):
            return None
    else:
        @staticmethod
        def head(url):
            return url
    try:
        def post(self, url):
            return url
    except ImportError:
        def post(self, url):
            return None
    finally:
        pass
    with open(__file__) as _f:
        if True:
            try:
                def deep(self):
                    pass
            except Exception:
                pass
"""


def _kinds(src: bytes) -> dict[tuple[str, int], tuple[str, int]]:
    record = extract("c.py", "python", src)
    return {(s.name, s.line): (s.kind, s.reach) for s in record.symbols}


def test_a_def_under_if_try_or_with_in_a_class_body_is_a_method_not_at_module_level() -> None:
    kinds = _kinds(_GUARDED)
    assert kinds == {
        ("S", 2): ("class", EXPORTED),
        ("get", 4): ("method", INNER),
        ("get", 7): ("method", INNER),
        ("head", 11): ("method", INNER),
        ("post", 14): ("method", INNER),
        ("post", 17): ("method", INNER),
        ("deep", 24): ("method", INNER),
    }
    # at module level, under `if`/`else`/`try`, a def stays a top-level function
    src = b"import sys\nif sys.platform == 'win32':\n    def f():\n        pass\nelse:\n    try:\n        def f():\n            pass\n    except ImportError:\n        pass\nX = 1\n"
    assert _kinds(src) == {
        ("f", 3): ("function", EXPORTED),
        ("f", 7): ("function", EXPORTED),
        ("X", 11): ("variable", EXPORTED),
    }


def test_a_def_in_a_function_stays_nested_even_in_a_class_or_under_if() -> None:
    src = b"""class A:
    def m(self):
        if self:
            def helper():
                pass
        class Local:
            def lm(self):
                pass
        return helper

def f():
    try:
        def g():
            pass
    except Exception:
        pass
"""
    assert _kinds(src) == {
        ("A", 1): ("class", EXPORTED),
        ("m", 2): ("method", INNER),
        ("helper", 4): ("function", INNER),
        ("Local", 6): ("class", INNER),
        ("lm", 7): ("method", INNER),
        ("f", 11): ("function", EXPORTED),
        ("g", 13): ("function", INNER),
    }


def test_methods_under_if_are_no_public_names_of_the_signature(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"c.py": _GUARDED.decode()})
    g = open_graph(root, jobs=1)
    assert [m.kind for m in g.symbol("get")] == ["method", "method"]
    text = build_signature(g, "standard").text
    assert "  c.py (0 dependents): S\n" in text + "\n"


# -- JS/TS: what a file exports --------------------------------------------------------------

_WEB = b"""export function outer(): number {
  function innerHelper(): number { return 1; }
  return innerHelper();
}
function notExported(): void {}
export default class Widget {
  render(): void {}
}
namespace NS { export function nsFn() {} }
export namespace Open { export const inOpen = 1; }
const kept = 1, shown = 2;
export { shown };
function byDefault() {}
export default byDefault;
export declare function declared(): void;
interface Hidden {}
export interface Shown {}
export { notHere } from "./other";
"""


def _reach(language: str, path: str, src: bytes) -> dict[str, int]:
    return {s.name: s.reach for s in extract(path, language, src).symbols}


def test_ts_module_file_exports_only_what_it_says() -> None:
    assert _reach("typescript", "web.ts", _WEB) == {
        "outer": EXPORTED,
        "innerHelper": INNER,
        "notExported": LOCAL,
        "Widget": EXPORTED,
        "render": INNER,
        "NS": LOCAL,
        "nsFn": INNER,
        "Open": EXPORTED,
        "kept": LOCAL,
        "shown": EXPORTED,
        "byDefault": EXPORTED,
        "declared": EXPORTED,
        "Hidden": LOCAL,
        "Shown": EXPORTED,
    }


def test_a_script_without_imports_or_exports_has_global_names() -> None:
    src = b"function a() { function b() {} }\nclass C { m() {} }\nvar v = 1;\nnamespace N { function f() {} }\n"
    assert _reach("typescript", "s.ts", src) == {
        "a": EXPORTED,
        "b": INNER,
        "C": EXPORTED,
        "m": INNER,
        "v": EXPORTED,
        "N": EXPORTED,
        "f": INNER,
    }
    js = b"const x = require('x');\nfunction a() {}\n"
    assert _reach("javascript", "s.js", js) == {"x": EXPORTED, "a": EXPORTED}
    esm = b"import x from 'x';\nfunction a() {}\nexport function b() {}\n"
    assert _reach("javascript", "m.js", esm) == {"a": LOCAL, "b": EXPORTED}


def test_an_edit_that_adds_an_import_makes_the_file_a_module() -> None:
    """The incremental path (`revisit`) reads only the edited top-level node: the file-wide
    step still decides what is exported."""
    path = "edited.ts"
    before = b"function a() {}\n\nfunction b() {}\n"
    assert _reach("typescript", path, before) == {"a": EXPORTED, "b": EXPORTED}
    after = before + b"\nimport x from './x';\nexport { b };\n"
    assert _reach("typescript", path, after) == {"a": LOCAL, "b": EXPORTED}
    assert _reach("typescript", path, before) == {"a": EXPORTED, "b": EXPORTED}
    assert _reach("typescript", "whole.ts", after) == {"a": LOCAL, "b": EXPORTED}


def test_a_ts_file_read_in_pieces_after_a_syntax_error_keeps_exports() -> None:
    src = b"import x from './x';\nfunction hidden() {}\nexport function shown() {}\nconst broken = (;\nfunction later() {}\n"
    record = extract("broken.ts", "typescript", src)
    assert record.parse_error
    reach = {s.name: s.reach for s in record.symbols}
    assert reach["hidden"] == LOCAL
    assert reach["shown"] == EXPORTED
    assert reach["later"] == LOCAL


def test_reach_survives_the_cache(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"web.ts": _WEB.decode(), "c.py": _GUARDED.decode()})
    cold = {
        (p, s.name, s.line, s.reach)
        for p, r in open_graph(root, jobs=1).index.files.items()
        for s in r.symbols
    }
    warm_graph = open_graph(root, jobs=1)
    assert warm_graph.index.parsed == 0
    warm = {
        (p, s.name, s.line, s.reach)
        for p, r in warm_graph.index.files.all().items()
        for s in r.symbols
    }
    assert warm == cold
    assert ("web.ts", "notExported", 5, LOCAL) in warm
    assert [m.kind for m in warm_graph.symbol("nsFn")] == ["function"]
