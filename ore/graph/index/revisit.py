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

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .binding import kept_refs
from .languages import Edit
from .records import FileIndex, Import, Symbol

__all__ = ["Part", "Stamp", "revisited", "summed"]

Row = tuple[int, str, int, Symbol]  # (line, name, start byte, symbol): the order of symbols


class Part(NamedTuple):
    """What the captures of a whole tree, or of one top-level node, add to a record."""

    symbols: tuple[Row, ...]  # sorted
    imports: tuple[Import, ...]  # in document order
    directives: tuple[Import, ...] | None  # None: no top-level comment captured
    bare: Counter[bytes]  # used names by their text (the tails of qualified types left out)
    qualified: Counter[bytes]

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
        return Part(
            symbols,
            tuple(imp._replace(line=imp.line + rows) for imp in self.imports),
            None
            if directives is None
            else tuple(i._replace(line=i.line + rows) for i in directives),
            self.bare,
            self.qualified,
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
    """One file's last record and the pieces it was summed from."""

    language: str
    path: str
    data: bytes
    pieces: tuple[_Piece, ...]
    bare: Counter[bytes]  # the pieces' counts summed
    qualified: Counter[bytes]
    record: FileIndex


#: The pieces of the files extracted through `revisited` lately (newest last), one per file.
_KEPT: list[_Kept] = []
_KEEP = 8


def summed(
    path: str,
    language: str,
    data: bytes,
    tree: Any,
    parts: Sequence[Part],
    bare: Counter[bytes],
    qualified: Counter[bytes],
    stamp: Stamp,
) -> FileIndex:
    """The record of a file from the parts of its tree in document order (`bare` and
    `qualified`: their counts summed): the one step that reads the whole file's parts, which
    used names count (those its imports bind)."""
    if len(parts) == 1:
        rows = list(parts[0].symbols)
    else:
        rows = [row for part in parts for row in part.symbols]
        rows.sort(key=_first_three)  # by line and name; ties (minified code) by position
    imports = [imp for part in parts for imp in part.imports]
    directives = [part.directives for part in parts if part.directives is not None]
    if directives:
        imports += [imp for found in directives for imp in found]
        imports.sort(key=_line)
    bound = {n.split(".", 1)[0] for imp in imports if imp.kind != "export" for n in imp.binds}
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return FileIndex(
        path=path,
        language=language,
        size=stamp.size,
        mtime_ns=stamp.mtime_ns,
        digest=stamp.digest,
        lines=lines,
        symbols=tuple([row[3] for row in rows]),
        imports=tuple(imports),
        refs=kept_refs(language, bare, qualified, bound),
        parse_error=tree.root_node.has_error,
        non_utf8=stamp.non_utf8,
    )


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
        return summed(
            path,
            language,
            data,
            tree,
            [p.part for p in known.pieces],
            known.bare,
            known.qualified,
            stamp,
        )
    kids = tree.root_node.children
    if known is not None and known.data == edit.old:
        found, dirty, reused = _kept_pieces(known, kids, edit, tree)
        fresh = read([kids[i] for i in dirty])
        for i, part in zip(dirty, fresh, strict=True):
            kid = kids[i]
            found[i] = _Piece(kid.start_byte, kid.end_byte, kid.start_point[0], part)
        bare, qualified = known.bare.copy(), known.qualified.copy()
        for piece in known.pieces:
            if piece.start not in reused:  # a node read again, or gone
                bare.subtract(piece.part.bare)
                qualified.subtract(piece.part.qualified)
        for part in fresh:
            bare.update(part.bare)
            qualified.update(part.qualified)
        bare, qualified = +bare, +qualified  # the zeros out
        pieces = tuple(found)
    else:
        parts = read(kids)
        pieces = tuple(
            _Piece(kid.start_byte, kid.end_byte, kid.start_point[0], part)
            for kid, part in zip(kids, parts, strict=True)
        )
        bare, qualified = Counter(), Counter()
        for part in parts:
            bare.update(part.bare)
            qualified.update(part.qualified)
    record = summed(path, language, data, tree, [p.part for p in pieces], bare, qualified, stamp)
    if known is not None:
        _KEPT.remove(known)
    _KEPT.append(_Kept(language, path, data, pieces, bare, qualified, record))
    del _KEPT[:-_KEEP]
    return record


def _kept_pieces(
    known: _Kept, kids: list[Any], edit: Edit, tree: Any
) -> tuple[list[Any], list[int], set[int]]:
    """The kept piece of each top-level node the edit cannot have changed (moved where it
    now is), None for the others, the others' positions, and where the kept pieces started
    before the edit. A node is kept when it lies wholly before or after the edited span and
    outside every range whose structure changed, and a piece of its length stood where it
    was."""
    spans = [(edit.start, edit.new_end)]
    spans += [(r.start_byte, r.end_byte) for r in edit.tree.changed_ranges(tree)]
    delta = edit.new_end - edit.old_end
    by_start = {piece.start: piece for piece in known.pieces}
    found: list[Any] = []
    dirty: list[int] = []
    reused: set[int] = set()
    for i, kid in enumerate(kids):
        start, end = kid.start_byte, kid.end_byte
        piece = None
        if all(end < a or start > b for a, b in spans):
            before = end < edit.start
            piece = by_start.get(start if before else start - delta)
            if piece is not None and piece.end - piece.start == end - start:
                reused.add(piece.start)
                if not before:
                    rows = kid.start_point[0] - piece.row
                    piece = _Piece(start, end, piece.row + rows, piece.part.moved(delta, rows))
            else:
                piece = None
        if piece is None:
            dirty.append(i)
        found.append(piece)
    return found, dirty, reused


def _first_three(row: Row) -> tuple[int, str, int]:
    return row[0], row[1], row[2]


def _line(imp: Import) -> int:
    return imp.line
