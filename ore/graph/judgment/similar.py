"""Definitions like a given one (Ori's `find_similar_patterns`), by name, signature or shape.

- `name`: the words of identifiers (`get_userById` -> get, user, by, id), filler words dropped
  and common verbs folded into one family each (get ~ fetch ~ load ~ read ...); the score is the
  Jaccard index of the two word sets, each word weighted by its rarity among the tree's names.
- `signature`: the parameter lists compared one parameter with another (name, annotation,
  default), then arity, the return shape and the kind: 0.4 for the best pairing of the
  parameters, 0.2 for the count, 0.3 for the return, 0.1 for the kind. The return is what the
  return statements hand back (`returns.return_shapes`: a tuple of three, a bool, a list, None,
  a call ...; the annotations when both have one and agree), so a renamed copy with other
  parameter names is found by what it returns. Two functions that only take as many
  parameters, or only both return some call, score below the bar.
- `shape`: functions whose syntax tree has the same shape once docstrings and annotations are
  set aside (1.0: a renamed copy), else the geometric mean of the cosine of their node kind
  counts (times the ratio of their sizes) and how alike their code lines are in order once
  names are normalised.

Tests, examples and docs are context, not peers: unless `include_context`, every library match
ranks above every one of them (`index.kinds.is_context`), so a test helper never outranks the
API it imitates.
"""

from __future__ import annotations

import math
import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING, NamedTuple

from ...errors import GraphError
from ..index.extract import MAX_BYTES, extract
from ..index.kinds import is_context
from ..index.records import Symbol
from ..index.source import read_source
from ..results import SimilarMatch
from .function_shapes import Function
from .lexer import family
from .returns import Returns, return_shapes, returns_alike
from .scope import dominant_language, need_files, select, split_words
from .shapecache import load_shapes
from .shapes import FileShape, snippet_shape, snippet_text

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["MODES", "Parameter", "find_similar", "name_words", "parameter_list", "parameters"]

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
_VERB_ROOTS = frozenset(group[0] for group in _VERBS)
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
        found = _by_name(g, name if name is not None else _snippet_name(g, snippet, language))
    elif mode == "signature":
        found = _by_signature(g, _anchor_signature(g, name, snippet, language))
    else:
        found = _by_shape(g, *_anchor_shape(g, name, snippet, language))

    def order(m: SimilarMatch) -> tuple[bool, float, str, int, str]:
        return (not include_context and is_context(m.path), -m.score, m.path, m.line, m.name)

    found.sort(key=order)
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
    """Jaccard of name words, each word weighted by how rare it is among the tree's names
    (`log(1 + names / names with it)`): in an HTTP client `request` is in every other name and
    says little; `context` says more.

    A name sharing only a verb (`get` for `read_edgelist`) says nothing of the feature and is
    left out, unless the name asked for is verbs alone. When several definitions carry the
    name itself (`read_edgelist` in two modules), each is the closest sibling there is and is
    listed first; one alone is the name asked about."""
    wanted = name_words(name)
    if not wanted:
        raise GraphError(f"'{name}' has no words to compare")
    nouns = wanted - _VERB_ROOTS
    candidates = []
    namesakes = []
    df: dict[str, int] = {}
    for path, record in g.index.files.items():
        for s in record.symbols:
            words = name_words(s.name)
            for w in words:
                df[w] = df.get(w, 0) + 1
            if s.name == name:
                namesakes.append((path, s))
            elif (nouns & words) if nouns else (wanted & words):
                candidates.append((path, s, words))
    total = sum(len(r.symbols) for r in g.index.files.values()) or 1

    def weight(words: set[str]) -> float:
        return sum(math.log(1 + total / df.get(w, 1)) for w in words)

    out = []
    if len(namesakes) > 1:
        for path, s in namesakes:
            out.append(
                SimilarMatch(s.name, s.kind, path, s.line, s.signature, 1.0, "the same name")
            )
    for path, s, words in candidates:
        shared = wanted & words
        score = weight(shared) / weight(wanted | words)
        if score >= _MIN["name"]:
            reason = "shares " + ", ".join(sorted(shared))
            out.append(
                SimilarMatch(s.name, s.kind, path, s.line, s.signature, round(score, 4), reason)
            )
    return out


