"""`symbol`: definitions by name, answered from the cache's name index.

`find_symbols` looks a name up in the name index (`index.cache`: every distinct symbol name,
shortest first, as one text searched in C) and decodes only the blocks of symbol rows it shows,
so a warm `symbol` on ten thousand files costs little more than on one thousand. A block that
turns out unusable mid-answer (`index.stored.Damaged`) starts the answer again from records
parsed afresh.
"""

from __future__ import annotations

import difflib
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from itertools import accumulate, compress
from operator import ge, sub
from typing import Any

from ..index.stored import Damaged, Records
from ..results import SymbolMatch

__all__ = ["find_symbols"]


def find_symbols(records: Records, name: str, limit: int | None) -> list[SymbolMatch]:
    """Definitions of `name`: exact matches in file order, then names that contain it ignoring
    case (the same name in another case first), then up to five look-alikes (difflib, 0.8);
    close matches by tier, length, name, path and line."""
    try:
        return _find_symbols(records, name, limit)
    except Damaged:  # from now on, from the records parsed again
        records.recover()
        return _find_symbols(records, name, limit)


def _find_symbols(records: Records, name: str, limit: int | None) -> list[SymbolMatch]:
    words, starts, first, order = records.names()
    total = len(order)

    def rows(i: int) -> Any:
        found = order[first[i] : first[i + 1]]
        if found and not (min(found) >= 0 and max(found) < total):
            raise Damaged(name)
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
    name, kind, line, end_line, signature = records.symbol_at(row)[:5]
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
    words = near.split("\n")
    # the least count of shared characters that can pass, per word length (the same test, made
    # once per length), so the words are kept in C: a warm body asks on every call
    least: dict[int, int] = {}
    for n in set(map(len, words)):
        least[n] = next((c for c in range(n + 1) if 2.0 * min(size, c) / (size + n) >= 0.8), n + 1)
    shared = map(sub, map(len, words), map(len, others))
    return list(compress(words, map(ge, shared, map(least.__getitem__, map(len, words)))))
