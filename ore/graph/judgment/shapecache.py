"""File shapes (code lines and function shapes) kept on disk beside the index.

Lexing and shaping every file of a large tree costs seconds, so the first judgment query writes
`<index name>.shapes` next to the index (same folder, same atomic write and checksum rules): one
row per file, keyed by the content hash the index holds. A later query reuses every row whose
hash still matches and recomputes the rest; a damaged or foreign file reads as empty. The index
itself (and so a cold `ore graph` query) never pays for shapes nobody asked for. Missing shapes
are computed on every core by the index's own worker pool (`index.pool.parse_all`); a query that
reads every file's lean shape (clone detection) asks the index to compute them as it parses
(`ALONG`, `open_graph(shapes=True)`), from the tree it just made: each file parsed once.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..index.cache import cache_path
from ..index.extract import MAX_BYTES
from ..index.pool import Along, Job, Work, parse_all
from ..index.records import FileIndex
from ..index.sealed import read_sealed, write_sealed
from ..index.source import read_source
from .shapes import FileShape, make_shape

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["ALONG", "DEFERRED", "SHAPES_MAGIC", "held_writes", "load_shapes"]

# Bump whenever lexing or shaping changes: old rows are then recomputed.
SHAPES_MAGIC = b"ore-graph-shapes 16\n"
_MEMO: dict[Path, dict[str, tuple[str, FileShape]]] = {}
#: Per root, who writes the shapes file instead of `load_shapes` itself: a long-lived process
#: hands the write to a thread of its own, so a query after an edit does not wait for the disk.
DEFERRED: dict[Path, Callable[[Callable[[], None]], None]] = {}
#: The roots whose shapes in memory hold rows the shapes file does not (made by `ALONG`).
_UNSAVED: set[Path] = set()


@contextmanager
def held_writes(root: Path) -> Iterator[list[Callable[[], None]]]:
    """The writes of the shapes file `load_shapes` makes inside, held in the list yielded for
    the caller to run when it suits it (clone pairing: after the exact pairing, while the
    child still pairs the renamed runs),
    unless a long-lived process's writer takes them already (the list then stays empty)."""
    held: list[Callable[[], None]] = []
    if root in DEFERRED:
        yield held
        return
    DEFERRED[root] = held.append
    try:
        yield held
    finally:
        DEFERRED.pop(root, None)


def load_shapes(g: GraphView, paths: Sequence[str], *, lean: bool = False) -> dict[str, FileShape]:
    """The shapes of indexed files: from memory, then the disk cache, then the files. `lean`:
    shapes without facts and profiles will do (clone detection); a full one serves either."""
    known = _MEMO.get(g.root)
    if known is None:
        known = _MEMO[g.root] = _read(g.root)
    out: dict[str, FileShape] = {}
    work: list[Work] = []
    copies: dict[str, list[str]] = {}  # path shaped -> other paths of the same content
    by_content: dict[tuple[str, str], FileShape] | None = None
    first: dict[tuple[str, str], str] = {}
    for path in paths:
        record = g.index.files[path]
        hit = known.get(path)
        if hit is not None and hit[0] == record.digest and (lean or hit[1].full):
            out[path] = hit[1]
            continue
        if by_content is None:  # a copied, moved or renamed file: its content is shaped once
            by_content = {(d, sh.language): sh for d, sh in known.values() if lean or sh.full}
        key = (record.digest, record.language)
        same = by_content.get(key)
        if same is not None:
            out[path] = replace(same, path=path)
            known[path] = (record.digest, out[path])
        elif key in first:
            copies[first[key]].append(path)
        else:
            first[key] = path
            copies[path] = []
            work.append((path, record.language, _LEAN if lean else None))
    if work:  # computed on every core, as the index is parsed
        work.sort(key=lambda item: -g.index.files[item[0]].size)
        for (path, _lang, _known), shape in zip(
            work, parse_all(str(g.root), work, None, _quiet, job=_SHAPES), strict=True
        ):
            if shape is not None:
                for each in (path, *copies[path]):
                    out[each] = shape if each == path else replace(shape, path=each)
                    known[each] = (g.index.files[each].digest, out[each])
    if work or by_content is not None or g.root in _UNSAVED:
        _UNSAVED.discard(g.root)
        out = {path: out[path] for path in paths if path in out}
        for gone in set(known) - set(g.index.files):
            del known[gone]
        rows = dict(known)
        write = partial(_write, g.root, rows)
        if DEFERRED.get(g.root) is None:
            write()
        else:  # a long-lived process writes behind its answer (`ore.graph.serve`)
            DEFERRED[g.root](write)
    return out


#: The pool's per-file `known` argument carries whether a lean shape will do.
_LEAN = "lean"


def _shape_task(root: str, path: str, language: str, known: str | None) -> FileShape | None:
    data = read_source(root, path, limit=MAX_BYTES)
    if data is None or len(data) > MAX_BYTES:
        return None
    return make_shape(path, language, data, lean=known == _LEAN)


def _lean_task(root: str, path: str, language: str, _known: str | None) -> FileShape | None:
    """A lean shape of a file the index has just parsed (its tree is reused)."""
    return _shape_task(root, path, language, _LEAN)


def _keep(root: Path, record: FileIndex, shape: FileShape) -> None:
    """A shape made beside the index (`ALONG`), kept in memory by the record's content hash;
    the shapes file is written by the `load_shapes` that follows."""
    known = _MEMO.get(root)
    if known is None:
        known = _MEMO[root] = _read(root)
    known[record.path] = (record.digest, shape)
    _UNSAVED.add(root)


def _encode(shape: FileShape | None) -> tuple[str, tuple[object, ...]] | None:
    return None if shape is None else (shape.path, shape.to_row())


def _decode(row: tuple[str, tuple[Any, ...]] | None) -> FileShape | None:
    return None if row is None else FileShape.from_row(*row)


def _quiet(_done: int, _total: int) -> None:
    """Shapes are computed without a progress line."""


_SHAPES = Job(_shape_task, _encode, _decode)
#: Lean shapes computed by the index's workers as they parse (`index.pool.Along`).
ALONG = Along(Job(_lean_task, _encode, _decode), _keep)


def _file(root: Path) -> Path:
    return cache_path(root).with_suffix(".shapes")


def _read(root: Path) -> dict[str, tuple[str, FileShape]]:
    payload = read_sealed(_file(root), SHAPES_MAGIC)
    if payload is None:
        return {}
    try:
        saved_root, rows = marshal.loads(payload)
        if saved_root != str(root):
            return {}
        return {
            path: (digest, FileShape.from_row(path, row)) for path, (digest, row) in rows.items()
        }
    except (ValueError, TypeError, EOFError, KeyError):
        return {}


def _write(root: Path, known: dict[str, tuple[str, FileShape]]) -> None:
    rows: dict[str, Any] = {
        path: (digest, shape.to_row()) for path, (digest, shape) in known.items()
    }
    write_sealed(_file(root), SHAPES_MAGIC, marshal.dumps((str(root), rows)))
