"""Similar by signature: the parameter lists compared one parameter with another (name,
annotation, default), then arity, the return shape and the kind: 0.4 for the best pairing of the
parameters, 0.2 for the count, 0.3 for the return, 0.1 for the kind. The return is what the
return statements hand back (`returns.return_shapes`: a tuple of three, a bool, a list, None, a
call ...; the annotations when both have one and agree), so a renamed copy with other parameter
names is found by what it returns. Two functions that only take as many parameters, or only both
return some call, score below the bar.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from ..index.extract import MAX_BYTES
from ..index.kinds import stub_beside_module
from ..index.source import read_source, text_lines
from ..results import SimilarMatch
from .lexer import family
from .parameter_lists import NAME, Parameter, parameter_list, return_shape
from .returns import GENERIC, Returns, return_shapes, returns_alike
from .scope import split_words

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["CALLABLE", "Anchor", "by_signature", "source_lines"]

CALLABLE = frozenset({"function", "method"})
_MIN_SCORE = 0.5
#: Returns most functions have: with no parameter in common they are no likeness.
_WEAK_RETURNS = GENERIC | {"none", "stub"}


class Anchor(NamedTuple):
    """What signature mode compares with: kind, one-line signature, where it is (`path` ''
    for a snippet), its language, the shapes of what it returns, and the lines of its own
    overloads beside it (not answers: the same function again)."""

    kind: str
    signature: str
    path: str
    line: int
    language: str
    returns: Returns
    overloads: frozenset[int] = frozenset()
    name: str = ""


def source_lines(g: GraphView, path: str) -> list[str]:
    """The text lines of an indexed file ([] when it cannot be read inside the root)."""
    data = read_source(g.root, path, limit=MAX_BYTES)
    if data is None or len(data) > MAX_BYTES:
        return []
    return text_lines(data.decode("utf-8", "replace"))


def _pairing(wanted: list[Parameter], other: list[Parameter]) -> tuple[float, list[str]]:
    """How well two parameter lists pair off, in [0, 1], and the names they share: each
    parameter meets its best partner (same name 0.6, same annotation 0.3, same default 0.1,
    a position off costs a little; two unannotated parameters of one name count as the same
    annotation, so a function's own copy scores 1, catch-alls aside), over the longer list. Two catch-alls
    (`**kw` and `**kw`) pair for 0.1 whatever their names, and are not names shared: half the
    functions of a Python project end in one, so they tell nothing of what a function does."""
    if not wanted and not other:
        return 0.0, []  # two empty lists share nothing: most methods take no parameter
    total, shared, free = 0.0, [], list(range(len(other)))
    for i, p in enumerate(wanted):
        best, best_j = 0.0, -1
        for j in free:
            q = other[j]
            if p.variadic or q.variadic:
                score = 0.1 if p.variadic and q.variadic else 0.0
                if score > best:
                    best, best_j = score, j
                continue
            score = 0.6 * (p.name == q.name) + 0.1 * (p.default == q.default)
            if p.annotation == q.annotation and (p.annotation or p.name == q.name):
                score += 0.3  # the same name unannotated on both sides is all there is to match
            score -= 0.05 * min(abs(i - j), 2)
            if score > best:
                best, best_j = score, j
        if best_j >= 0 and (best > 0.1 or p.variadic):
            free.remove(best_j)
            total += best
            if wanted[i].name == other[best_j].name and not p.variadic:
                shared.append(p.name)
    return total / max(len(wanted), len(other)), shared


#: Types any function may return: an annotation naming only these says little.
_COMMON_TYPES = frozenset(
    [
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "None",
        "Any",
        "object",
        "dict",
        "list",
        "tuple",
        "set",
        "frozenset",
        "Iterator",
        "Iterable",
        "Generator",
        "Optional",
        "Union",
        "Self",
        "T",
        "Callable",
        "Sequence",
        "Mapping",
        "type",
        "string",
        "number",
        "boolean",
        "void",
        "any",
        "unknown",
        "undefined",
        "null",
        "Promise",
        "Array",
        "Record",
        "error",
    ]
)
#: Words of names too common to make two functions of no parameter siblings.
_NAME_FILLER = frozenset(
    [
        "get",
        "set",
        "is",
        "has",
        "can",
        "to",
        "from",
        "of",
        "the",
        "as",
        "for",
        "with",
        "by",
        "and",
        "or",
    ]
)


def _common_type(annotation: str) -> bool:
    return all(name in _COMMON_TYPES for name in NAME.findall(annotation))


def _siblings(a: list[str], b: list[str], returns: str) -> bool:
    """Two functions of no parameter with the same annotated return: siblings when their
    names share a word, unless what they return is nothing (`-> None`: packaging's tests of
    `validate` all share its word and its `None`)."""
    if returns in ("None", "void", "undefined", "()"):
        return False
    return bool({w for w in a if len(w) > 2} & set(b) - _NAME_FILLER)


def _returns_alike(a: str, b: str) -> float:
    """Two return annotations: the same 1.0, sharing a name 0.5."""
    if a == b:
        return 1.0
    if a and b and set(NAME.findall(a)) & set(NAME.findall(b)):
        return 0.5
    return 0.0


def by_signature(g: GraphView, anchor: Anchor) -> list[SimilarMatch]:
    """Each callable of the anchor's language family scored (module docstring); a file's text
    is read only when one of its functions could pass the bar by what it returns."""
    wanted = parameter_list(anchor.signature)
    annotated = return_shape(anchor.signature)
    named = split_words(anchor.name) if anchor.name else []
    fam = family(anchor.language)
    out = []
    for path, record in g.index.files.items():
        if family(record.language) != fam or stub_beside_module(path, g.index.files):
            continue  # another language; a stub beside its module, the module's names again
        lines: list[str] | None = None
        for s in record.symbols:
            if s.kind not in CALLABLE or (
                path == anchor.path and (s.line == anchor.line or s.line in anchor.overloads)
            ):
                continue  # the anchor itself, and its overloads beside it
            params = parameter_list(s.signature)
            count = 1 / (1 + abs(len(params) - len(wanted)))
            pairing, shared = _pairing(wanted, params)
            score = 0.4 * pairing + 0.2 * count + 0.1 * (s.kind == anchor.kind)
            if score + 0.3 < _MIN_SCORE:
                continue
            if lines is None:
                lines = source_lines(g, path)
            shapes = return_shapes(lines, s.line, s.end_line) if lines else Returns(frozenset(), 0)
            same_return = returns_alike(anchor.returns, shapes)
            other = return_shape(s.signature)
            if annotated and other:
                same_return = max(same_return, _returns_alike(annotated, other))
            score += 0.3 * same_return
            own_return = bool((shapes.shapes & anchor.returns.shapes) - _WEAK_RETURNS)
            same_type = bool(annotated) and annotated == other
            # the project's own type annotated as the return of both (tomlkit's `load(fp)` and
            # `loads(string)`, `-> TOMLDocument`) says what a call hands back
            own_return = own_return or (same_type and not _common_type(annotated))
            # the same words name it, with the same annotated return: a Protocol's stub of
            # it, an alias (`getEffectiveLevel`); of no parameter, a name word shared is
            # enough (`thousands_separator() -> str`, `decimal_separator() -> str`)
            words = split_words(s.name)
            namesake = (
                same_type
                and bool(named)
                and (words == named or (not (wanted or params) and _siblings(words, named, other)))
            )
            if not (own_return or namesake) and (
                not pairing or (len(wanted) >= 3 and len(shared) < 2)
            ):
                continue  # only as many parameters, or one of three (`locale`), and a call
            if score >= _MIN_SCORE:
                reason = f"{len(params)} parameters" + (
                    f", shares {', '.join(sorted(shared))}" if shared else ""
                )
                both = shapes.shapes & anchor.returns.shapes
                if both == {"stub"}:
                    reason += ", both stubs"
                elif both:
                    reason += ", returns " + " or ".join(sorted(both - {"stub"}))
                out.append(
                    SimilarMatch(s.name, s.kind, path, s.line, s.signature, round(score, 4), reason)
                )
    return out
