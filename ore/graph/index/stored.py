"""The file records of an index as queries read them: what every query needs at once, the rest
when a query asks.

`Records` is the `Index.files` mapping. Its keys, each file's language and symbol count come from
the cache's head, which every warm query reads anyway; the symbols, imports and references of the
files (most of the cache's bytes) are read, checked and built into `FileIndex` records the first
time a query looks at a record, all at once. `symbol` needs neither: it reads the cache's name
index (`names`) and decodes only the blocks of symbol rows it shows (`symbol_at`; the lookup
itself is `queries.symbols`). So a warm `dependents`, `top-files` or `symbol` on ten thousand
files costs little more than on one thousand: the staleness check is what grows with the tree.

A section that cannot be used (damaged, not what ORE writes, or the cache was replaced since its
head was read) is never trusted: the files are parsed again, this once, and the cache is removed
so the next run rebuilds it.
"""

from __future__ import annotations

import gc
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from itertools import accumulate
from typing import Any

from .cache import BLOCK, NAMES, SYMBOLS, Head, name_index, records_of
from .records import FileIndex, Symbol

__all__ = ["Damaged", "Records", "paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic GC while hundreds of thousands of small tuples (that never form cycles) are
    built: it would only walk them again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Damaged(Exception):
    """A part of the name index or a block of symbol rows turned out unusable mid-answer."""


class Records(Mapping[str, FileIndex]):
    """path -> `FileIndex`, in path order; records are built on the first look at one.

    :param section: section `n` of the cache, decoded and checked, or None when it is unusable.
    :param recover: the records parsed afresh (called when a section is unusable).
    :param built: the records, when the caller has them already (a fresh index).
    """

    def __init__(
        self,
        head: Head,
        section: Callable[[int], Any | None],
        recover: Callable[[], dict[str, FileIndex]],
        built: dict[str, FileIndex] | None = None,
    ) -> None:
        self.head = head
        self._paths: tuple[str, ...] = head.files[0]
        self._section = section
        self._recover = recover
        self._built = built
        self._decoded: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._paths)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __getitem__(self, key: str) -> FileIndex:
        return self.all()[key]

    def __repr__(self) -> str:
        return f"<Records of {len(self)} files>"

    @cached_property
    def _where(self) -> dict[str, int]:
        return dict(zip(self._paths, range(len(self._paths)), strict=True))

    @property
    def loaded(self) -> bool:
        """Whether the records are built (a fresh index, or a query that needed them)."""
        return self._built is not None

    def all(self) -> dict[str, FileIndex]:
        """Every record (read, checked and built once)."""
        if self._built is None:
            with paused_gc():
                sections = [self._load(n) for n in range(len(self.head.spans))]
                if any(value is None for value in sections):
                    return self.recover()
                self._built = records_of(self.head, sections)
        return self._built

    def language(self, path: str) -> str:
        """The language of `path` (without building any record)."""
        if self._built is not None:
            return self._built[path].language
        return str(self.head.files[1][self._where[path]])

    def symbol_count(self, path: str) -> int:
        """How many symbols `path` defines (without building any record)."""
        if self._built is not None:
            return len(self._built[path].symbols)
        return int(self.head.files[7][self._where[path]])

    def _load(self, n: int) -> Any | None:
        if n not in self._decoded:
            self._decoded[n] = self._section(n)
        return self._decoded[n]

    def recover(self) -> dict[str, FileIndex]:
        """A section was unusable: parse the files again; from now on every answer comes from
        these records (the name index too), never from the cache."""
        self._built = self._recover()
        self._paths = tuple(self._built)
        self.__dict__.pop("_where", None)
        self.__dict__.pop("_rows", None)
        self._decoded = {NAMES: name_index(tuple(self._built.values()))}
        return self._built

    def names(self) -> tuple[Any, ...]:
        """The name index: (words, where each begins, where its rows begin, rows)."""
        value = self._load(NAMES)
        if value is None:
            self.recover()
            value = self._decoded[NAMES]
        return tuple(value)

    @cached_property
    def _rows(self) -> list[int]:
        """The symbol row one past each file's last (rows are numbered across all files)."""
        if self._built is not None:
            return list(accumulate(len(r.symbols) for r in self._built.values()))
        return list(accumulate(self.head.files[7]))

    def path_of(self, row: int) -> str:
        """The file symbol row `row` belongs to."""
        return self._paths[bisect_right(self._rows, row)]

    def symbol_at(self, row: int) -> Symbol:
        """Symbol row `row`, decoding only its block of files when no record is built."""
        at = bisect_right(self._rows, row)
        if self._built is None:
            block = at // BLOCK
            columns = self._load(SYMBOLS + block)
            if columns is None:  # the rows at hand came from the cache: start the answer again
                raise Damaged(row)
            first = self._rows[block * BLOCK - 1] if block else 0
            return Symbol(*(column[row - first] for column in columns))
        first = self._rows[at - 1] if at else 0
        return self._built[self._paths[at]].symbols[row - first]
