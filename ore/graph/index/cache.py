"""The on-disk index: one file per root under `$ORE_HOME/cache/graph/`, written atomically.

Format: a magic line, a blake2b checksum of the head, the head's length, the head, then the
sections. The head (a `marshal` payload of plain tuples, strings and numbers) is what every warm
query reads: each file's stat key and counts, the edges, the externals, and the length and
checksum of each section. The sections hold the rest, each read and checked only when a query
needs it: an index of the symbol names (`symbol`), the imports, the reference counts, and the
symbol rows in blocks of `BLOCK` files (a `symbol` answer decodes the few blocks it shows). So a
warm `dependents` on ten thousand files reads a tenth of the file, not all of it.

A damaged or truncated head reads as "no cache" and the caller rebuilds; so do another version
and another root. A section is read later from the same path: it is used only when the file still
carries the same head (a newer write replaced it: `stale`) and the section's own checksum holds.
A write goes through `ore._fs.atomic_write` (temp file in the same folder, fsync, rename), so a
reader sees the old index or the new one, never half of each; a FIFO or device planted at the path
reads as "no cache" and never blocks.

The cache is untrusted input all the same: the checksum says the bytes are those written, not
that whoever wrote them wrote what `write_cache` writes. So the payload is stored by column
(every symbol name of every file in one tuple, every line number in another, ...), and each
column is checked whole in C before any record is built: `"".join` takes only strings, an int
`sum` stays an int only over ints, a set comparison puts every edge between two of the files.
A row of the wrong shape or type, an edge to a missing file, a weight that is not a finite
float, edges out of order: the head is corrupt, and the caller rebuilds; a section that fails
its checks is never used (`stored.Records` parses the files again instead). By column, the
checks take about 10 ms on the standard library.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import math
import operator
import os
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, islice, repeat
from pathlib import Path
from typing import Any

from ..._fs import atomic_write, open_regular
from ...paths import ore_home
from .records import IMPORT_KINDS, RUNS, Edge, FileIndex, Import, Symbol

__all__ = [
    "BLOCK",
    "IMPORTS",
    "MAGIC",
    "NAMES",
    "REFS",
    "SYMBOLS",
    "CachedIndex",
    "Encoded",
    "Head",
    "cache_path",
    "decode_section",
    "discard",
    "edges_key",
    "head_of",
    "name_index",
    "patched_head",
    "read_cache",
    "read_head",
    "read_section",
    "records_of",
    "spliced_edges",
    "spliced_head",
    "write_cache",
]

# Bump the number whenever extraction, resolution, weighting or the layout changes: old caches
# then rebuild.
MAGIC = b"ore-graph-index 12\n"
_SUM = 32
_LEN = 8
#: A larger file is not read (nor written): no real tree comes near it, so it is not ours.
_MAX_BYTES = 1 << 31
_EDGE_KINDS = frozenset({*IMPORT_KINDS, "reference"})
_Columns = tuple[Any, ...]  # columns: tuples (the weights an array of doubles)
#: Columns of the imports section: every field of `Import`.
_IMPORT_WIDTH = len(Import._fields)
#: Sections: the symbol-name index, imports, references, then symbol rows block by block.
NAMES, IMPORTS, REFS, SYMBOLS = 0, 1, 2, 3
#: Files per block of symbol rows.
BLOCK = 64
#: The typecode of the integer arrays of the name index (4 bytes wherever ORE runs).
_INT = "I" if array("I").itemsize >= 4 else "L"


@dataclass(frozen=True, slots=True)
class CachedIndex:
    """What a run leaves: the file records, when they were taken, and the derived edges."""

    files: Mapping[str, FileIndex]
    indexed_ns: int
    edges: Sequence[Edge]
    externals: dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Head:
    """The part of the cache every warm query reads (checked whole), and where the rest lies.

    `files` are ten columns: path, language, size, mtime_ns, digest, lines, flags (parse error,
    non-UTF-8) and the counts of symbols, imports and references; `edges` four: source, target,
    kind, weight (sorted). `spans` are each section's (offset in the file, length, checksum);
    `seal` the head's own checksum, which names this write of the file; `edges_key` a digest of
    the paths and edges (`queries.derived` keeps PageRank and communities by it)."""

    indexed_ns: int
    files: _Columns
    edges: _Columns
    externals: dict[str, tuple[str, ...]]
    seal: bytes
    spans: tuple[tuple[int, int, bytes], ...]
    edges_key: str


@dataclass(frozen=True, slots=True)
class Encoded:
    """A cache as `write_cache` wrote it (or would have): its head and its sections' bytes."""

    head: Head
    sections: tuple[bytes, ...]


