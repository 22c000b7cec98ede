"""Definitions like a given one (Ori's `find_similar_patterns`), by name, signature or shape.

This module settles what a question compares with (a name, or a function or method of the tree
by that name; else a snippet's first definition) and the order of the answers; each mode scores
the tree in a module of its own: `similar_name` (the words of identifiers), `similar_signature`
(parameters, what is returned, the kind) and `similar_shape` (the syntax tree, the lines in
order).

Tests, examples and docs are context, not peers: unless `include_context`, every library match
ranks above every one of them (`index.kinds.is_context`), so a test helper never outranks the
API it imitates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.extract import extract
from ..index.kinds import is_context
from ..index.records import Symbol
from ..index.source import text_lines
from ..results import SimilarMatch
from .function_shapes import Function
from .returns import return_shapes
from .scope import dominant_language, need_files
from .shapecache import load_shapes
from .shapes import snippet_shape, snippet_text
from .similar_name import by_name, text_words
from .similar_shape import by_shape, lines_of
from .similar_signature import CALLABLE, Anchor, by_signature, source_lines

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["MODES", "find_similar"]

MODES = ("name", "signature", "shape")


def find_similar(
    g: GraphView,
    name: str | None = None,
    *,
    snippet: str | bytes | None = None,
    mode: str = "name",
    language: str | None = None,
    limit: int | None = 10,
    include_context: bool = False,
) -> list[SimilarMatch]:
    """Definitions like `name` (a symbol of the tree or any identifier) or `snippet`; library
    code first unless `include_context` ranks tests, examples and docs as its equals."""
    if mode not in MODES:
        raise GraphError(f"unknown mode '{mode}'; use name, signature or shape")
    if (name is None) == (snippet is None):
        raise GraphError("similar needs a name or a snippet (one of them)")
    need_files(g, g.files, "similar")
    if mode == "name":
        # `Nested.schema`: a method by its class; by name, the method's own name is compared
        asked = name.rpartition(".")[2] if name is not None else None
        # `Class.method` names one definition: one that is not there is an error, as in the
        # other modes (any other NAME may be any identifier)
        defined = _defined(g, name) if name is not None and "." in name else None
        home = defined[1] if defined is not None else None  # else by_name finds it
        found = by_name(g, asked if asked else _snippet_name(g, snippet, language), home)
        if defined is not None:
            s, path = defined  # the method asked about is no answer to itself
            found = [m for m in found if (m.path, m.line) != (path, s.line)]
    elif mode == "signature":
        found = by_signature(g, _anchor_signature(g, name, snippet, language))
    else:
        found = by_shape(g, *_anchor_shape(g, name, snippet, language))

    def order(m: SimilarMatch) -> tuple[bool, float, str, int, str]:
        return (not include_context and is_context(m.path), -m.score, m.path, m.line, m.name)

    if mode == "shape":  # already in order, ties by the words shared: a stable sort keeps it
        found.sort(key=lambda m: (not include_context and is_context(m.path), -m.score))
    else:
        found.sort(key=order)
    if mode == "signature" and name is not None:
        found = _first_of_each_name(found, name.rpartition(".")[2])
    return found[:limit]


def _first_of_each_name(found: list[SimilarMatch], asked: str) -> list[SimilarMatch]:
    """Signature mode: one answer per name, the first, but every definition of the name asked
    for. Overrides of another hook share its parameter list by design: marshmallow's
    `_serialize(value, attr, obj)` in five field classes took five of ten places for
    `Field.get_value`, arrow's `_format_relative` four for `isoformat`, tornado's
    `get_auth_http_client` three for `get_app`; the first says what the rest would. The
    asked name's own overrides are the protocol a change to it changes (boltons' `get_entry`
    in each input type)."""
    seen: set[str] = set()
    out = []
    for m in found:
        if m.name == asked or m.name not in seen:
            seen.add(m.name)
            out.append(m)
    return out


def _snippet_name(g: GraphView, snippet: str | bytes | None, language: str | None) -> str:
    symbols = _snippet_symbols(g, snippet, language)
    if not symbols:
        raise GraphError("the snippet defines nothing to compare by name")
    return symbols[0].name


def _snippet_symbols(
    g: GraphView, snippet: str | bytes | None, language: str | None
) -> tuple[Symbol, ...]:
    lang = dominant_language(g, language)
    snippet_shape(snippet or "", lang)  # the one-line errors for what is not code
    return extract("<snippet>", lang, snippet_text(snippet or "").encode("utf-8")).symbols


def _anchor_signature(
    g: GraphView, name: str | None, snippet: str | bytes | None, language: str | None
) -> Anchor:
    if name is not None:
        s, path = _defined(g, name)
        shapes = return_shapes(source_lines(g, path), s.line, s.end_line)
        language = g.index.files[path].language
        own = _overloads(g, path, s)
        return Anchor(s.kind, s.signature, path, s.line, language, shapes, own, s.name)
    symbols = [s for s in _snippet_symbols(g, snippet, language) if s.kind in CALLABLE]
    if not symbols:
        raise GraphError("the snippet defines no function to compare by signature")
    lang = dominant_language(g, language)
    lines = text_lines(snippet_text(snippet or ""))
    first = symbols[0]
    shapes = return_shapes(lines, first.line, first.end_line)
    return Anchor(first.kind, first.signature, "", 0, lang, shapes, name=first.name)


def _defined(g: GraphView, name: str) -> tuple[Symbol, str]:
    """The definition a NAME stands for (`Class.method` names a class's method): in library
    code before tests, examples and docs (tornado's `get_app` was its test module's), in a
    public module before a private one and then the most central one (packaging's
    `platform_tags` is `tags.py`'s, not `_manylinux.py`'s), and of a file's overloads the last,
    the implementation (the `@overload` stubs come first)."""
    owner, _dot, name = name.rpartition(".")  # `Nested.schema`: the method of that class
    found: list[tuple[Symbol, str]] = []
    for path, record in g.index.files.items():
        symbols = sorted(record.symbols, key=lambda s: s.line)
        if owner:
            classes = [s for s in symbols if s.kind == "class" and s.name == owner]
            symbols = [s for s in symbols if any(c.line < s.line <= c.end_line for c in classes)]
        at = next((i for i, s in enumerate(symbols) if s.name == name and s.kind in CALLABLE), None)
        if at is not None:
            while at + 1 < len(symbols) and symbols[at + 1].name == name:
                at += 1  # an overload's stub: the implementation follows, nothing between
            found.append((symbols[at], path))
    if not found:
        what = f"'{name}' in a class '{owner}'" if owner else f"'{name}'"
        raise GraphError(f"no function or method named {what} is defined in the tree")
    tier = min((is_context(p), _private(p)) for _s, p in found)
    best = [f for f in found if (is_context(f[1]), _private(f[1])) == tier]
    if len(best) == 1:
        return best[0]
    ranks = g.pagerank  # only for a name defined in several modules of one tier
    return min(best, key=lambda f: (-ranks.get(f[1], 0.0), f[1]))


def _private(path: str) -> bool:
    """A module named as private (`_manylinux.py`, a folder `_impl/`), `__init__` aside."""
    return any(part.startswith("_") and not part.startswith("__") for part in path.split("/"))


def _overloads(g: GraphView, path: str, chosen: Symbol) -> frozenset[int]:
    """The lines of the definitions of `chosen`'s name just above it in its file, with no
    other definition between: its `@overload` stubs."""
    before = sorted(
        (s for s in g.index.files[path].symbols if s.line < chosen.line),
        key=lambda s: s.line,
        reverse=True,
    )
    lines = []
    for s in before:
        if s.name != chosen.name:
            break
        lines.append(s.line)
    return frozenset(lines)


def _anchor_shape(
    g: GraphView, name: str | None, snippet: str | bytes | None, language: str | None
) -> tuple[Function, tuple[int, ...], str, str, frozenset[str]]:
    """(function, its renamed line keys, its path, its language, the words of its text) to
    compare shapes with."""
    if name is not None:
        s, path = _defined(g, name)
        shape = load_shapes(g, [path]).get(path)
        for fn in shape.functions if shape is not None else ():
            if fn.start == s.line and fn.shape and shape is not None:
                text = source_lines(g, path)[fn.start - 1 : fn.end]
                language = g.index.files[path].language
                return fn, lines_of(shape, fn), path, language, text_words(text)
        raise GraphError(f"'{name}' has no body to compare by shape")
    lang = dominant_language(g, language)
    found = snippet_shape(snippet or "", lang)
    funcs = [fn for fn in found.functions if fn.shape]
    if not funcs:
        raise GraphError("the snippet holds no function of two lines or more to compare by shape")
    text = text_lines(snippet_text(snippet or ""))[funcs[0].start - 1 : funcs[0].end]
    return funcs[0], lines_of(found, funcs[0]), "", lang, text_words(text)
