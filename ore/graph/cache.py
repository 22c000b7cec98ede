"""The on-disk index: one file per root under `$ORE_HOME/cache/graph/`, written atomically.

Format: a magic line, a blake2b checksum of the payload, then the payload in `marshal` form (plain
tuples, strings and numbers: loading it is several times faster than JSON, which is what keeps a
warm query cheap). The checksum is verified before `marshal` sees a byte, so a truncated or
damaged file reads as "no cache" and the caller rebuilds; so do another version and another root.
A write goes through `ore._fs.atomic_write` (temp file in the same folder, fsync, rename), so a
reader sees the old index or the new one, never half of each; a FIFO or device planted at the
path reads as "no cache" and never blocks.

The cache is untrusted input all the same: the checksum says the bytes are those written, not
that whoever wrote them wrote what `write_cache` writes. So the payload is stored by column
(every symbol name of every file in one tuple, every line number in another, ...), and each
column is checked whole in C before any record is built: `"".join` takes only strings, an int
`sum` stays an int only over ints, a set comparison puts every edge between two of the files.
A row of the wrong shape or type, an edge to a missing file, a weight that is not a finite
float, edges out of order: the cache is corrupt, and the caller rebuilds. Row by row in Python
the same checks would cost a warm query a third of its time; by column they take about 10 ms on
the standard library, which columns also load faster than per-row tuples (13 ms, not 30).
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import math
import operator
import os
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain, islice, repeat
from pathlib import Path
from typing import Any

from .._fs import atomic_write, read_regular
from ..paths import ore_home
from .records import Edge, FileIndex, Import, Symbol

__all__ = [
    "MAGIC",
    "CachedIndex",
    "cache_path",
    "read_cache",
    "read_sealed",
    "write_cache",
    "write_sealed",
]

# Bump the number whenever extraction, resolution or weighting changes: old caches then rebuild.
MAGIC = b"ore-graph-index 5\n"
_SUM = 32
#: A larger file is not read (nor written): no real tree comes near it, so it is not ours.
_MAX_BYTES = 1 << 31
_EDGE_KINDS = frozenset({"import", "reference"})
_Columns = tuple[tuple[Any, ...], ...]


@dataclass(frozen=True, slots=True)
class CachedIndex:
    """What a previous run left: the file records, when they were taken, and the derived edges."""

    files: dict[str, FileIndex]
    indexed_ns: int
    edges: tuple[Edge, ...]
    externals: dict[str, tuple[str, ...]]


def cache_path(root: Path) -> Path:
    """The cache file for `root` (an absolute, resolved path)."""
    key = hashlib.sha256(os.fsencode(str(root))).hexdigest()[:24]
    return ore_home() / "cache" / "graph" / f"{key}.idx"


def read_cache(root: Path) -> CachedIndex | None:
    """The cached index of `root`, or None when there is none or it cannot be trusted."""
    payload = read_sealed(cache_path(root), MAGIC)
    if payload is None:
        return None
    try:
        saved_root, indexed_ns, *columns, externals = marshal.loads(payload)
        if saved_root != str(root) or type(indexed_ns) is not int:
            return None
        files, symbols, imports, refs, edges = columns
        _check(files, symbols, imports, refs, edges, externals)
        return CachedIndex(
            _records(files, symbols, imports, refs),
            indexed_ns,
            tuple(map(tuple.__new__, repeat(Edge), zip(*edges, strict=True))),
            externals,
        )
    except (ValueError, TypeError, EOFError, RecursionError):
        return None  # foreign or damaged beyond the checksum's reach: rebuild rather than crash


def write_cache(root: Path, cached: CachedIndex) -> None:
    """Replace the cache of `root` atomically; a failure to write only costs the next run time."""
    records = tuple(cached.files.values())
    files = _by_column(map(_file_row, records), 10)
    payload = marshal.dumps(
        (
            str(root),
            cached.indexed_ns,
            files,
            _by_column(chain.from_iterable(f.symbols for f in records), len(Symbol._fields)),
            _by_column(chain.from_iterable(f.imports for f in records), len(Import._fields)),
            _by_column(chain.from_iterable(f.refs for f in records), 2),
            _by_column(cached.edges, 4),
            {k: v for k, v in cached.externals.items() if v},
        )
    )
    write_sealed(cache_path(root), MAGIC, payload)


def _file_row(f: FileIndex) -> tuple[Any, ...]:
    flags = int(f.parse_error) | (int(f.non_utf8) << 1)
    counts = (len(f.symbols), len(f.imports), len(f.refs))
    return (f.path, f.language, f.size, f.mtime_ns, f.digest, f.lines, flags, *counts)


def _by_column(rows: Iterable[tuple[Any, ...]], width: int) -> _Columns:
    return tuple(map(tuple, zip(*rows, strict=True))) or ((),) * width


def _check(
    files: _Columns,
    symbols: _Columns,
    imports: _Columns,
    refs: _Columns,
    edges: _Columns,
    externals: dict[str, tuple[str, ...]],
) -> None:
    """TypeError or ValueError unless the columns are what `write_cache` writes (see above)."""
    if type(externals) is not dict:
        raise ValueError("externals are not a dict")
    paths, languages, _size, _mtime, digests, _lines, _flags, *counts = _table(files, 10)
    _table(symbols, len(Symbol._fields), counts[0])
    _table(imports, len(Import._fields), counts[1])
    _table(refs, 2, counts[2])
    sources, targets, kinds, weights = _table(edges, 4)
    _text(paths, languages, digests, symbols[0], symbols[1], symbols[4])
    _text(imports[0], imports[4], refs[0])
    _text(chain.from_iterable(imports[1]), chain.from_iterable(imports[5]))
    _text(chain.from_iterable(externals.values()))
    _ints(files[2], files[3], *files[5:], symbols[2], symbols[3], imports[2], imports[3], refs[1])
    known = set(paths)
    pairs = tuple(zip(sources, targets, strict=True))
    if not (
        len(known) == len(paths)
        and min(chain(*counts), default=0) >= 0
        and known.issuperset(sources)
        and known.issuperset(targets)
        and _EDGE_KINDS.issuperset(kinds)
        and set(map(type, weights)) <= {float}
        and math.isfinite(sum(weights))
        and all(map(operator.le, pairs, pairs[1:]))  # in order: queries bisect them
        and known.issuperset(externals)
        and set(map(type, imports[1])) | set(map(type, imports[5])) <= {tuple}
        and set(map(type, externals.values())) <= {tuple}
    ):
        raise ValueError("inconsistent cache rows")


def _table(columns: _Columns, width: int, counts: tuple[int, ...] = ()) -> _Columns:
    """`columns` when it is `width` tuples of one length (the sum of `counts`, if given)."""
    if type(columns) is not tuple or len(columns) != width or set(map(type, columns)) - {tuple}:
        raise ValueError("a table of the wrong shape")
    if len(set(map(len, columns))) != 1 or (counts and len(columns[0]) != sum(counts)):
        raise ValueError("columns of different lengths")
    return columns


def _text(*columns: Iterable[Any]) -> None:
    for column in columns:
        "".join(column)  # TypeError at the first value that is not a str


def _ints(*columns: tuple[Any, ...]) -> None:
    for column in columns:
        if type(sum(column)) is not int:  # TypeError for a str; one float makes a float
            raise ValueError("a number that is not an int")


def _records(
    files: _Columns, symbols: _Columns, imports: _Columns, refs: _Columns
) -> dict[str, FileIndex]:
    """The file records, each taking its share of the symbol, import and reference rows."""
    syms = map(tuple.__new__, repeat(Symbol), zip(*symbols, strict=True))
    imps = map(tuple.__new__, repeat(Import), zip(*imports, strict=True))
    pairs = zip(*refs, strict=True)
    out = {}
    for path, language, size, mtime_ns, digest, lines, flags, ns, ni, nr in zip(
        *files, strict=True
    ):
        out[path] = FileIndex(
            path,
            language,
            size,
            mtime_ns,
            digest,
            lines,
            tuple(islice(syms, ns)),
            tuple(islice(imps, ni)),
            tuple(islice(pairs, nr)),
            bool(flags & 1),
            bool(flags & 2),
        )
    return out


def read_sealed(path: Path, magic: bytes) -> bytes | None:
    """The payload of a file `write_sealed` wrote with `magic`, or None when it is missing, not
    a regular file (a FIFO there never blocks), of another version, or damaged."""
    try:
        blob = read_regular(path, limit=_MAX_BYTES, follow_symlinks=True)
    except OSError:
        return None
    head = len(magic) + _SUM
    if not blob.startswith(magic) or not head <= len(blob) <= _MAX_BYTES:
        return None
    payload = blob[head:]
    if hashlib.blake2b(payload, digest_size=_SUM).digest() != blob[len(magic) : head]:
        return None
    return payload


def write_sealed(path: Path, magic: bytes, payload: bytes) -> None:
    """Replace `path` atomically with `magic`, a checksum and `payload`; a failure to write
    only costs the next run time, so it is not an error."""
    blob = magic + hashlib.blake2b(payload, digest_size=_SUM).digest() + payload
    if len(blob) > _MAX_BYTES:
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, blob)