def cache_path(root: Path) -> Path:
    """The cache file for `root` (an absolute, resolved path)."""
    key = hashlib.sha256(os.fsencode(str(root))).hexdigest()[:24]
    return ore_home() / "cache" / "graph" / f"{key}.idx"


def _sum(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=_SUM).digest()


# -- writing -------------------------------------------------------------------------------------


def write_cache(root: Path, cached: CachedIndex) -> Encoded:
    """Replace the cache of `root` atomically; a failure to write only costs the next run time.
    Returns what was (or would have been) written, so the caller's index reads the same."""
    records = tuple(cached.files.values())
    sections = [
        marshal.dumps(_names_section(records)),
        marshal.dumps(_by_column(chain.from_iterable(f.imports for f in records), _IMPORT_WIDTH)),
        marshal.dumps(_by_column(chain.from_iterable(f.refs for f in records), 2)),
    ]
    for start in range(0, len(records), BLOCK):
        rows = chain.from_iterable(f.symbols for f in records[start : start + BLOCK])
        sections.append(marshal.dumps(_by_column(rows, len(Symbol._fields))))
    files = _by_column(map(_file_row, records), 10)
    edges = _edge_columns(cached.edges, files[0])
    externals = {k: v for k, v in cached.externals.items() if v}
    table = tuple((len(s), _sum(s)) for s in sections)
    stored = (*edges[:3], edges[3].tobytes())
    key = edges_key(files[0], edges)
    payload = marshal.dumps((str(root), cached.indexed_ns, files, stored, externals, table, key))
    seal = _sum(payload)
    start = len(MAGIC) + _SUM + _LEN + len(payload)
    offsets = accumulate((len(s) for s in sections), initial=start)
    spans = tuple((at, n, check) for at, (n, check) in zip(offsets, table, strict=False))
    blob = b"".join((MAGIC, seal, len(payload).to_bytes(_LEN, "little"), payload, *sections))
    if len(blob) <= _MAX_BYTES:
        with contextlib.suppress(OSError):
            path = cache_path(root)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, blob)
    head = Head(cached.indexed_ns, files, edges, externals, seal, spans, key)
    return Encoded(head, tuple(sections))


def head_of(cached: CachedIndex) -> Head:
    """The head `write_cache` writes for `cached`, without the sections (no seal, no spans):
    what a process keeping the records in memory answers from (`ore.graph.serve`) while the
    cache itself is written behind it."""
    records = tuple(cached.files.values())
    files = _by_column(map(_file_row, records), 10)
    edges = _edge_columns(cached.edges, files[0])
    externals = {k: v for k, v in cached.externals.items() if v}
    return Head(cached.indexed_ns, files, edges, externals, b"", (), edges_key(files[0], edges))


def patched_head(head: Head, records: Mapping[str, FileIndex], indexed_ns: int) -> Head:
    """`head` with the rows of `records` (files it lists) replaced, taken at `indexed_ns`: the
    same files and edges, so the same edges key (no seal, no spans, as `head_of`). Each
    column is joined from the slices around the rows replaced (in C): a one-file edit copies
    ten columns once, never row by row; the paths column is the head's own."""
    paths = head.files[0]
    where: Any = paths.index  # a search in C per file, for the few files of an edit
    if len(records) > 8:
        where = {p: n for n, p in enumerate(paths) if p in records}.__getitem__
    rows = sorted((where(path), _file_row(record)) for path, record in records.items())
    files = [paths]
    for n, column in enumerate(head.files[1:], 1):
        pieces: list[tuple[Any, ...]] = []
        at = 0
        for row, values in rows:
            pieces += (tuple(column[at:row]), (values[n],))
            at = row + 1
        pieces.append(tuple(column[at:]))
        files.append(_joined(pieces))
    return Head(indexed_ns, tuple(files), head.edges, head.externals, b"", (), head.edges_key)


