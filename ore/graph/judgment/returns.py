"""What a function returns, read from its return statements: the return shape `similar --mode
signature` compares (a tuple of three, a bool, a list, None, a call ...), because a renamed
copy shares neither parameter names nor annotations but still hands back the same thing.

A lexical reading of each `return` line, nested `def`s left out (Python): good enough to tell
a function returning `(pred, succ, w)` from one returning `True` or `[path]`, which is all the
score needs. Shapes: `none`, `bool`, `tuple<n>`, `list`, `dict`, `generator`, `literal`, `call`,
`name`, `other`; `call` and `name` say little (most functions return one), the rest say more.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["GENERIC", "Returns", "return_shapes", "returns_alike"]

GENERIC = frozenset({"call", "name", "other"})
_RETURN = re.compile(r"^(\s*)return\b(.*)$")
_DEF = re.compile(r"^(\s*)(async\s+)?def\s|^(\s*)class\s")
_BOOL_OPS = re.compile(r"==|!=|<=|>=|(?<![-=])[<>](?!=)|\bnot\b|\bis\b|\bin\b|\band\b|\bor\b")
_LITERAL = re.compile(r"""^(-?\d[\w.]*|[rbuf]*['"].*|\.\.\.)$""", re.IGNORECASE)
_CALL = re.compile(r"^[A-Za-z_$][\w$.]*\s*\(")
_NAME = re.compile(r"^[A-Za-z_$][\w$.]*$")


class Returns(NamedTuple):
    """The shapes a function's return statements hand back, and how many there are."""

    shapes: frozenset[str]
    statements: int  # not `count`: a NamedTuple already has tuple.count


def return_shapes(lines: Sequence[str], start: int, end: int) -> Returns:
    """The return statements on lines `start`..`end` (1-based) of a text; a function that
    never returns a value is `none`."""
    out: set[str] = set()
    count = 0
    skip_deeper: int | None = None  # indentation of a nested def whose body is skipped
    for raw in lines[start : max(start, end)]:  # the def line itself is lines[start - 1]
        stripped = raw.strip()
        if not stripped:
            continue
        indent = len(raw) - len(raw.lstrip())
        if skip_deeper is not None:
            if indent > skip_deeper:
                continue
            skip_deeper = None
        if _DEF.match(raw):
            skip_deeper = indent
            continue
        found = _RETURN.match(raw)
        if found:
            out.add(_shape(found.group(2)))
            count += 1
    if not out and _stub_body(lines[start : max(start, end)]):
        return Returns(frozenset({"stub"}), 0)  # like other stubs only, not like a procedure
    return Returns(frozenset(out or {"none"}), count)


_DOCSTRING = re.compile(r"^[rbuRBU]*(\"{3}|'{3})(.*?)\1", re.S)


def _stub_body(body: Sequence[str]) -> bool:
    """Whether a body only documents a function: a docstring, `...`, `pass` or `raise
    NotImplementedError` (a Protocol's or an abstract method's). Its falling off the end is no
    `none` return: structlog's `-> FilteringBoundLogger` stubs shared "returns none" with
    every procedure."""
    text = "\n".join(line.strip() for line in body).strip()
    found = _DOCSTRING.match(text)
    if found:
        text = text[found.end() :].strip()
    return text in ("", "...", "pass") or text.startswith("raise NotImplementedError")


def _shape(expression: str) -> str:
    text = expression.split("#", 1)[0].strip().rstrip(";").strip()
    if text in ("", "None", "null", "undefined"):
        return "none"
    if text in ("True", "False", "true", "false"):
        return "bool"
    commas, depth, opened = _top_level_commas(text)
    if commas and depth == 0:
        return f"tuple{commas + 1 - text.rstrip().endswith(',')}"
    if text.startswith("(") and opened:
        inner = text[1:]
        if re.search(r"\bfor\b", _strip_brackets(inner)):
            return "generator"  # (v for u, v, d in edges)
        n, d, _ = _top_level_commas(inner)
        if n and d <= 0:
            return f"tuple{n + 1 - inner.rstrip(') ').endswith(',')}"
        if inner.rstrip().endswith(",") or not inner.strip():
            return "tuple"  # a tuple written over several lines
    if text.startswith("["):
        return "list"
    if text.startswith("{"):
        return "dict"
    if text.startswith("not ") or _BOOL_OPS.search(_strip_brackets(text)):
        return "bool"
    if _LITERAL.match(text):
        return "literal"
    if _CALL.match(text):
        return "call"
    if _NAME.match(text):
        return "name"
    return "other"


def _top_level_commas(text: str) -> tuple[int, int, bool]:
    """Commas outside brackets and strings, the bracket depth at the end, whether the text
    opens with a bracket."""
    outside, depth = _outside(text)
    return outside.count(","), depth, text[:1] in "([{"


def _strip_brackets(text: str) -> str:
    """The text with bracketed parts and strings removed: `f(a == b)` is a call, not a bool."""
    return _outside(text)[0]


def _outside(text: str) -> tuple[str, int]:
    """The characters of `text` outside brackets and strings, and the bracket depth at its end
    (below 0 when it closes more than it opens)."""
    out, depth, quote = [], 0, ""
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out), depth


def returns_alike(a: Returns, b: Returns) -> float:
    """How alike two functions' returns are, in [0, 1]: the Jaccard index of the shapes,
    halved when all they share is generic (a call, a name: most functions return one of
    those), times 0.7 + 0.3 of the ratio of their numbers of return statements (a helper
    with one `return a, b, c` is less like one with three than the copy is)."""
    shared = a.shapes & b.shapes
    if not shared:
        return 0.0
    score = len(shared) / len(a.shapes | b.shapes)
    if shared <= GENERIC:
        score /= 2
    return score * (
        0.7 + 0.3 * min(a.statements, b.statements) / max(a.statements, b.statements, 1)
    )
