"""One key of a small TOML file set or removed in place: every other line (comments, blank
lines, order, a value's alignment and its trailing comment) stays as the user wrote it.

Why a module of its own: `ore config set`, `ore log off` and `ore models default` change one
key of a file a person also edits by hand, and rewriting it from its values dropped what they
wrote. This editor knows only enough TOML to find where each statement starts and ends
(strings, multi-line strings and arrays, comments, table headers); each statement's key is read
by `tomllib` itself. Whatever it cannot place (an array of tables, a statement it cannot read)
makes it return None, and the caller falls back to writing the file from its values; the
caller also checks that the edited text reads back as meant. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["set_in_place"]

#: `Render(path)`: the TOML text of the value at `path` after the change, None when it is gone.
Render = Callable[[tuple[str, ...]], "str | None"]

_HEADER = re.compile(r"[ \t]*\[(?!\[)")


class _Statement(NamedTuple):
    """Lines `first`..`last` (inclusive) of the text: a header (`key` empty) or an assignment
    of `key` inside `table`. `value_at` is where the value starts on the first line;
    `comment_at` where the last line's trailing comment (and the blanks before it) starts."""

    first: int
    last: int
    table: tuple[str, ...]
    key: tuple[str, ...]
    value_at: int
    comment_at: int | None

    @property
    def path(self) -> tuple[str, ...]:
        return self.table + self.key


def set_in_place(text: str, target: tuple[str, ...], render: Render) -> str | None:
    """`text` with the key at `target` (`("model",)`, `("options", "temperature")`) set to
    `render(target)`, or removed when that is None; None when the text is laid out in a way
    this editor does not change (the caller then writes the file from its values)."""
    lines = _lines(text)
    statements = _statements(lines)
    if statements is None:
        return None
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    for s in statements:
        if s.key and s.path == target:
            return _replaced(lines, s, render(target))
        if s.key and s.path == target[: len(s.path)]:  # an inline table holding the key
            return _replaced(lines, s, render(s.path))
    value = render(target)
    if value is None:
        return text  # nothing to remove
    return _inserted(lines, statements, target, value, newline)