def spliced_head(
    head: Head,
    records: Mapping[str, FileIndex],
    indexed_ns: int,
    runs: Sequence[tuple[int, int, Sequence[Edge]]],
) -> Head:
    """`patched_head` of `records`, whose edges are the head's with each run `(start, end,
    edges)` (in order, apart) put in place of its edges `start:end`: a one-file edit joins
    slices of the columns (in C), never builds them from every edge. The edges key is left
    empty, to be computed by whoever needs it (`edges_key`): PageRank, not every answer."""
    files = patched_head(head, records, indexed_ns).files
    return Head(indexed_ns, files, spliced_edges(head.edges, runs), head.externals, b"", (), "")


def spliced_edges(
    edges: _Columns, runs: Sequence[tuple[int, int, Sequence[Edge]]]
) -> tuple[Any, ...]:
    """The edge columns `edges` with each run `(start, end, edges)` (in order, apart) put in
    place of rows `start:end`, joined from slices in C (`spliced_head`'s edges)."""
    weights = edges[3] if isinstance(edges[3], array) else array("d", edges[3])
    columns: list[list[tuple[Any, ...]]] = [[], [], []]
    joined = array("d")
    at = 0
    for start, end, run in runs:
        new = _by_column(run, 4)
        for n, column in enumerate(columns):
            column += (tuple(edges[n][at:start]), new[n])
        joined += weights[at:start]
        joined.extend(new[3])
        at = end
    for n, column in enumerate(columns):
        column.append(tuple(edges[n][at:]))
    joined += weights[at:]
    return (*map(_joined, columns), joined)


