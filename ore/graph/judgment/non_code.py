"""Which clone groups copy no code: a paragraph repeated in two docstrings (`_prose_only`), a
signature repeated (`_headers_only`: parameter lists, docstrings, `@overload` stubs), a data
table written again with other data (`_tables_only`). They stay answers (a copy is a copy, and
dropping them cost recall against `symilar`), listed after the copied code of their level
(`clones`), where the by-hand samples found them crowding the first ten.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..index.source import SourceLines
    from ..results import CloneGroup
    from .shapes import FileShape

__all__ = ["NonCode"]


class NonCode:
    """`NonCode(shapes, lines)(group)`: whether a group copies no code. Each file's declared
    lines are found once, however many groups have a place there."""

    def __init__(self, shapes: dict[str, FileShape], lines: SourceLines) -> None:
        self._shapes, self._lines = shapes, lines
        self._declared = cache(lambda path: _declared_lines(shapes[path], lines(path)))

    def __call__(self, c: CloneGroup) -> bool:
        shapes, lines = self._shapes, self._lines
        return (
            _prose_only(shapes, c)
            or _headers_only(shapes, lines, self._declared, c)
            or _tables_only(shapes, lines, c)
        )


def _headers_only(
    shapes: dict[str, FileShape],
    lines: SourceLines,
    declared: Callable[[str], frozenset[int]],
    c: CloneGroup,
) -> bool:
    """Whether a renamed or structural group is only what functions declare, not what they do:
    in every place, each code line is a Python function's `def` line, a line of its parameter
    list or its docstring's opening line, but for the first line of a body the place stops in
    (the parameter list and docstring that babel's `format_decimal` and `format_percent` share,
    57 lines and their bodies' first), or the places are one function's `@overload` stubs.
    Such a group is a signature repeated, an interface rather than copied code: it is listed
    after the code of its level, as prose is (dropping it lost 19 of `symilar`'s groups on
    sqlalchemy, whose exact parameter lists it had absorbed); an exact group never is one."""
    if c.kind == "exact":
        return False
    if c.kind == "structural":
        names = {
            fn.name for o in c.occurrences for fn in shapes[o.path].functions if fn.start == o.start
        }
        same_file = len({o.path for o in c.occurrences}) == 1
        return same_file and len(names) == 1 and _overload_stubs(lines(c.occurrences[0].path), c)
    for o in c.occurrences:
        shape = shapes[o.path]
        if shape.language != "python":
            return False
        signature = declared(o.path)
        lo, hi = bisect_left(shape.numbers, o.start), bisect_right(shape.numbers, o.end)
        body = [n for n in shape.numbers[lo:hi] if n not in signature]
        # the first line of a body the run stops in (`locale = Locale.parse(locale)`) is
        # still the signature's; a function copied whole, however short, is a copy
        cut_short = any(fn.start <= o.end < fn.end for fn in shape.functions)
        if len(body) > (1 if cut_short else 0):
            return False
    return True


#: String literals, in the simple one-line forms data tables are written in.
_STRINGS = re.compile(r"""[rbuf]{0,2}(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')""", re.I)
#: What is left of a data line once its strings are gone: no name, no call.
_NAMELESS = re.compile(r"[^\W\d]")
#: A data line may bind its literal to a name (`past = "пред {0}"`, `names: list[str] = [`).
_BOUND = re.compile(r"^\s*\w+\s*(?::[^=]*)?=(?!=)")


#: Code lines in a row that make a table's group copied code (a method between two tables).
_CODE_RUN = 5


def _tables_only(shapes: dict[str, FileShape], lines: SourceLines, c: CloneGroup) -> bool:
    """Whether a renamed group is a data table written twice with other data: in every place,
    two code lines in three or more hold only literals (`"now": "сега",`, `"second": "една
    секунда",`: arrow's locale classes, five of its first ten groups, where every string
    differs), and no five other code lines in a row (a method copied between two tables,
    Czech's and Slovak's `_format_timeframe`, is copied code). The shape of a table is no
    copied code; an exact copy of a table is, and stays where it is."""
    if c.kind != "renamed":
        return False
    for o in c.occurrences:
        shape, text = shapes[o.path], lines(o.path)
        lo, hi = bisect_left(shape.numbers, o.start), bisect_right(shape.numbers, o.end)
        numbers = [n for n in shape.numbers[lo:hi] if n <= len(text)]
        is_data = [
            not _NAMELESS.search(_BOUND.sub("", _STRINGS.sub("", text[n - 1]), count=1))
            for n in numbers
        ]
        if 3 * sum(is_data) < 2 * max(1, len(numbers)):
            return False
        run = longest = 0
        for data in is_data:  # a method copied between the tables is copied code
            run = 0 if data else run + 1
            longest = max(longest, run)
        if longest >= _CODE_RUN:
            return False
    return True


def _overload_stubs(text: list[str], c: CloneGroup) -> bool:
    """Whether every place of a structural group is a stub marked `@overload` (its decorator
    on the line above)."""
    return all(
        1 < o.start <= len(text) and text[o.start - 2].strip().endswith("overload")
        for o in c.occurrences
    )


def _declared_lines(shape: FileShape, text: list[str]) -> frozenset[int]:
    """The code lines of a Python file that declare its functions: each `def` line through the
    `:` that opens the body (brackets balanced), and the docstring's opening line."""
    out: set[int] = set()
    for fn in shape.functions:
        depth, n = 0, fn.start
        while n <= min(fn.end, len(text)):
            line = text[n - 1].split("#", 1)[0].rstrip()
            depth += sum(line.count(ch) for ch in "([{") - sum(line.count(ch) for ch in ")]}")
            out.add(n)
            if depth <= 0 and line.endswith(":"):
                break
            n += 1
        if fn.doc:
            out.add(n + 1)
    return frozenset(out)


def _prose_only(shapes: dict[str, FileShape], c: CloneGroup) -> bool:
    """Whether every place of `c` is prose: lines of a docstring or another multi-line string
    (text in the exact view), one code line among them at most (where the string opens or
    closes). A paragraph repeated in two docstrings is a copy, and stays an answer, but after
    the copied code at the same level (library or context)."""
    for o in c.occurrences:
        numbers = shapes[o.path].numbers
        if bisect_right(numbers, o.end) - bisect_left(numbers, o.start) > 1:
            return False
    return True