def _lines(text: str) -> list[str]:
    """`text`'s lines with their endings, split at "\n" only (a U+2028 in a string is text)."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _replaced(lines: list[str], s: _Statement, value: str | None) -> str:
    if value is None:
        return _splice(lines, s.first, s.last + 1, [])
    last = lines[s.last].rstrip("\r\n")
    comment = last[s.comment_at :] if s.comment_at is not None else ""
    line = lines[s.first][: s.value_at] + value + comment + lines[s.last][len(last) :]
    return _splice(lines, s.first, s.last + 1, [line])


def _inserted(
    lines: list[str], statements: list[_Statement], target: tuple[str, ...], value: str, nl: str
) -> str | None:
    """A new assignment after the last one of its table (after the table's header; a new
    table at the end; a top-level key before the first header and the comments above it)."""
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += nl
    table = target[:-1]
    mine = [s for s in statements if s.table == table]
    dotted = [s for s in statements if _dotted_in(s, table)]
    if dotted:  # the table is made of dotted keys (`options.top_k = 1`): add one more
        s = dotted[-1]
        line = f"{_dotted(target[len(s.table) :])} = {value}{nl}"
        return _splice(lines, s.last + 1, s.last + 1, [line])
    line = f"{_dotted(target[-1:])} = {value}{nl}"
    if mine:
        at = mine[-1].last + 1
        return _splice(lines, at, at, [line])
    if table:
        if any(s.table[: len(table)] == table for s in statements):
            return None  # only its sub-tables are written: not a layout this editor changes
        gap = [nl] if lines and lines[-1].strip() else []
        return "".join([*lines, *gap, f"[{_dotted(table)}]{nl}", line])
    headers = [s.first for s in statements if not s.key]
    if not headers:
        return "".join([*lines, line])
    at = headers[0]
    while at > 0 and lines[at - 1].lstrip().startswith("#"):
        at -= 1  # the comments just above a header speak of its table
    return _splice(lines, at, at, [line, nl])


def _splice(lines: list[str], start: int, end: int, new: list[str]) -> str:
    """The text with `lines[start:end]` replaced by `new`."""
    return "".join([*lines[:start], *new, *lines[end:]])


def _dotted_in(s: _Statement, table: tuple[str, ...]) -> bool:
    """Whether `s` is a dotted key of `table` written in an outer table (`options.top_k = 1`)."""
    outer = len(s.table) < len(table) and s.table == table[: len(s.table)]
    return bool(s.key) and outer and s.path[: len(table)] == table


def _dotted(keys: tuple[str, ...]) -> str:
    return ".".join(_key(k) for k in keys)


def _key(key: str) -> str:
    import json

    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def _statements(lines: list[str]) -> list[_Statement] | None:
    """Each header and assignment of the text, with its key read by tomllib; None when a line
    cannot be placed (an array of tables, or text tomllib would not read)."""
    import tomllib

    found: list[_Statement] = []
    table: tuple[str, ...] = ()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if stripped.startswith("[["):
            return None
        last, comment_at, equals = _extent(lines, i)
        if last is None:
            return None
        try:
            if _HEADER.match(line):
                table = _path(tomllib.loads(line[: comment_at or len(line)].strip()))
                found.append(_Statement(i, last, table, (), 0, comment_at))
            elif equals is not None:
                key = _path(tomllib.loads(line[:equals] + "= 0"))
                value_at = equals + 1
                while value_at < len(line) and line[value_at] in " \t":
                    value_at += 1
                found.append(_Statement(i, last, table, key, value_at, comment_at))
            else:
                return None
        except (tomllib.TOMLDecodeError, RecursionError):
            return None
        i = last + 1
    return found


def _path(data: object) -> tuple[str, ...]:
    """The one key path of a one-statement document (`{"a": {"b": 0}}`: a.b)."""
    path: list[str] = []
    while isinstance(data, dict) and len(data) == 1:
        ((name, data),) = data.items()
        path.append(name)
    return tuple(path)


def _extent(lines: list[str], first: int) -> tuple[int | None, int | None, int | None]:
    """Where the statement starting on line `first` ends: its last line, where that line's
    trailing comment starts (blanks before it included), and the column of the first `=`
    outside strings on the first line. (None, ...) when the text ends inside it."""
    state = ""  # '"""' or "'''" inside a multi-line string
    depth = 0  # open [ and { of a value (a header's own brackets open and close on its line)
    equals = None
    for n in range(first, len(lines)):
        line, i, comment_at = lines[n], 0, None
        while i < len(line):
            if state:
                if line[i] == "\\" and state == '"""':
                    i += 2
                    continue
                if line.startswith(state, i):
                    i += 3
                    while line.startswith(state[0], i):  # up to two quotes end the content
                        i += 1
                    state = ""
                    continue
                i += 1
                continue
            char = line[i]
            if char == "#":
                comment_at = i
                while comment_at > 0 and line[comment_at - 1] in " \t":
                    comment_at -= 1
                break
            if line.startswith(('"""', "'''"), i):
                state = line[i : i + 3]
                i += 3
            elif char in "\"'":
                i = _string_end(line, i)
            else:
                if char in "[{":
                    depth += 1
                elif char in "]}":
                    depth -= 1
                elif char == "=" and equals is None and n == first and depth == 0:
                    equals = i
                i += 1
        if not state and depth <= 0:
            return n, comment_at, equals
    return None, None, None


def _string_end(line: str, start: int) -> int:
    """Just past the one-line string opening at `start` (a basic string minds its escapes)."""
    quote, i = line[start], start + 1
    while i < len(line):
        if line[i] == "\\" and quote == '"':
            i += 2
            continue
        if line[i] == quote:
            return i + 1
        i += 1
    return len(line)