def _joined(pieces: Sequence[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The tuples of `pieces` end to end: by `+` for a few (each a copy in C), else in one go."""
    if len(pieces) > 8:
        return tuple(chain.from_iterable(pieces))
    out: tuple[Any, ...] = ()
    for piece in pieces:
        out += piece
    return out


def edges_key(paths: Sequence[str], edges: _Columns) -> str:
    """A digest of the files and edges (what whole-graph results depend on), joined in C."""
    digest = hashlib.blake2b(digest_size=16)
    for column in (paths, *edges[:3]):
        digest.update("\0".join(column).encode("utf-8", "surrogatepass") + b"\1")
    digest.update(array("d", edges[3]).tobytes())
    return digest.hexdigest()


def _names_section(records: Sequence[FileIndex]) -> tuple[Any, ...]:
    """Every distinct symbol name, shortest first, as one text with a newline before and after
    each (so `find` in C looks names up; its `casefold()` is searched the same way), where each
    begins, and which symbol rows (numbered across all files, in order) carry each name."""
    names = [s.name for f in records for s in f.symbols]
    words = sorted(set(names))
    words.sort(key=len)  # stable: by length, then by name (every key computed in C)
    ranks = list(map(dict(zip(words, range(len(words)), strict=True)).__getitem__, names))
    counts = Counter(ranks)
    return (
        "\n" + "".join(w + "\n" for w in words),
        array(_INT, accumulate((len(w) + 1 for w in words), initial=1)).tobytes(),
        array(_INT, accumulate(map(counts.__getitem__, range(len(words))), initial=0)).tobytes(),
        array(_INT, sorted(range(len(ranks)), key=ranks.__getitem__)).tobytes(),  # stable
    )


def name_index(records: Sequence[FileIndex]) -> tuple[Any, ...]:
    """The name index of `records` (as `decode_section` returns it), built in memory."""
    return _check_names(_names_section(records), sum(len(f.symbols) for f in records))


def _edge_columns(edges: Sequence[Edge], paths: tuple[str, ...]) -> _Columns:
    """Source, target, kind, weight (an array of doubles). Every path and kind is one object
    (the files' own path, one string per kind), so `marshal` writes each again as a 5-byte
    reference and reads it back without building a string: the head loads in half the time."""
    sources, targets, kinds, weights = _by_column(edges, 4)
    same = {p: p for p in chain(paths, _EDGE_KINDS)}
    return (
        tuple(map(same.get, sources, sources)),
        tuple(map(same.get, targets, targets)),
        tuple(map(same.get, kinds, kinds)),
        array("d", weights),
    )


def _file_row(f: FileIndex) -> tuple[Any, ...]:
    flags = int(f.parse_error) | (int(f.non_utf8) << 1)
    counts = (len(f.symbols), len(f.imports), len(f.refs))
    return (f.path, f.language, f.size, f.mtime_ns, f.digest, f.lines, flags, *counts)


def _by_column(rows: Iterable[tuple[Any, ...]], width: int) -> _Columns:
    return tuple(map(tuple, zip(*rows, strict=True))) or ((),) * width


# -- reading -------------------------------------------------------------------------------------


def read_head(root: Path) -> Head | None:
    """The head of the cache of `root`, checked whole, or None when there is none or it cannot
    be trusted (damaged, another version or root, rows of the wrong shape)."""
    try:
        fd = open_regular(cache_path(root), follow_symlinks=True)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        lead = _read_at(fd, 0, len(MAGIC) + _SUM + _LEN)
        if not lead.startswith(MAGIC) or len(lead) != len(MAGIC) + _SUM + _LEN:
            return None
        seal = lead[len(MAGIC) : len(MAGIC) + _SUM]
        length = int.from_bytes(lead[-_LEN:], "little")
        if not len(lead) + length <= size <= _MAX_BYTES:
            return None
        payload = _read_at(fd, len(lead), length)
    except OSError:
        return None
    finally:
        os.close(fd)
    if _sum(payload) != seal:
        return None
    try:
        saved_root, indexed_ns, files, edges, externals, table, key = marshal.loads(payload)
        if saved_root != str(root) or type(indexed_ns) is not int or type(edges) is not tuple:
            return None
        if type(key) is not str:
            return None
        edges = (*edges[:3], array("d", edges[3])) if len(edges) == 4 else edges
        spans = _spans(table, len(lead) + length, size)
        _check_head(files, edges, externals)
    except (ValueError, TypeError, EOFError, RecursionError):
        return None  # foreign or damaged beyond the checksum's reach: rebuild rather than crash
    if len(spans) != SYMBOLS + -(-len(files[0]) // BLOCK):
        return None
    return Head(indexed_ns, files, edges, externals, seal, spans, key)


def _spans(table: Any, start: int, size: int) -> tuple[tuple[int, int, bytes], ...]:
    if type(table) is not tuple or set(map(type, table)) - {tuple}:
        raise ValueError("a section table of the wrong shape")
    spans = []
    for length, check in table:
        if type(length) is not int or type(check) is not bytes or length < 0:
            raise ValueError("a section of the wrong shape")
        spans.append((start, length, check))
        start += length
    if start != size:
        raise ValueError("sections that do not fill the file")
    return tuple(spans)


def _read_at(fd: int, offset: int, length: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    chunks = []
    while length > 0 and (chunk := os.read(fd, min(length, 1 << 24))):
        chunks.append(chunk)
        length -= len(chunk)
    return b"".join(chunks)


def read_section(root: Path, head: Head, n: int) -> Any | None:
    """Section `n` of the cache `head` was read from, checked, or None: the file was replaced
    since (another head), is gone, or the section is damaged or not what `write_cache` writes."""
    at, length, check = head.spans[n]
    try:
        fd = open_regular(cache_path(root), follow_symlinks=True)
    except OSError:
        return None
    try:
        lead = _read_at(fd, 0, len(MAGIC) + _SUM)
        if lead != MAGIC + head.seal:
            return None
        data = _read_at(fd, at, length)
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != length or _sum(data) != check:
        return None
    return decode_section(head, n, data)


def decode_section(head: Head, n: int, data: bytes) -> Any | None:
    """Section `n` (its bytes) decoded and checked against `head`, or None."""
    counts = head.files[{IMPORTS: 8, REFS: 9}.get(n, 7)]  # symbols, imports, refs per file
    try:
        value = marshal.loads(data)
        if n == NAMES:
            return _check_names(value, sum(counts))
        if n == IMPORTS:
            _check_imports(value, counts)
        elif n == REFS:
            _table(value, 2, counts)
            _text(value[0])
            _ints(value[1])
        else:
            first = (n - SYMBOLS) * BLOCK
            _table(value, len(Symbol._fields), counts[first : first + BLOCK])
            _text(value[0], value[1], value[4])
            _ints(value[2], value[3], value[5])
        return value
    except (ValueError, TypeError, EOFError, RecursionError, OverflowError):
        return None


def discard(root: Path, head: Head) -> None:
    """Remove the cache of `root` if it is still the one `head` was read from (a section of it
    failed its checks): the next run rebuilds it."""
    with contextlib.suppress(OSError):
        fd = open_regular(cache_path(root), follow_symlinks=True)
        try:
            same = _read_at(fd, 0, len(MAGIC) + _SUM) == MAGIC + head.seal
        finally:
            os.close(fd)
        if same:
            cache_path(root).unlink()


def read_cache(root: Path) -> CachedIndex | None:
    """The whole cached index of `root` (every section read and checked), or None."""
    head = read_head(root)
    if head is None:
        return None
    sections = []
    for n in range(len(head.spans)):
        value = read_section(root, head, n)
        if value is None:
            return None
        sections.append(value)
    edges = tuple(map(tuple.__new__, repeat(Edge), zip(*head.edges, strict=True)))
    return CachedIndex(records_of(head, sections), head.indexed_ns, edges, head.externals)


def records_of(head: Head, sections: Sequence[Any]) -> dict[str, FileIndex]:
    """The file records of `head`, from its decoded sections (all of them)."""
    blocks = sections[SYMBOLS:]
    symbols = tuple(map(tuple, map(chain.from_iterable, zip(*blocks, strict=True))))
    symbols = symbols or ((),) * len(Symbol._fields)
    return _records(head.files, symbols, sections[IMPORTS], sections[REFS])


# -- checks --------------------------------------------------------------------------------------


def _check_head(files: _Columns, edges: _Columns, externals: dict[str, tuple[str, ...]]) -> None:
    """TypeError or ValueError unless the head is what `write_cache` writes (see above)."""
    if type(externals) is not dict:
        raise ValueError("externals are not a dict")
    paths, languages, _size, _mtime, digests, _lines, _flags, *counts = _table(files, 10)
    sources, targets, kinds, weights = _table(edges, 4, weights=True)
    _text(paths, languages, digests)
    _text(chain.from_iterable(externals.values()))
    _ints(files[2], files[3], *files[5:])
    known = set(paths)
    pairs = zip(sources, targets, strict=True)
    following = zip(sources[1:], targets[1:], strict=True)
    if not (
        len(known) == len(paths)
        and all(map(operator.lt, paths, paths[1:]))  # sorted: the symbol rows follow this order
        and min(chain(*counts), default=0) >= 0
        and known.issuperset(sources)
        and known.issuperset(targets)
        and _EDGE_KINDS.issuperset(kinds)
        and math.isfinite(sum(weights))  # NaN and infinities stay so in a sum
        and all(map(operator.le, pairs, following))  # in order: queries bisect them
        and known.issuperset(externals)
        and set(map(type, externals.values())) <= {tuple}
    ):
        raise ValueError("inconsistent cache rows")


def _check_imports(imports: _Columns, counts: tuple[int, ...]) -> None:
    _table(imports, _IMPORT_WIDTH, counts)
    _text(imports[0], imports[4])
    if (set(map(type, imports[1])) | set(map(type, imports[5]))) - {tuple}:
        raise ValueError("import names that are not tuples")
    _text(chain.from_iterable(imports[1]), chain.from_iterable(imports[5]))
    _ints(imports[2], imports[3])
    _text(imports[6])
    if set(imports[6]) - RUNS.keys():
        raise ValueError("an import that runs at no time `records.RUNS` knows")


def _check_names(value: Any, rows: int) -> tuple[Any, ...]:
    """The name index with its integer arrays decoded, or ValueError/TypeError. Only shapes are
    checked here (a bad offset slices wrong, never out of bounds); `queries.symbols.find_symbols`
    checks each row number it uses."""
    words, *arrays = value
    if type(words) is not str or len(arrays) != 3:
        raise ValueError("a name index of the wrong shape")
    starts, first, order = (array(_INT, a) for a in arrays)  # TypeError: not bytes
    if not (len(starts) == len(first) >= 1 and len(order) == rows):
        raise ValueError("an inconsistent name index")
    return words, starts, first, order


def _table(
    columns: _Columns, width: int, counts: Sequence[int] | None = None, *, weights: bool = False
) -> _Columns:
    """`columns` when it is `width` tuples of one length (the sum of `counts`, if given); with
    `weights`, the last column is an array of doubles."""
    kinds = set(map(type, columns[:-1] if weights else columns))
    if type(columns) is not tuple or len(columns) != width or kinds - {tuple}:
        raise ValueError("a table of the wrong shape")
    if weights and type(columns[-1]) is not array:
        raise ValueError("weights that are not doubles")
    if len(set(map(len, columns))) != 1 or (counts is not None and len(columns[0]) != sum(counts)):
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
