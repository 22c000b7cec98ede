"""Judgment on code nobody tuned for (issue 25): one fixture per class of noise found by hand on
real projects. A small library (`engine/`) with its tests, examples and docs beside it:

- tests, examples and docs are context, not peers (a test helper never outranks the API it
  imitates; `place` prefers the module that owns the feature);
- a renamed copy (names, annotations, docstring changed) is found at rank 1 by shape;
- signature mode compares parameter lists, not only arity;
- `print()` is not logging; one exception under two import aliases is one pattern; rare
  patterns are not conventions;
- `consistent` reports print-where-the-code-logs, bare `Exception`, a literal logger name and
  grouped imports, and leaves the project's own ordinary code alone;
- `signature` lists public top-level names only, an overload once;
- a root inside a package resolves relative imports against the real package.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from _cli import needs_ore, run_ore

from ore.graph import CodeGraph, open_graph


def _module(name: str, body: str) -> str:
    """A library module in the house style: a module logger, own errors, documented API."""
    return (
        "import logging\n\nfrom engine import errors\nfrom engine.errors import EngineError\n\n"
        "logger = logging.getLogger(__name__)\n\n\n" + textwrap.dedent(body)
    )


MERGE = '''
def merge_settings(base: dict, override: dict, strict: bool = False) -> dict:
    """Merge two settings mappings; `strict` refuses unknown keys."""
    result = dict(base)
    for key, value in override.items():
        if strict and key not in base:
            raise errors.EngineError(key)
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge_settings(result[key], value, strict)
        else:
            result[key] = value
    logger.debug("merged %d keys", len(override))
    return result
'''

LIBRARY = {
    "engine/__init__.py": "",
    "engine/errors.py": (
        "class EngineError(Exception):\n    pass\n\n\nclass ConnectError(EngineError):\n    pass\n"
    ),
    "engine/create.py": _module(
        "create",
        '''
        def create_async_engine(url: str, pool_size: int = 5, echo: bool = False) -> "Engine":
            """Create an engine that talks to `url` asynchronously."""
            logger.info("creating %s", url)
            if not url:
                raise EngineError("no url")
            return Engine(url, pool_size, echo)


        def create_engine(url: str, pool_size: int = 5, echo: bool = False) -> "Engine":
            """Create an engine that talks to `url`."""
            logger.info("creating %s", url)
            return Engine(url, pool_size, echo)


        class Engine:
            """A connection factory."""

            def __init__(self, url: str, pool_size: int, echo: bool) -> None:
                self.url = url


        if __name__ == "__main__":
            print(create_engine("sqlite://"))
        ''',
    ),
    "engine/settings.py": _module("settings", MERGE),
    "engine/pool.py": _module(
        "pool",
        '''
        from typing import overload


        @overload
        def checkout(pool: "Pool", timeout: int) -> int: ...
        @overload
        def checkout(pool: "Pool", timeout: float) -> float: ...
        def checkout(pool: "Pool", timeout: float) -> float:
            """Take a connection out of the pool."""
            logger.debug("checkout")
            try:
                return pool.take(timeout)
            except errors.ConnectError:
                raise EngineError("pool exhausted")


        def retrying(times: int) -> object:
            """Retry a function `times` times."""

            def decorator(func: object) -> object:
                def wrapper(*args: object) -> object:
                    return func(*args)

                return wrapper

            return decorator


        class Pool:
            """Connections kept for reuse."""

            def take(self, timeout: float) -> float:
                """One connection."""
                if timeout < 0:
                    raise EngineError("negative timeout")
                return timeout
        ''',
    ),
    "engine/url.py": _module(
        "url",
        '''
        def parse_url(text: str) -> dict:
            """Split a database url into its parts."""
            logger.debug("parsing")
            scheme, _, rest = text.partition("://")
            if not scheme:
                raise EngineError(text)
            return {"scheme": scheme, "rest": rest}


        def render_url(parts: dict) -> str:
            """The text of a url from its parts."""
            return parts["scheme"] + "://" + parts["rest"]
        ''',
    ),
    "tests/conftest.py": (
        "import pytest\n\n\n@pytest.fixture\ndef engine(url):\n    return url\n\n\n"
        "@pytest.fixture\ndef pool(engine):\n    return engine\n\n\n"
        "@pytest.fixture\ndef url(tmp_path):\n    return str(tmp_path)\n"
    ),
    "tests/helpers.py": (
        "def make_engine(url='sqlite://', pool_size=5, echo=False):\n"
        "    return create_engine(url, pool_size, echo)\n\n\n"
        "def make_async_engine(url='sqlite://'):\n    return create_async_engine(url)\n"
    ),
    "tests/test_settings.py": "".join(
        f"def test_merge_{n}(tmp_path):\n    a = {{'x': {n}}}\n    b = {{'y': {n}}}\n"
        f"    for key in a:\n        if key in b:\n            assert False\n"
        f"        else:\n            b[key] = a[key]\n    assert b\n    return b\n\n\n"
        for n in range(6)
    ),
    "examples/create_engine_example.py": (
        "from engine.create import create_engine\n\n\ndef main():\n"
        "    engine = create_engine('sqlite://')\n    print(engine)\n    print('engine created')\n"
    ),
    "docs/conf.py": "project = 'engine'\nprint('building docs')\n",
}


@pytest.fixture
def g(tmp_path: Path) -> CodeGraph:
    root = tmp_path / "lib"
    for rel, text in LIBRARY.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return open_graph(root, jobs=1)


# -- tests, examples and docs are context ------------------------------------------------------


def test_a_test_helper_never_outranks_the_api_it_imitates(g: CodeGraph) -> None:
    rows = g.similar("create_engine")
    names = [r.name for r in rows]
    assert names.index("create_async_engine") < names.index("make_engine")
    library = [r for r in rows if r.path.startswith("engine/")]
    assert rows[: len(library)] == library  # every library match before any test helper
    equal = g.similar("create_engine", include_context=True)
    assert equal[0].name == "make_engine"  # the flag ranks them as peers, by score alone


def test_a_namesake_is_the_closest_and_a_shared_verb_alone_is_nothing(tmp_path: Path) -> None:
    """Found on networkx: `similar read_edgelist` listed five `get` methods (read ~ get) and
    left out `read_edgelist` of another module."""
    root = tmp_path / "lib"
    (root / "io").mkdir(parents=True)
    (root / "bipartite").mkdir()
    edgelist = "def read_edgelist(path):\n    return path\n\n\ndef write_edgelist(g, path):\n"
    (root / "io" / "edgelist.py").write_text(edgelist + "    return g\n")
    (root / "bipartite" / "edgelist.py").write_text(edgelist + "    return path\n")
    (root / "heaps.py").write_text("class Heap:\n    def get(self, key):\n        return key\n")
    rows = open_graph(root, jobs=1).similar("read_edgelist")
    assert [(r.name, r.reason) for r in rows[:2]] == [("read_edgelist", "the same name")] * 2
    assert {r.path for r in rows[:2]} == {"io/edgelist.py", "bipartite/edgelist.py"}
    assert "get" not in [r.name for r in rows]
    alone = open_graph(root, jobs=1).similar("write_edgelist")
    assert [r.name for r in alone if r.name == "write_edgelist"] == ["write_edgelist"] * 2


@needs_ore
def test_the_include_context_flag_ranks_tests_as_peers(
    g: CodeGraph, ore_env: dict[str, str]
) -> None:
    root = str(g.root)
    library = run_ore("graph", "similar", "create_engine", "--root", root, "--json", env=ore_env)
    peers = run_ore(
        "graph",
        "similar",
        "create_engine",
        "--include-context",
        "--root",
        root,
        "--json",
        env=ore_env,
    )
    assert library.returncode == peers.returncode == 0, library.stderr + peers.stderr
    assert json.loads(library.stdout)[0]["path"].startswith("engine/")
    assert json.loads(peers.stdout)[0]["name"] == "make_engine"
    for command in (["conventions"], ["place", "create an engine"]):
        done = run_ore("graph", *command, "--include-context", "--root", root, env=ore_env)
        assert done.returncode == 0, done.stderr


def test_place_prefers_the_module_that_owns_the_feature(g: CodeGraph) -> None:
    p = g.place("create an engine example")
    assert p.files[0].path == "engine/create.py"
    assert all(not f.path.startswith(("examples/", "tests/", "docs/")) for f in p.files)
    equal = g.place("create an engine example", include_context=True)
    assert "examples/create_engine_example.py" in [f.path for f in equal.files]


# -- shape and signature -----------------------------------------------------------------------

RENAMED = """
def combine_config(defaults: "Mapping[str, Any]", extra: "Mapping[str, Any]", exact=False):
    output = dict(defaults)
    for name, item in extra.items():
        if exact and name not in defaults:
            raise errors.EngineError(name)
        if isinstance(item, dict) and isinstance(output.get(name), dict):
            output[name] = combine_config(output[name], item, exact)
        else:
            output[name] = item
    logger.debug("combined %d names", len(extra))
    return output
