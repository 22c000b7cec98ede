"""A file edited again, read by revisiting only the top-level nodes the edit touched.

A long-lived process (`ore mcp`) parses a file it parsed before incrementally from its last tree
(`languages.parse`); this does the same for the record. The record of a file is a sum over its
top-level nodes (a class, a function, an import, a statement): each node's definitions, imports
and used names (counted by their text) depend on that node alone. So the record is kept as one
`_Piece` per top-level node, and after an edit only the nodes inside the edited span, or inside
a range whose structure changed (`Tree.changed_ranges`: an edit can re-shape code around it),
are read again with the language's query (its cursor limited to their bytes); every other
node's piece is kept (moved by the lines and bytes the edit added when it comes after it). The
file-wide step, which used names count (those an import of the file binds), runs on the summed
counts. A comment added to a 2,890-line file costs a query over that comment, not over the file.

The first edit of a file in a process reads the whole tree once more (its pieces are made then);
the record is always the one `extract._record` gives for the whole tree (tests/graph/
test_incremental_extract.py checks random edits).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import chain, islice
from operator import attrgetter, itemgetter, le
from typing import Any, NamedTuple

from .binding import kept_refs
from .languages import Edit
from .records import EXPORTED, LOCAL, FileIndex, Import, Symbol

__all__ = ["Part", "Stamp", "bound_by", "revisited", "summed"]

Row = tuple[int, str, int, Symbol]  # (line, name, start byte, symbol): the order of symbols


class Part(NamedTuple):
    """What the captures of a whole tree, or of one top-level node, add to a record."""

    symbols: tuple[Row, ...]  # sorted
    imports: tuple[Import, ...]  # in document order
    directives: tuple[Import, ...] | None  # None: no top-level comment captured
    bare: Counter[bytes]  # used names by their text (the tails of qualified types left out)
    qualified: Counter[bytes]
    #: JS/TS: the part is a top-level import or export (the file is a module), and the names
    #: it exports without declaring them (`export { a, b }`, `export default a`, `export = a`)
    module: bool = False
    exports: frozenset[str] = frozenset()

    def moved(self, bytes_: int, rows: int) -> Part:
        """The same code `bytes_` and `rows` further down the file."""
        if not bytes_ and not rows:
            return self
        symbols = tuple(
            (
                line + rows,
                name,
                at + bytes_,
                sym._replace(line=line + rows, end_line=sym.end_line + rows),
            )
            for line, name, at, sym in self.symbols
        )
        if not rows:
            return self._replace(symbols=symbols)
        directives = self.directives
        return self._replace(
            symbols=symbols,
            imports=tuple(imp._replace(line=imp.line + rows) for imp in self.imports),
            directives=None
            if directives is None
            else tuple(i._replace(line=i.line + rows) for i in directives),
        )


class Stamp(NamedTuple):
    """What a record holds of the file rather than of its tree."""

    size: int
    mtime_ns: int
    digest: str
    non_utf8: bool


class _Piece(NamedTuple):
    """One top-level node: its bytes, the row it starts on, and its part."""

    start: int
    end: int
    row: int
    part: Part


class _Kept(NamedTuple):
    """One file's last record, the pieces it was summed from, and what its imports bind."""

    language: str
    path: str
    data: bytes
    pieces: tuple[_Piece, ...]
    bare: Counter[bytes]  # the pieces' counts summed
    qualified: Counter[bytes]
    record: FileIndex
    bound: set[str]


Refs = tuple[tuple[str, int], ...]

#: The pieces of the files extracted through `revisited` lately (newest last), one per file.
_KEPT: list[_Kept] = []
_KEEP = 8


