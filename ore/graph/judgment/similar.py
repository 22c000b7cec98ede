"""Definitions like a given one (Ori's `find_similar_patterns`), by name, signature or shape.

- `name`: the words of identifiers (`get_userById` -> get, user, by, id), filler words dropped
  and common verbs folded into one family each (get ~ fetch ~ load ~ read ...); the score is the
  Jaccard index of the two word sets.
- `signature`: functions and methods with the same parameter shape: 0.4 for the parameter count
  (1 when equal, shrinking with the difference), 0.4 for the Jaccard index of parameter names,
  0.1 for the same kind, 0.1 for the same return annotation (present or not).
- `shape`: functions whose syntax tree has the same shape (1.0), else the cosine of their node
  kind counts times the ratio of their sizes.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.extract import extract
from ..index.records import Symbol
from ..results import SimilarMatch
from .scope import dominant_language, need_files, select, split_words
from .shapecache import load_shapes
from .shapes import Function, family, snippet_shape, snippet_text

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["MODES", "find_similar", "name_words", "parameters"]

MODES = ("name", "signature", "shape")
_FILLER = frozenset(
    {"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}
)
_VERBS = (
    ("get", "fetch", "load", "read", "retrieve", "find", "lookup", "query", "obtain"),
    ("set", "update", "put", "write", "save", "store", "assign"),
    ("create", "make", "new", "build", "add", "insert", "register"),
    ("delete", "remove", "drop", "del", "destroy", "erase", "unregister"),
    ("is", "has", "check", "can", "should", "validate", "verify"),
    ("list", "all", "iter", "each", "enumerate"),
    ("parse", "decode", "deserialize", "loads"),
    ("format", "encode", "serialize", "dumps", "render"),
    ("run", "execute", "exec", "call", "invoke", "apply", "perform"),
)
_FAMILY_OF = {word: group[0] for group in _VERBS for word in group}
_CALLABLE = frozenset({"function", "method"})
_MIN = {"name": 0.3, "signature": 0.5, "shape": 0.6}
_PARAM_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def name_words(name: str) -> set[str]:
    """The words of an identifier, filler dropped, verbs folded into their family."""
    return {_FAMILY_OF.get(w, w) for w in split_words(name) if w not in _FILLER}


def find_similar(
    g: GraphView,
    name: str | None = None,
    *,
    snippet: str | bytes | None = None,
    mode: str = "name",
    language: str | None = None,
    limit: int | None = 10,
) -> list[SimilarMatch]:
    """Definitions like `name` (a symbol of the tree or any identifier) or `snippet`."""
    if mode not in MODES:
        raise GraphError(f"unknown mode '{mode}'; use name, signature or shape")
    if (name is None) == (snippet is None):
        raise GraphError("similar needs a name or a snippet (one of them)")
    need_files(g, g.files, "similar")
    if mode == "name":
        found = _by_name(g, name if name is not None else _snippet_name(g, snippet, language))
    elif mode == "signature":
        found = _by_signature(g, *_anchor_signature(g, name, snippet, language))
    else:
        found = _by_shape(g, *_anchor_shape(g, name, snippet, language))
    found.sort(key=lambda m: (-m.score, m.path, m.line, m.name))
    return found[:limit]


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


def _by_name(g: GraphView, name: str) -> list[SimilarMatch]:
    wanted = name_words(name)
    if not wanted:
        raise GraphError(f"'{name}' has no words to compare")
    out = []
    for path, record in g.index.files.items():
        for s in record.symbols:
            if s.name == name:
                continue
            words = name_words(s.name)
            shared = wanted & words
            if not shared:
                continue
            score = len(shared) / len(wanted | words)
            if score >= _MIN["name"]:
                reason = "shares " + ", ".join(sorted(shared))
                out.append(
                    SimilarMatch(s.name, s.kind, path, s.line, s.signature, round(score, 4), reason)
                )
    return out


def parameters(signature: str) -> list[str]:
    """Parameter names of a one-line signature (`self`, `cls`, `*`, `/` left out)."""
    start = signature.find("(")
    if start < 0:
        return []
    depth, current, parts = 0, "", []
    for ch in signature[start + 1 :]:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    names = []
    for part in parts:
        found = _PARAM_NAME.search(part.split(":")[0].split("=")[0])
        if found and found.group() not in ("self", "cls", "this"):
            names.append(found.group())
    return names


def _anchor_signature(
    g: GraphView, name: str | None, snippet: str | bytes | None, language: str | None
) -> tuple[str, str, str, int, str]:
    """(kind, signature, path, line, language) of what to compare with."""
    if name is not None:
        s, path = _defined(g, name)
        return s.kind, s.signature, path, s.line, g.index.files[path].language
    symbols = [s for s in _snippet_symbols(g, snippet, language) if s.kind in _CALLABLE]
    if not symbols:
        raise GraphError("the snippet defines no function to compare by signature")
    lang = dominant_language(g, language)
    return symbols[0].kind, symbols[0].signature, "", 0, lang


def _defined(g: GraphView, name: str) -> tuple[Symbol, str]:
    for path, record in g.index.files.items():
        for s in record.symbols:
            if s.name == name and s.kind in _CALLABLE:
                return s, path
    raise GraphError(f"no function or method named '{name}' is defined in the tree")


def _by_signature(
    g: GraphView, kind: str, signature: str, at: str, line: int, language: str
) -> list[SimilarMatch]:
    wanted = parameters(signature)
    names = set(wanted)
    returns = "->" in signature or "):" in signature
    fam = family(language)
    out = []
    for path, record in g.index.files.items():
        if family(record.language) != fam:
            continue
        for s in record.symbols:
            if s.kind not in _CALLABLE or (path == at and s.line == line):
                continue
            params = parameters(s.signature)
            count = 1 / (1 + abs(len(params) - len(wanted)))
            union = names | set(params)
            overlap = len(names & set(params)) / len(union) if union else 1.0
            same_return = returns == ("->" in s.signature or "):" in s.signature)
            score = 0.4 * count + 0.4 * overlap + 0.1 * (s.kind == kind) + 0.1 * same_return
            if score >= _MIN["signature"]:
                reason = f"{len(params)} parameters" + (
                    f", shares {', '.join(sorted(names & set(params)))}"
                    if names & set(params)
                    else ""
                )
                out.append(
                    SimilarMatch(s.name, s.kind, path, s.line, s.signature, round(score, 4), reason)
                )
    return out


def _anchor_shape(
    g: GraphView, name: str | None, snippet: str | bytes | None, language: str | None
) -> tuple[Function, str, str]:
    """(function, its path, its language) to compare shapes with."""
    if name is not None:
        s, path = _defined(g, name)
        shape = load_shapes(g, [path]).get(path)
        for fn in shape.functions if shape else ():
            if fn.start == s.line and fn.shape:
                return fn, path, g.index.files[path].language
        raise GraphError(f"'{name}' has no body to compare by shape")
    lang = dominant_language(g, language)
    funcs = [fn for fn in snippet_shape(snippet or "", lang).functions if fn.shape]
    if not funcs:
        raise GraphError("the snippet holds no function of two lines or more to compare by shape")
    return funcs[0], "", lang


def _by_shape(g: GraphView, anchor: Function, at: str, language: str) -> list[SimilarMatch]:
    fam = family(language)
    paths = [p for p in select(g) if family(g.index.files[p].language) == fam]
    kinds = dict(anchor.profile)
    norm = math.sqrt(sum(v * v for v in kinds.values())) or 1.0
    out = []
    for path, shape in load_shapes(g, paths).items():
        symbols = {s.line: s for s in g.index.files[path].symbols}
        for fn in shape.functions:
            if not fn.shape or (path == at and fn.start == anchor.start):
                continue
            size = min(fn.nodes, anchor.nodes) / max(fn.nodes, anchor.nodes, 1)
            if size < _MIN["shape"]:
                continue
            if fn.shape == anchor.shape:
                score, reason = 1.0, "same syntax tree shape"
            else:
                other = dict(fn.profile)
                dot = sum(v * other.get(k, 0) for k, v in kinds.items())
                length = math.sqrt(sum(v * v for v in other.values())) or 1.0
                score = dot / (norm * length) * size
                reason = f"{fn.nodes} syntax nodes, similar kinds"
            if score >= _MIN["shape"]:
                s = symbols.get(fn.start)
                kind = s.kind if s else "function"
                sig = s.signature if s else ""
                out.append(
                    SimilarMatch(
                        fn.name or "<anonymous>", kind, path, fn.start, sig, round(score, 4), reason
                    )
                )
    return out