"""


def test_a_renamed_copy_is_found_at_rank_one_by_shape(g: CodeGraph) -> None:
    rows = g.similar(snippet=RENAMED, mode="shape")
    assert (rows[0].name, rows[0].path, rows[0].score) == (
        "merge_settings",
        "engine/settings.py",
        1.0,
    )
    found = g.duplicates_of(RENAMED)
    assert (found[0].path, found[0].name) == ("engine/settings.py", "merge_settings")


def test_signature_mode_compares_parameter_lists_not_only_arity(g: CodeGraph) -> None:
    rows = g.similar("create_engine", mode="signature")
    assert rows[0].name == "create_async_engine"
    assert "shares echo, pool_size, url" in rows[0].reason
    assert all(r.path != "tests/conftest.py" for r in rows)  # one parameter is not a likeness
    one = g.similar("parse_url", mode="signature")
    assert all(r.path != "tests/conftest.py" for r in one)


# -- conventions -------------------------------------------------------------------------------


def _patterns(g: CodeGraph, topic: str) -> dict[str, float]:
    (c,) = g.conventions(topic)
    return {p.name: p.share for p in c.patterns}


def test_print_is_not_logging_and_aliases_are_one_exception(g: CodeGraph) -> None:
    logging = _patterns(g, "logging")
    assert "print()" not in logging
    assert "logger.debug()" in logging
    errors = _patterns(g, "errors")
    assert "raise EngineError" in errors
    assert not any(name.startswith("raise errors.") for name in errors)
    assert "except ConnectError" in errors and "except errors.ConnectError" not in errors


def test_rare_patterns_are_not_conventions(g: CodeGraph) -> None:
    for c in g.conventions():
        for p in c.patterns:
            assert p.share >= 0.05, (c.topic, p)


# -- consistent --------------------------------------------------------------------------------

SLOPPY = """import os, sys
import logging