def summed(
    path: str,
    language: str,
    data: bytes,
    tree: Any,
    parts: Sequence[Part],
    stamp: Stamp,
    refs: Callable[[set[str]], Refs],
    lines: int | None = None,
    binds: Callable[[Sequence[Import]], set[str]] | None = None,
    module: bool | None = None,
) -> FileIndex:
    """The record of a file from the parts of its tree in document order: the one step that
    reads the whole file's parts. `refs(bound)` counts the used names that are evidence, given
    the names the file's imports bind (`binds(imports)`, by default `bound_by`); `lines` when
    known. A `LOCAL` top-level name becomes `EXPORTED` here when no part makes the file a
    module (`module`: the caller knows better, for a piece of a file) or one exports it."""
    # Each part's rows are sorted, so the whole is when each part's last row comes before the
    # next one's first (rows of two parts never share a start byte: the tuples' first three
    # decide). Every pass over the parts runs in C: a 2,890-line file has 600 of them.
    found = list(filter(None, map(_SYMBOLS, parts)))
    rows: list[Row] = list(chain.from_iterable(found))
    if not all(map(le, map(_LAST, found), map(_FIRST, islice(found, 1, None)))):
        rows.sort(key=_first_three)  # by line and name; ties (minified code) by position
    if any(row[3].reach == LOCAL for row in rows):
        rows = _exported(rows, parts, module)
    imports = list(chain.from_iterable(map(_IMPORTS, parts)))
    directives = list(filter(None, map(_DIRECTIVES, parts)))  # each in line order already
    if directives:
        imports += [imp for found in directives for imp in found]
        imports.sort(key=_line)
    if lines is None:
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return FileIndex(
        path=path,
        language=language,
        size=stamp.size,
        mtime_ns=stamp.mtime_ns,
        digest=stamp.digest,
        lines=lines,
        symbols=tuple(map(_SYMBOL, rows)),
        imports=tuple(imports),
        refs=refs((binds or bound_by)(imports)),
        parse_error=tree.root_node.has_error,
        non_utf8=stamp.non_utf8,
    )


def _exported(rows: list[Row], parts: Sequence[Part], module: bool | None) -> list[Row]:
    """`rows` with each `LOCAL` name the file makes importable `EXPORTED`: every one in a
    script (no top-level import or export), those a part exports by name in a module."""
    if module is None:
        module = any(part.module for part in parts)
    names: set[str] = set().union(*(part.exports for part in parts)) if module else set()
    return [
        (line, name, at, sym._replace(reach=EXPORTED))
        if sym.reach == LOCAL and (not module or name in names)
        else (line, name, at, sym)
        for line, name, at, sym in rows
    ]


_SYMBOLS, _IMPORTS, _DIRECTIVES = (attrgetter(name) for name in Part._fields[:3])
_FIRST, _LAST, _SYMBOL = itemgetter(0), itemgetter(-1), itemgetter(3)


def bound_by(imports: Sequence[Import]) -> set[str]:
    """The local names a file's imports bind (the head of a dotted one), re-exports aside."""
    return {n.split(".", 1)[0] for imp in imports if imp.kind != "export" for n in imp.binds}


def revisited(
    path: str,
    language: str,
    data: bytes,
    tree: Any,
    edit: Edit,
    stamp: Stamp,
    read: Callable[[list[Any]], list[Part]],
) -> FileIndex:
    """The record of `data` (parsed into `tree` from the kept tree of `edit.old`), equal to the
    whole tree's: `read(nodes)` (the parts of top-level nodes) is asked only for the nodes the
    edit can have changed when this file's pieces for `edit.old` are kept, for all otherwise."""
    known = None
    for kept in _KEPT:
        if kept.language == language and kept.path == path:
            known = kept
    if known is not None and known.data == data:
        record = known.record
        if (record.size, record.mtime_ns, record.digest, record.non_utf8) == stamp:
            return record
        return replace(record, **stamp._asdict())
    bound: list[set[str]] = []  # what the new record's imports bind, found once

    def binds(imports: Sequence[Import]) -> set[str]:
        same = known is not None and tuple(imports) == known.record.imports
        bound.append(known.bound if same and known is not None else bound_by(imports))
        return bound[-1]

    found = None
    if known is not None and known.data == edit.old:
        found = _kept_pieces(known, tree, edit, data)
    if found is None:
        kids = tree.root_node.children
        parts = read(kids)
        pieces = tuple(
            _Piece(kid.start_byte, kid.end_byte, kid.start_point[0], part)
            for kid, part in zip(kids, parts, strict=True)
        )
        bare: Counter[bytes] = Counter()
        qualified: Counter[bytes] = Counter()
        for part in parts:
            bare.update(part.bare)
            qualified.update(part.qualified)

        def counted(bound: set[str]) -> Refs:
            return kept_refs(language, bare, qualified, bound)

        record = summed(path, language, data, tree, parts, stamp, counted, binds=binds)
    else:
        assert known is not None
        before, middle, after, gone, rows = found
        fresh = read(middle)
        pieces = (
            *before,
            *(
                _Piece(kid.start_byte, kid.end_byte, kid.start_point[0], part)
                for kid, part in zip(middle, fresh, strict=True)
            ),
            *after,
        )
        more_bare: Counter[bytes] = Counter()  # what the edit added and took away
        more_qualified: Counter[bytes] = Counter()
        for piece in gone:
            more_bare.subtract(piece.part.bare)
            more_qualified.subtract(piece.part.qualified)
        for part in fresh:
            more_bare.update(part.bare)
            more_qualified.update(part.qualified)
        bare = _added(known.bare, more_bare)
        qualified = _added(known.qualified, more_qualified)
        old = edit.old
        newlines = known.record.lines - (1 if old and not old.endswith(b"\n") else 0) + rows
        lines = newlines + (1 if data and not data.endswith(b"\n") else 0)

        def counted(bound: set[str]) -> Refs:
            if bound != known.bound:  # another import: every name is weighed again
                return kept_refs(language, bare, qualified, bound)
            # the same bindings: each text counts as before, so only what the edit moved
            return _plus(known.record.refs, kept_refs(language, more_bare, more_qualified, bound))

        parts = [piece.part for piece in pieces]
        record = summed(path, language, data, tree, parts, stamp, counted, lines, binds)
    if known is not None:
        _KEPT.remove(known)
    _KEPT.append(_Kept(language, path, data, pieces, bare, qualified, record, bound[-1]))
    del _KEPT[:-_KEEP]
    return record


