"""The on-disk index: one file per root under `$ORE_HOME/cache/graph/`, written atomically.

Format: a magic line, a blake2b checksum of the payload, then the payload in `marshal` form (plain
tuples, strings and numbers: loading it is several times faster than JSON, which is what keeps a
warm query cheap). The checksum is verified before `marshal` sees a byte, so a truncated or
damaged file reads as "no cache" and the caller rebuilds; so do another version and another root.
A write goes through `ore._fs.atomic_write` (temp file in the same folder, fsync, rename), so a
reader sees the old index or the new one, never half of each; a FIFO or device planted at the
path reads as "no cache" and never blocks.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

from .._fs import atomic_write, read_regular
from ..paths import ore_home
from .records import Edge, FileIndex

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
MAGIC = b"ore-graph-index 4\n"
_SUM = 32
#: A larger file is not read (nor written): no real tree comes near it, so it is not ours.
_MAX_BYTES = 1 << 31


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
    try:
        blob = read_regular(cache_path(root), limit=_MAX_BYTES, follow_symlinks=True)
    except OSError:
        return None
    head = len(MAGIC) + _SUM
    if not blob.startswith(MAGIC) or not head <= len(blob) <= _MAX_BYTES:
        return None
    payload = blob[head:]
    if hashlib.blake2b(payload, digest_size=_SUM).digest() != blob[len(MAGIC) : head]:
        return None
    try:
        saved_root, indexed_ns, rows, edge_rows, externals = marshal.loads(payload)
        if saved_root != str(root):
            return None
        files = {}
        for row in rows:
            record = FileIndex.from_row(row)
            files[record.path] = record
        edges = tuple(map(tuple.__new__, repeat(Edge), edge_rows))
        return CachedIndex(files, int(indexed_ns), edges, dict(externals))
    except (ValueError, TypeError, EOFError, KeyError):
        return None  # foreign or damaged beyond the checksum's reach: rebuild rather than crash


def write_cache(root: Path, cached: CachedIndex) -> None:
    """Replace the cache of `root` atomically; a failure to write only costs the next run time."""
    payload = marshal.dumps(
        (
            str(root),
            cached.indexed_ns,
            tuple(f.to_row() for f in cached.files.values()),
            tuple(map(tuple, cached.edges)),
            {k: v for k, v in cached.externals.items() if v},
        )
    )
    blob = MAGIC + hashlib.blake2b(payload, digest_size=_SUM).digest() + payload
    if len(blob) > _MAX_BYTES:
        return
    target = cache_path(root)
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, blob)


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