log = logging.getLogger("engine.sloppy")


def load_plugins(folder: str) -> list:
    \"\"\"The plugins of a folder.\"\"\"
    if not os.path.isdir(folder):
        raise Exception("no folder")
    print("loading", folder)
    return sys.path
"""


def test_consistent_reports_what_a_reviewer_would(g: CodeGraph) -> None:
    c = g.consistent(SLOPPY)
    (structure,) = [d for d in c.criteria if d.criterion == "structure"]
    said = " | ".join(structure.deviations)
    assert "calls print()" in said
    assert "bare Exception" in said and "engine/errors.py:" in said
    assert "getLogger(__name__)" in said and "literal" in said
    assert "import a, b" in said
    assert c.score > 0


@pytest.mark.parametrize("path", ["engine/create.py", "engine/pool.py", "engine/url.py"])
def test_the_projects_own_ordinary_code_is_not_flagged(g: CodeGraph, path: str) -> None:
    own = (g.root / path).read_text()
    c = g.consistent(own)
    assert c.score == 0, [d.deviations for d in c.criteria]


# -- signature ---------------------------------------------------------------------------------


def test_signature_lists_public_top_level_names_once(g: CodeGraph) -> None:
    text = g.signature("deep", 4000).text
    line = next(x for x in text.splitlines() if x.strip().startswith("engine/pool.py"))
    assert "checkout" in line and line.count("checkout") == 1
    assert "retrying" in line and "Pool" in line
    assert "wrapper" not in text and "decorator" not in text


# -- a root inside a package -------------------------------------------------------------------


def test_a_root_inside_a_package_resolves_against_the_real_package(tmp_path: Path) -> None:
    pkg = tmp_path / "src" / "pkg"
    (pkg / "sub").mkdir(parents=True)  # a subpackage without __init__.py: a namespace portion
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "mod.py").write_text("class X:\n    pass\n")
    (pkg / "a.py").write_text("from .sub.mod import X\n")
    (pkg / "sub" / "b.py").write_text("from ..sub.mod import X\nfrom .mod import X as Y\n")
    (pkg / "c.py").write_text("from pkg.sub.mod import X\n")
    g = open_graph(pkg, jobs=1)
    for source in ("a.py", "sub/b.py", "c.py"):
        assert [d.path for d in g.dependencies(source)] == ["sub/mod.py"], source
    assert {d.path for d in g.dependents("sub/mod.py")} == {"a.py", "sub/b.py", "c.py"}
    assert g.dependents("__init__.py") == []


# -- TypeScript the bundled grammar does not know ----------------------------------------------

MODERN_TS = b"""import { a } from "./a";
export type Loader = import("./x").Load<string>;
export interface Box<in out T> { v: T }
export type Fn<
  /** @ts-ignore Cast variance */
  out R = unknown,
> = () => R;
export const query = sql<User>`select ${1}`;
export function one(): number { return a() }
"""


OVERLOADS_TS = rb"""export const dual: {
  /**
   * Data-last.
   */
  <A, B>(f: (a: A) => B): (self: A) => B
  // ----------------------------------------------------------------
  <const T extends ReadonlyArray<unknown>>(self: T): T
} = make
export const curried =
  <A>(a: A) =>
  <B>(b: B): [A, B] => [a, b]
