"""The file records of an index as queries read them: what every query needs at once, the rest
when a query asks.

`Records` is the `Index.files` mapping. Its keys, each file's language and symbol count come from
the cache's head, which every warm query reads anyway; the symbols, imports and references of the
files (most of the cache's bytes) are read, checked and built into `FileIndex` records the first
time a query looks at a record, all at once. `symbol` needs neither: `find_symbols` answers from
the cache's name index and decodes only the blocks of symbol rows it shows. So a warm
`dependents`, `top-files` or `symbol` on ten thousand files costs little more than on one
thousand: the staleness check is what grows with the tree.

A section that cannot be used (damaged, not what ORE writes, or the cache was replaced since its
head was read) is never trusted: the files are parsed again, this once, and the cache is removed
so the next run rebuilds it.
"""

from __future__ import annotations

import difflib
import gc
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from itertools import accumulate
from typing import Any

from .cache import BLOCK, NAMES, SYMBOLS, Head, name_index, records_of
from .records import FileIndex, Symbol
from .results import SymbolMatch

__all__ = ["Records", "find_symbols", "paused_gc"]


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


class _Damaged(Exception):
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
                raise _Damaged(row)
            first = self._rows[block * BLOCK - 1] if block else 0
            return Symbol(*(column[row - first] for column in columns))
        first = self._rows[at - 1] if at else 0
        return self._built[self._paths[at]].symbols[row - first]


def find_symbols(records: Records, name: str, limit: int | None) -> list[SymbolMatch]:
    """Definitions of `name`: exact matches in file order, then names that contain it ignoring
    case (the same name in another case first), then up to five look-alikes (difflib, 0.8);
    close matches by tier, length, name, path and line."""
    try:
        return _find_symbols(records, name, limit)
    except _Damaged:  # from now on, from the records parsed again
        records.recover()
        return _find_symbols(records, name, limit)


def _find_symbols(records: Records, name: str, limit: int | None) -> list[SymbolMatch]:
    words, starts, first, order = records.names()
    total = len(order)

    def rows(i: int) -> Any:
        found = order[first[i] : first[i + 1]]
        if found and not (min(found) >= 0 and max(found) < total):
            raise _Damaged(name)
        return found

    exact = _find(words, starts, name)
    folded = name.casefold()
    close: list[tuple[int, int]] = []  # (tier, word)
    if folded and "\n" not in folded:
        # character by character, so each word keeps its place; ASCII folds as it lowers (faster)
        text = words.lower() if words.isascii() else words.casefold()
        fstarts = starts if len(text) == len(words) else _starts(text)
        for i in _containing(text, fstarts, folded):
            if i != exact:
                close.append((0 if _word(text, fstarts, i) == folded else 1, i))
    if folded:
        near = _near(words, starts, name)
        for word in set(difflib.get_close_matches(name, near, n=5, cutoff=0.8)) - {name}:
            if folded not in word.casefold() and (j := _find(words, starts, word)) is not None:
                close.append((2, j))
    exact_rows = rows(exact)[:limit] if exact is not None else ()
    found = [_match(records, row, True) for row in exact_rows]
    need = None if limit is None else limit - len(found)
    keyed = sorted(
        (tier, len(word), word, records.path_of(row), row)
        for tier, i in close
        for word in (_word(words, starts, i),)
        for row in rows(i)
    )
    if need is not None and len(keyed) > need:  # keep the ties: the line decides among them
        end = need
        while 0 < end < len(keyed) and keyed[end][:4] == keyed[need - 1][:4]:
            end += 1
        keyed = keyed[:end]
    matches = [(key, _match(records, key[4], False)) for key in keyed]
    matches.sort(key=lambda m: (*m[0][:4], m[1].line, m[0][4]))
    return (found + [m for _key, m in matches])[:limit]


def _starts(text: str) -> list[int]:
    """Where each word of a newline-separated `text` begins, plus one past the end."""
    return list(accumulate((len(w) + 1 for w in text[1:-1].split("\n")), initial=1))


def _match(records: Records, row: int, exact: bool) -> SymbolMatch:
    name, kind, line, end_line, signature = records.symbol_at(row)
    return SymbolMatch(name, kind, records.path_of(row), line, end_line, signature, exact)


def _word(text: str, starts: Any, i: int) -> str:
    return text[starts[i] : starts[i + 1] - 1]


def _find(text: str, starts: Any, word: str) -> int | None:
    """The number of `word` in the index, or None (one `find` in C, then a binary search)."""
    if "\n" in word:
        return None
    at = text.find("\n" + word + "\n") + 1
    i = bisect_left(starts, at)
    return i if at and i < len(starts) - 1 and starts[i] == at else None


def _containing(text: str, starts: Any, needle: str) -> Iterator[int]:
    """The numbers of the words that contain `needle` (which holds no newline)."""
    at = text.find(needle, 1)
    while at >= 0:
        i = bisect_right(starts, at) - 1
        yield i
        following = starts[i + 1] if i + 1 < len(starts) else len(text)
        at = text.find(needle, max(following, at + 1))  # the next word (never backwards)


def _near(text: str, starts: Any, name: str) -> list[str]:
    """The words difflib could match with `name` at 0.8, and a few more: it keeps a word only
    when 2 * matches / (both lengths) >= 0.8, and matches are at most the shorter length and at
    most the word's characters that occur in `name`. Both bounds are counted in C: words are
    stored shortest first (a slice holds every length that can pass), and `translate` drops the
    characters of `name` from that slice at once."""
    size, count = len(name), len(starts) - 1

    def length(i: int) -> int:
        return int(starts[i + 1] - starts[i] - 1)

    lo = bisect_left(range(count), 2 * size // 3 - 1, key=length)
    hi = bisect_right(range(count), 3 * size // 2 + 1, key=length)
    if lo >= hi:
        return []
    near = text[starts[lo] : starts[hi] - 1]
    mine = "".join(set(name) - {"\n"})
    others: list[Any]
    if near.isascii() and mine.isascii():  # bytes.translate: a table lookup per byte
        others = near.encode().translate(None, mine.encode()).split(b"\n")
    else:
        others = near.translate(dict.fromkeys(map(ord, mine))).split("\n")
    return [
        word
        for word, rest in zip(near.split("\n"), others, strict=True)
        if 2.0 * min(size, len(word) - len(rest)) / (size + len(word)) >= 0.8
    ]
