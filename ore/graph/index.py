"""Bring the index of a root up to date: discover, check staleness, re-parse only what changed.

Staleness: a file whose size and mtime match its cached record is fresh (the fast path) unless
its mtime is within `RACY_NS` of the moment the record was taken, when the same-size edit could
hide inside one mtime tick (git's "racily clean" rule); then, as for every other file, the content
hash decides. Deleted files drop out, new files come in, and edges are rebuilt whenever any
record changed, because one new file can change how another file's imports resolve.
"""

from __future__ import annotations

import gc
import os
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import GraphError
from .cache import CachedIndex, read_cache, write_cache
from .discover import Candidate, discover
from .edges import build_edges
from .extract import Skipped
from .pool import PARALLEL_MIN, Progress, Work, parse_all
from .records import Edge, FileIndex
from .resolve import resolve_all

__all__ = ["PARALLEL_MIN", "RACY_NS", "Index", "Progress", "check_root", "load_index"]

RACY_NS = 2_000_000_000


@dataclass(frozen=True, slots=True)
class Index:
    """An up-to-date index of one root: records, edges, and what was skipped or re-parsed."""

    root: Path
    files: dict[str, FileIndex]
    edges: tuple[Edge, ...]
    externals: dict[str, tuple[str, ...]]
    skipped: dict[str, int] = field(default_factory=dict)
    parsed: int = 0


def check_root(root: str | os.PathLike[str]) -> Path:
    """The absolute, resolved root, or GraphError when it is not an existing folder."""
    path = Path(root).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise GraphError(f"root '{root}' does not exist; pass --root with a folder") from None
    if not resolved.is_dir():
        raise GraphError(f"root '{root}' is not a folder; pass --root with a folder")
    return resolved


def load_index(
    root: str | os.PathLike[str], *, jobs: int | None = None, progress: Progress | None = None
) -> Index:
    """The index of `root`, reusing the cache for unchanged files and parsing the rest.

    :param jobs: worker processes for parsing (default: every core); 1 parses in-process.
    :param progress: called with (done, total) while parsing (nothing is printed here).
    """
    base = check_root(root)
    # The index is hundreds of thousands of small tuples that never form cycles: the cyclic GC
    # would only walk them again and again while they are built (a third of a warm query).
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load(base, jobs, progress)
    finally:
        if enabled:
            gc.enable()


def _load(base: Path, jobs: int | None, progress: Progress | None) -> Index:
    found = discover(str(base))
    cached = read_cache(base)
    old = cached.files if cached else {}
    racy_after = (cached.indexed_ns if cached else 0) - RACY_NS
    files: dict[str, FileIndex] = {}
    work: list[Work] = []
    moved: dict[str, Candidate] = {}
    for cand in found.files:
        prev = old.get(cand.path)
        if (
            prev is not None
            and prev.size == cand.size
            and prev.mtime_ns == cand.mtime_ns
            and prev.language == cand.language
            and cand.mtime_ns < racy_after
        ):
            files[cand.path] = prev
        else:
            usable = prev is not None and prev.language == cand.language
            work.append((cand.path, cand.language, prev.digest if usable and prev else None))
            moved[cand.path] = cand
    # largest first, in small chunks: no worker is left alone with one huge file at the end
    work.sort(key=lambda item: -moved[item[0]].size)
    started = time.time_ns()
    skipped: Counter[str] = Counter(found.skipped)
    changed = set(old) != {c.path for c in found.files}
    parsed = 0
    for (path, _lang, _known), result in zip(
        work, parse_all(str(base), work, jobs, progress), strict=True
    ):
        if isinstance(result, Skipped):
            skipped[str(result)] += 1
            changed = changed or path in old
        elif isinstance(result, FileIndex):
            files[path] = result
            parsed += 1
            changed = True
        else:  # same content, new stat: keep the record, refresh the fast-path key
            cand = moved[path]
            files[path] = replace(old[path], size=cand.size, mtime_ns=cand.mtime_ns)
    files = dict(sorted(files.items()))
    if cached is not None and not changed:
        edges, externals = cached.edges, cached.externals
    else:
        resolution = resolve_all(str(base), files)
        edges, externals = build_edges(files, resolution), resolution.externals
    if changed or work or cached is None:
        write_cache(base, CachedIndex(files, started, edges, externals))
    return Index(base, files, edges, externals, dict(sorted(skipped.items())), parsed)