export const rows = sql<{ readonly count: number }>`SELECT COUNT(*) AS count`
export type Missing<S extends string> = `Missing \`Self\` in ${S}`
export declare const unifySymbol: unique symbol
export namespace util { export const a = 1 }
export function last(): string { return `\\` }
"""


def test_typescript_overloads_curried_arrows_and_ambient_names_parse() -> None:
    from ore.graph.index.extract import extract

    record = extract("o.ts", "typescript", OVERLOADS_TS)
    assert not record.parse_error
    names = [s.name for s in record.symbols]
    for name in ("dual", "curried", "rows", "Missing", "unifySymbol", "util", "last"):
        assert name in names, name


def test_modern_typescript_parses() -> None:
    from ore.graph.index.extract import extract, unparsed

    record = extract("m.ts", "typescript", MODERN_TS)
    assert [s.name for s in record.symbols] == ["Loader", "Box", "Fn", "query", "one"]
    assert not record.parse_error
    assert unparsed("typescript", MODERN_TS) == (0, MODERN_TS.count(b"\n") + 1)
    plain = b"for (const k in out) {}\nconst x = a < b, in_ = 2;\n"
    names = {s.name for s in extract("p.ts", "typescript", plain).symbols}
    assert names == {"x", "in_"}  # `in` elsewhere is left alone


def test_one_error_costs_one_declaration_not_the_file() -> None:
    from ore.graph.index.extract import extract, unparsed

    body = b"".join(
        b"export function f%d(a: number): number {\n  return a + %d;\n}\n" % (i, i)
        for i in range(30)
    )
    broken = b"export const x = {\n" + body  # the grammar makes the whole file one ERROR node
    record = extract("b.ts", "typescript", broken)
    assert record.parse_error
    assert [s.name for s in record.symbols] == [f"f{i}" for i in range(30)]
    assert [s.line for s in record.symbols][:2] == [2, 5]  # lines of the file, not of a piece
    bad, lines = unparsed("typescript", broken)
    assert 0 < bad <= lines


# -- shapes once per content -------------------------------------------------------------------


def test_shapes_are_computed_once_per_file_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ore.graph.judgment import shapecache

    root = tmp_path / "copies"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    for folder in ("a", "b"):
        (root / folder / "merge.py").write_text(MERGE)
    shaped: list[str] = []
    real = shapecache.make_shape

    def counting(path: str, language: str, data: bytes, *, lean: bool = False) -> object:
        shaped.append(path)
        return real(path, language, data, lean=lean)

    monkeypatch.setattr(shapecache, "make_shape", counting)
    g = open_graph(root, jobs=1)
    shapes = shapecache.load_shapes(g, g.files)
    assert len(shaped) == 1 and set(shapes) == {"a/merge.py", "b/merge.py"}
    assert shapes["b/merge.py"].path == "b/merge.py"
    assert shapes["a/merge.py"].functions == shapes["b/merge.py"].functions
    (root / "c").mkdir()
    (root / "c" / "merge.py").write_text(MERGE)  # a copy added later: reused, not shaped
    g = open_graph(root, jobs=1)
    assert set(shapecache.load_shapes(g, g.files)) == {"a/merge.py", "b/merge.py", "c/merge.py"}
    assert len(shaped) == 1


def test_clone_detection_shapes_lean_and_a_full_shape_serves_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Clones need no facts nor node-kind profiles: a lean shape is computed for them, made full
    when a query that reads facts comes, and a full shape serves clone detection as it is."""
    from ore.graph.judgment import shapecache

    root = tmp_path / "lean"
    root.mkdir()
    (root / "merge.py").write_text(MERGE)
    shaped: list[bool] = []
    real = shapecache.make_shape

    def counting(path: str, language: str, data: bytes, *, lean: bool = False) -> object:
        shaped.append(lean)
        return real(path, language, data, lean=lean)

    monkeypatch.setattr(shapecache, "make_shape", counting)
    g = open_graph(root, jobs=1)
    lean = shapecache.load_shapes(g, g.files, lean=True)["merge.py"]
    assert shaped == [True] and not lean.full and lean.facts == ()
    assert all(fn.profile == () for fn in lean.functions)
    full = shapecache.load_shapes(g, g.files)["merge.py"]
    assert shaped == [True, False] and full.full and full.numbers == lean.numbers
    assert [fn.shape for fn in full.functions] == [fn.shape for fn in lean.functions]
    assert shapecache.load_shapes(g, g.files, lean=True)["merge.py"] is full
    assert shaped == [True, False]


def test_code_lines_keep_their_numbers_after_a_block_comment() -> None:
    from ore.graph.judgment.lexer import lex, lex_text

    text = "/* one\n * two\n */\nconst x = `a\nb`;\nlet y = 2;\n"
    code = lex("typescript", text)
    assert code[0] == (4, 5, 6)  # the comment's lines are not dropped from the count
    assert lex_text("typescript", text, code) == lex_text("typescript", text)
    assert lex_text("typescript", text)[0] == (4, 5, 6)
