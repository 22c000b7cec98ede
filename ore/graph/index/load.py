"""Bring the index of a root up to date: discover, check staleness, re-parse only what changed.

Staleness: a file whose size and mtime match its cached record is fresh (the fast path) unless
its mtime is within `RACY_NS` of the moment the record was taken, when the same-size edit could
hide inside one mtime tick (git's "racily clean" rule); then, as for every other file, the content
hash decides. Deleted files drop out, new files come in, and edges are rebuilt whenever any
record changed, because one new file can change how another file's imports resolve.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from itertools import repeat
from pathlib import Path
from typing import Any

from ...errors import GraphError
from .cache import (
    CachedIndex,
    Head,
    decode_section,
    discard,
    read_head,
    read_section,
    records_of,
    write_cache,
)
from .discover import Candidate, discover
from .edges import build_edges
from .extract import Skipped
from .pool import PARALLEL_MIN, Along, Progress, Work, beside, parse_all
from .records import Edge, FileIndex
from .resolve import resolve_all
from .stored import Records, paused_gc

__all__ = ["PARALLEL_MIN", "RACY_NS", "Index", "Progress", "check_root", "load_index"]

RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class Index:
    """An up-to-date index of one root: records, edges, and what was skipped or re-parsed.

    `files` reads lazily (see `stored.Records`); `edge_columns` are the edges as four sorted
    columns (source, target, kind, weight), and `edges` the same as `Edge` tuples, built on
    first use."""

    root: Path
    files: Records
    edge_columns: tuple[tuple[Any, ...], ...]
    externals: dict[str, tuple[str, ...]]
    skipped: dict[str, int] = field(default_factory=dict)
    parsed: int = 0

    @cached_property
    def edges(self) -> tuple[Edge, ...]:
        """Every edge, sorted."""
        return tuple(map(tuple.__new__, repeat(Edge), zip(*self.edge_columns, strict=True)))


def check_root(root: str | os.PathLike[str]) -> Path:
    """The absolute, resolved root, or GraphError when it is not an existing folder (an empty
    string is not one: `Path("")` would quietly be the current folder)."""
    if isinstance(root, str) and not root.strip():
        raise GraphError("the root is empty; pass --root with a folder")
    path = Path(root).expanduser()
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise GraphError(f"root '{root}' does not exist; pass --root with a folder") from None
    if not resolved.is_dir():
        raise GraphError(f"root '{root}' is not a folder; pass --root with a folder")
    return resolved


def load_index(
    root: str | os.PathLike[str],
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    along: Along | None = None,
) -> Index:
    """The index of `root`, reusing the cache for unchanged files and parsing the rest.

    :param jobs: worker processes for parsing (default: every core); 1 parses in-process.
    :param progress: called with (done, total) while parsing (nothing is printed here); None:
        whoever listens through `ore.graph.progress` (a turn's spinner at a terminal), if any.
    :param along: more work on each file parsed, in the same worker (`pool.Along`).
    """
    if progress is None:
        from ..progress import fallback

        progress = fallback()
    base = check_root(root)
    # The index is hundreds of thousands of small tuples that never form cycles: the cyclic GC
    # would only walk them again and again while they are built (a third of a warm query).
    with paused_gc():
        return _load(base, jobs, progress, along)


def _load(base: Path, jobs: int | None, progress: Progress | None, along: Along | None) -> Index:
    found = discover(str(base))
    head = read_head(base)
    skipped: Counter[str] = Counter(found.skipped)
    if head is not None and _fresh(head, found.files):
        # the warm path: nothing changed, so nothing but the head is read until a query asks
        records = Records(head, partial(read_section, base, head), partial(_recover, base, head))
        return Index(base, records, head.edges, head.externals, dict(sorted(skipped.items())))
    cached = _whole(base, head)
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
    changed = set(old) != {c.path for c in found.files}
    parsed = 0
    results = parse_all(
        str(base), work, jobs, progress, job=None if along is None else beside(along.job)
    )
    if along is not None:  # each file's record, and what `along` made of it
        for record, extra in results:
            if isinstance(record, FileIndex) and extra is not None:
                along.keep(base, record, extra)
        results = [record for record, _extra in results]
    for (path, _lang, _known), result in zip(work, results, strict=True):
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
        edges, externals = tuple(cached.edges), cached.externals
    else:
        resolution = resolve_all(str(base), files)
        edges, externals = build_edges(files, resolution), resolution.externals
    encoded = write_cache(base, CachedIndex(files, started, edges, externals))
    new = encoded.head
    records = Records(
        new, lambda n: decode_section(new, n, encoded.sections[n]), lambda: files, built=files
    )
    index = Index(base, records, new.edges, externals, dict(sorted(skipped.items())), parsed)
    index.__dict__["edges"] = edges  # the tuples are at hand: no need to build them again
    return index


def _fresh(head: Head, found: list[Candidate]) -> bool:
    """Whether the head's files are exactly `found` (both sorted by path), each unchanged by its
    stat and outside the racy window."""
    paths, languages, sizes, mtimes = head.files[:4]
    if len(paths) != len(found):
        return False
    racy_after = head.indexed_ns - RACY_NS
    for cand, path, language, size, mtime in zip(
        found, paths, languages, sizes, mtimes, strict=True
    ):
        if (
            cand.path != path
            or cand.size != size
            or cand.mtime_ns != mtime
            or cand.language != language
            or cand.mtime_ns >= racy_after
        ):
            return False
    return True


def _whole(base: Path, head: Head | None) -> CachedIndex | None:
    """Every record of the cache behind `head` (each section read and checked), or None."""
    if head is None:
        return None
    sections = [read_section(base, head, n) for n in range(len(head.spans))]
    if any(value is None for value in sections):
        return None
    edges = tuple(map(tuple.__new__, repeat(Edge), zip(*head.edges, strict=True)))
    return CachedIndex(records_of(head, sections), head.indexed_ns, edges, head.externals)


def _recover(base: Path, head: Head) -> dict[str, FileIndex]:
    """The records of the files `head` lists, parsed afresh (a section of the cache could not be
    used, so the cache is removed: the next run rebuilds it)."""
    discard(base, head)
    work: list[Work] = [
        (p, lang, None) for p, lang in zip(head.files[0], head.files[1], strict=True)
    ]
    out: dict[str, FileIndex] = {}
    with paused_gc():
        for (path, lang, _known), result in zip(
            work, parse_all(str(base), work, None, None), strict=True
        ):
            empty = FileIndex(path, lang, 0, 0, "", 0, (), (), ())
            out[path] = result if isinstance(result, FileIndex) else empty
    return out