class Parameter(NamedTuple):
    """One parameter of a one-line signature: its name, annotation (spaces dropped) and whether
    it has a default."""

    name: str
    annotation: str
    default: bool


def parameter_list(signature: str) -> list[Parameter]:
    """The parameters of a one-line signature (`self`, `cls`, `this`, `*`, `/` left out)."""
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
    out = []
    for part in parts:
        head, _eq, _default = part.partition("=")
        name_part, _colon, annotation = head.partition(":")
        found = _PARAM_NAME.search(name_part)
        if found and found.group() not in ("self", "cls", "this"):
            default = bool(_eq) or "?" in name_part
            out.append(Parameter(found.group(), "".join(annotation.split()), default))
    return out


def parameters(signature: str) -> list[str]:
    """Parameter names of a one-line signature (`self`, `cls`, `*`, `/` left out)."""
    return [p.name for p in parameter_list(signature)]


def return_shape(signature: str) -> str:
    """The return annotation of a one-line signature, spaces dropped ('' when none)."""
    close = _closing_paren(signature)
    if close < 0:
        return ""
    rest = signature[close + 1 :].strip()
    if rest.startswith("->"):
        rest = rest[2:]
    elif rest.startswith(":"):
        rest = rest[1:].split("=>")[0]
    else:
        return ""
    return "".join(rest.split()).rstrip("{:")


