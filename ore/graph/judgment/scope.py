"""Which indexed files a judgment looks at (path prefixes, a language, tests and generated code
left out), and the words of an identifier."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import GraphError
from ..index.kinds import is_generated, is_test
from ..index.languages import LANGUAGES

if TYPE_CHECKING:
    from ..index.records import Symbol
    from .view import GraphView

__all__ = ["dominant_language", "need_files", "nested_lines", "select", "split_words"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
#: A run of letters in any script, or of digits: what a name's words are cut from.
_RUN = re.compile(r"[^\W\d_]+|\d+")


def select(
    g: GraphView,
    paths: Sequence[str] = (),
    *,
    exclude_tests: bool = False,
    family: Iterable[str] | None = None,
) -> list[str]:
    """Indexed files under any of `paths` (all when empty), optionally of some languages,
    without tests and generated code when `exclude_tests`."""
    prefixes = [_prefix(g, p) for p in paths]
    languages = set(family) if family is not None else None
    root = str(g.root)
    out = []
    for path, record in g.index.files.items():
        if languages is not None and record.language not in languages:
            continue
        if prefixes and not any(path == p or path.startswith(p + "/") or not p for p in prefixes):
            continue
        if exclude_tests and (is_test(path) or is_generated(root, path)):
            continue
        out.append(path)
    return out


def _prefix(g: GraphView, raw: str) -> str:
    """The path prefix `raw` names under the root; an absolute path must lie inside the root
    (`/` is the file system's root, not the tree's, and is refused like `/etc`)."""
    if os.path.isabs(raw):
        try:
            raw = Path(raw).resolve().relative_to(Path(g.root).resolve()).as_posix()
        except (ValueError, OSError):
            raise GraphError(
                f"'{raw}' is outside the root {g.root}; give a path under it"
            ) from None
    name = raw.replace("\\", "/").strip("/")
    while name.startswith("./"):
        name = name[2:]
    if name in ("", "."):
        return ""
    if name in g.index.files or any(p.startswith(name + "/") for p in g.files):
        return name
    return g.resolve_file(raw)  # a unique suffix, or a GraphError that says what exists


def need_files(g: GraphView, files: Sequence[str], what: str) -> None:
    """GraphError when there is nothing to compare with."""
    if not g.files:
        raise GraphError(f"no source files are indexed under {g.root}; {what} needs some")
    if not files:
        raise GraphError(f"no indexed file matches the scope given; {what} needs some")


def dominant_language(g: GraphView, language: str | None) -> str:
    """`language` checked, or the language most files of the index are in."""
    if language is not None:
        if language not in LANGUAGES:
            raise GraphError(f"unknown language '{language}'; use one of {', '.join(LANGUAGES)}")
        return language
    counts = Counter(r.language for r in g.index.files.values())
    if not counts:
        raise GraphError(f"no source files are indexed under {g.root}; nothing to compare with")
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]


def split_words(name: str) -> list[str]:
    """`get_userByID2` -> ["get", "user", "by", "id", "2"]: words of an identifier, lower case.
    Letters of any script count (`naïveCafé` -> naïve, café), not only ASCII's."""
    if name.isascii():
        return [w.lower() for w in _WORD.findall(name)]
    out: list[str] = []
    for run in _RUN.findall(name):
        out += [w.lower() for w in (_WORD.findall(run) if run.isascii() else _camel(run))]
    return out


def _camel(run: str) -> list[str]:
    """A run of letters cut where case says a word starts, as `_WORD` cuts ASCII: before an
    upper-case letter that follows a lower-case one, and before the last capital of a run of
    capitals followed by a lower-case letter (`HTTPÉtat` -> HTTP, État)."""
    words: list[str] = []
    start = 0
    for i in range(1, len(run)):
        before, here = run[i - 1], run[i]
        after = run[i + 1] if i + 1 < len(run) else ""
        if here.isupper() and (before.islower() or (before.isupper() and after.islower())):
            words.append(run[start:i])
            start = i
    words.append(run[start:])
    return words


def nested_lines(symbols: Sequence[Symbol]) -> set[int]:
    """The lines of the definitions inside a function or method (a test's five `week_of_month`
    helpers, a decorator's `wrapper`): part of what encloses them, never answers."""
    out: set[int] = set()
    inside = 0  # the last line of the function that encloses what follows
    for s in sorted(symbols, key=lambda s: (s.line, -s.end_line)):
        if s.line <= inside:
            out.add(s.line)
        elif s.kind in ("function", "method"):
            inside = s.end_line
    return out