def _added(counts: Counter[bytes], more: Counter[bytes]) -> Counter[bytes]:
    """A copy of `counts` (all positive) with the signed `more` added, the names now at zero
    or below taken out: only those of `more` can be (no pass over every name)."""
    out = counts.copy()
    out.update(more)
    for name in more:
        if out[name] <= 0:
            del out[name]
    return out


def _plus(refs: Refs, more: Refs) -> Refs:
    """Reference counts `refs` with the (signed) counts `more` added."""
    if not any(uses for _name, uses in more):
        return refs
    counts = dict(refs)
    for name, uses in more:
        counts[name] = counts.get(name, 0) + uses
    return tuple(sorted(item for item in counts.items() if item[1] > 0))


def _kept_pieces(
    known: _Kept, tree: Any, edit: Edit, data: bytes
) -> tuple[list[_Piece], list[Any], list[_Piece], list[_Piece], int] | None:
    """Which top-level nodes the edit cannot have changed: those wholly before or after the
    edited span and every range whose structure changed (`changed_ranges`), whose characters
    keep their nodes. Returns the kept pieces before, the nodes between (to read again), the
    kept pieces after (moved by the bytes and rows the edit added), the pieces those between
    replace, and the rows added; None when the nodes do not line up with the pieces kept (the
    caller reads every node)."""
    lo, hi = edit.start, edit.new_end
    for changed in edit.tree.changed_ranges(tree):
        lo, hi = min(lo, changed.start_byte), max(hi, changed.end_byte)
    delta = edit.new_end - edit.old_end
    pieces = known.pieces
    i = bisect_left(pieces, lo, key=_PIECE_END)  # pieces[:i] end before `lo`
    j = bisect_right(pieces, hi - delta, lo=i, key=_PIECE_START)  # pieces[j:] start after `hi`
    kids = tree.root_node.children
    first = bisect_left(kids, lo, key=_end)  # the first top-level node ending at `lo` or after
    last = bisect_right(kids, hi, lo=first, key=_start)  # and the first starting after `hi`
    if first != i or len(kids) - last != len(pieces) - j:
        return None
    if last < len(kids) and kids[last].start_byte != pieces[j].start + delta:
        return None
    middle = kids[first:last]
    rows = data.count(b"\n", edit.start, edit.new_end) - edit.old.count(
        b"\n", edit.start, edit.old_end
    )
    after = [
        _Piece(p.start + delta, p.end + delta, p.row + rows, p.part.moved(delta, rows))
        for p in pieces[j:]
    ]
    return list(pieces[:i]), middle, after, list(pieces[i:j]), rows


_PIECE_START, _PIECE_END = itemgetter(0), itemgetter(1)


def _end(node: Any) -> int:
    return int(node.end_byte)


def _start(node: Any) -> int:
    return int(node.start_byte)


def _first_three(row: Row) -> tuple[int, str, int]:
    return row[0], row[1], row[2]


def _line(imp: Import) -> int:
    return imp.line