def _closing_paren(signature: str) -> int:
    start = signature.find("(")
    depth = 0
    for i in range(max(start, 0), len(signature)):
        ch = signature[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _pairing(wanted: list[Parameter], other: list[Parameter]) -> tuple[float, list[str]]:
    """How well two parameter lists pair off, in [0, 1], and the names they share: each
    parameter meets its best partner (same name 0.6, same annotation 0.3, same default 0.1,
    a position off costs a little; two unannotated parameters of one name count as the same
    annotation, so a function's own copy scores 1), over the longer list."""
    if not wanted and not other:
        return 1.0, []
    total, shared, free = 0.0, [], list(range(len(other)))
    for i, p in enumerate(wanted):
        best, best_j = 0.0, -1
        for j in free:
            q = other[j]
            score = 0.6 * (p.name == q.name) + 0.1 * (p.default == q.default)
            if p.annotation == q.annotation and (p.annotation or p.name == q.name):
                score += 0.3  # the same name unannotated on both sides is all there is to match
            score -= 0.05 * min(abs(i - j), 2)
            if score > best:
                best, best_j = score, j
        if best_j >= 0 and best > 0.1:
            free.remove(best_j)
            total += best
            if wanted[i].name == other[best_j].name:
                shared.append(p.name)
    return total / max(len(wanted), len(other)), shared


def _returns_alike(a: str, b: str) -> float:
    """Two return annotations: the same 1.0, sharing a name 0.5."""
    if a == b:
        return 1.0
    if a and b and set(_PARAM_NAME.findall(a)) & set(_PARAM_NAME.findall(b)):
        return 0.5
    return 0.0


class _Anchor(NamedTuple):
    """What signature mode compares with: kind, one-line signature, where it is (`path` ''
    for a snippet), its language and the shapes of what it returns."""

    kind: str
    signature: str
    path: str
    line: int
    language: str
    returns: Returns


def _anchor_signature(
    g: GraphView, name: str | None, snippet: str | bytes | None, language: str | None
) -> _Anchor:
    if name is not None:
        s, path = _defined(g, name)
        shapes = return_shapes(_source_lines(g, path), s.line, s.end_line)
        return _Anchor(s.kind, s.signature, path, s.line, g.index.files[path].language, shapes)
    symbols = [s for s in _snippet_symbols(g, snippet, language) if s.kind in _CALLABLE]
    if not symbols:
        raise GraphError("the snippet defines no function to compare by signature")
    lang = dominant_language(g, language)
    lines = snippet_text(snippet or "").splitlines()
    first = symbols[0]
    shapes = return_shapes(lines, first.line, first.end_line)
    return _Anchor(first.kind, first.signature, "", 0, lang, shapes)


def _source_lines(g: GraphView, path: str) -> list[str]:
    """The text lines of an indexed file ([] when it cannot be read inside the root)."""
    data = read_source(g.root, path, limit=MAX_BYTES)
    if data is None or len(data) > MAX_BYTES:
        return []
    return data.decode("utf-8", "replace").splitlines()


def _defined(g: GraphView, name: str) -> tuple[Symbol, str]:
    for path, record in g.index.files.items():
        for s in record.symbols:
            if s.name == name and s.kind in _CALLABLE:
                return s, path
    raise GraphError(f"no function or method named '{name}' is defined in the tree")


def _by_signature(g: GraphView, anchor: _Anchor) -> list[SimilarMatch]:
    """Each callable of the anchor's language family scored (module docstring); a file's text
    is read only when one of its functions could pass the bar by what it returns."""
    wanted = parameter_list(anchor.signature)
    annotated = return_shape(anchor.signature)
    fam = family(anchor.language)
    out = []
    for path, record in g.index.files.items():
        if family(record.language) != fam:
            continue
        lines: list[str] | None = None
        for s in record.symbols:
            if s.kind not in _CALLABLE or (path == anchor.path and s.line == anchor.line):
                continue
            params = parameter_list(s.signature)
            count = 1 / (1 + abs(len(params) - len(wanted)))
            pairing, shared = _pairing(wanted, params)
            score = 0.4 * pairing + 0.2 * count + 0.1 * (s.kind == anchor.kind)
            if score + 0.3 < _MIN["signature"]:
                continue
            if lines is None:
                lines = _source_lines(g, path)
            shapes = return_shapes(lines, s.line, s.end_line) if lines else Returns(frozenset(), 0)
            same_return = returns_alike(anchor.returns, shapes)
            other = return_shape(s.signature)
            if annotated and other:
                same_return = max(same_return, _returns_alike(annotated, other))
            score += 0.3 * same_return
            if score >= _MIN["signature"]:
                reason = f"{len(params)} parameters" + (
                    f", shares {', '.join(sorted(shared))}" if shared else ""
                )
                both = shapes.shapes & anchor.returns.shapes
                if both:
                    reason += ", returns " + " or ".join(sorted(both))
                out.append(
                    SimilarMatch(s.name, s.kind, path, s.line, s.signature, round(score, 4), reason)
                )
    return out


def _anchor_shape(
    g: GraphView, name: str | None, snippet: str | bytes | None, language: str | None
) -> tuple[Function, tuple[int, ...], str, str]:
    """(function, its renamed line keys, its path, its language) to compare shapes with."""
    if name is not None:
        s, path = _defined(g, name)
        shape = load_shapes(g, [path]).get(path)
        for fn in shape.functions if shape is not None else ():
            if fn.start == s.line and fn.shape and shape is not None:
                return fn, _lines_of(shape, fn), path, g.index.files[path].language
        raise GraphError(f"'{name}' has no body to compare by shape")
    lang = dominant_language(g, language)
    found = snippet_shape(snippet or "", lang)
    funcs = [fn for fn in found.functions if fn.shape]
    if not funcs:
        raise GraphError("the snippet holds no function of two lines or more to compare by shape")
    return funcs[0], _lines_of(found, funcs[0]), "", lang


def _lines_of(shape: FileShape, fn: Function) -> tuple[int, ...]:
    lo, hi = shape.span(fn.start, fn.end)
    return shape.renamed[lo:hi]


def _by_shape(
    g: GraphView, anchor: Function, lines: tuple[int, ...], at: str, language: str
) -> list[SimilarMatch]:
    """Same tree shape: 1.0. Else the geometric mean of two likenesses, so that neither alone
    passes: node-kind counts (cosine, times the size ratio) and the code lines in order once
    names are normalised (`difflib`'s ratio of renamed line keys): a near-copy with a line
    added has both, a function that merely uses the same kinds of nodes has only the first."""
    fam = family(language)
    paths = [p for p in select(g) if family(g.index.files[p].language) == fam]
    kinds = dict(anchor.profile)
    norm = math.sqrt(sum(v * v for v in kinds.values())) or 1.0
    matcher = SequenceMatcher[int](None, (), (), autojunk=False)
    matcher.set_seq2(lines)
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
                alike = dot / (norm * length) * size
                if alike < _MIN["shape"]:
                    continue
                matcher.set_seq1(_lines_of(shape, fn))
                same_lines = matcher.ratio()
                score = math.sqrt(alike * same_lines)
                reason = f"{same_lines:.0%} of the lines alike, {fn.nodes} syntax nodes"
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
