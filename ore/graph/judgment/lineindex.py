"""Which files hold a code line (by its renamed key) or a function shape: kept in memory by a
long-lived process, so a snippet is compared only with the files that can match it.

`match_snippet` looks at a file only when it shares a non-trivial renamed line or a function
shape with the snippet; every other file yields nothing. A process answering one question scans
each file's lines for that (a few milliseconds per thousand files). A process answering many
(`ore mcp`, through `ore.graph.serve.WarmGraph`, which calls `keep`) builds this index once and
then looks the snippet's keys up instead. It is kept up to date by the shapes themselves: a
file's entry is rebuilt when the shape handed in is not the one it was built from (a shape is
made again only when the file's content changed), so an edit costs that one file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .shapes import FileShape

__all__ = ["LineIndex", "forget", "keep", "kept"]

_KEPT: dict[Path, dict[int, LineIndex]] = {}


def keep(root: Path) -> None:
    """Keep indexes for `root` from now on (this process answers many questions about it)."""
    _KEPT.setdefault(root, {})


def forget(root: Path) -> None:
    """Stop keeping the indexes of `root` (the process is done with it)."""
    _KEPT.pop(root, None)


def kept(root: Path, min_tokens: int) -> LineIndex | None:
    """The index of lines of at least `min_tokens` tokens kept for `root` (made on first use),
    or None when this process answers once and keeps none."""
    indexes = _KEPT.get(root)
    if indexes is None:
        return None
    if min_tokens not in indexes:
        indexes[min_tokens] = LineIndex(min_tokens)
    return indexes[min_tokens]


class LineIndex:
    """renamed line key -> files holding it (lines of `min_tokens` tokens or more), and
    function shape -> files defining one, each file's part built from the shape it was given."""

    def __init__(self, min_tokens: int) -> None:
        self.min_tokens = min_tokens
        self._shapes: dict[str, FileShape] = {}
        self._lines: dict[int, list[str]] = {}
        self._functions: dict[str, list[str]] = {}
        self.built = 0  # file entries built so far (a test reads it: an edit builds one)

    def files_with(
        self, shapes: Mapping[str, FileShape], lines: Iterable[int], functions: Iterable[str]
    ) -> list[str]:
        """The files of `shapes` holding one of `lines` (renamed keys of at least `min_tokens`
        tokens) or defining a function of one of `functions` (shapes), in path order."""
        self._sync(shapes)
        found: set[str] = set()
        for key in lines:
            found.update(self._lines.get(key, ()))
        for shape in functions:
            found.update(self._functions.get(shape, ()))
        return sorted(found.intersection(shapes))

    def _sync(self, shapes: Mapping[str, FileShape]) -> None:
        known = self._shapes
        for path, shape in shapes.items():
            if known.get(path) is not shape:
                self._drop(path)
                self._add(path, shape)

    def _keys(self, shape: FileShape) -> tuple[set[int], set[str]]:
        least = self.min_tokens
        lines = {r for r, t in zip(shape.renamed, shape.tokens, strict=True) if t >= least}
        return lines, {fn.shape for fn in shape.functions if fn.shape}

    def _add(self, path: str, shape: FileShape) -> None:
        lines, functions = self._keys(shape)
        for line in lines:
            self._lines.setdefault(line, []).append(path)
        for function in functions:
            self._functions.setdefault(function, []).append(path)
        self._shapes[path] = shape
        self.built += 1

    def _drop(self, path: str) -> None:
        shape = self._shapes.pop(path, None)
        if shape is None:
            return
        lines, functions = self._keys(shape)
        for line in lines:
            _remove(self._lines, line, path)
        for function in functions:
            _remove(self._functions, function, path)


def _remove(table: dict[Any, list[str]], key: object, path: str) -> None:
    paths = table[key]
    paths.remove(path)
    if not paths:
        del table[key]
