"""Text queries: lines that contain a string, and the code around given lines.

They read the files themselves, as they are now, never a copy: through `ore._fs.open_below`, so
never a byte from outside the root (a folder swapped for a symlink since it was indexed is
refused) and never a wait on a FIFO, and at most `MAX_BYTES`, as indexing reads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ..._fs import open_below, os_error_words, read_fd
from ...errors import GraphError
from ..index.extract import MAX_BYTES
from ..index.source import text_lines
from ..results import Chunk, Context, SearchHit

__all__ = ["context", "read_lines", "search"]

_MAX_LINE = 200


def read_lines(root: Path, path: str) -> list[str]:
    """The lines of the indexed file `path` under `root`, as it is now, numbered as the index
    numbers them (`text_lines`; GraphError when it cannot be read, or has grown past
    `MAX_BYTES`)."""
    try:
        fd = open_below(root, path)
        try:
            data = read_fd(fd, limit=MAX_BYTES)
        finally:
            os.close(fd)
    except (OSError, ValueError) as exc:
        raise GraphError(f"cannot read '{path}': {os_error_words(exc)}") from exc
    if len(data) > MAX_BYTES:
        raise GraphError(f"cannot read '{path}': it has grown past {MAX_BYTES:,} bytes")
    return text_lines(data.decode("utf-8", "replace"))


def search(root: Path, files: Sequence[str], query: str, cap: int | None) -> list[SearchHit]:
    """Lines of `files` containing `query` (case-insensitive unless it has a capital), file by
    file, at most `cap`."""
    if not query:
        raise GraphError("search needs a non-empty query")
    fold = query == query.lower()
    needle = query.lower() if fold else query
    hits: list[SearchHit] = []
    for path in files:
        try:
            lines = read_lines(root, path)
        except GraphError:
            continue  # gone, grown or moved out of the root since it was indexed
        for number, text in enumerate(lines, 1):
            if needle in (text.lower() if fold else text):
                hits.append(SearchHit(path, number, _clip(text.strip())))
                if cap is not None and len(hits) >= cap:
                    return hits
    return hits


def context(root: Path, path: str, lines: Sequence[int], window: int) -> Context:
    """The code around each of `lines` (1-based) in the indexed file `path`, overlapping
    windows merged."""
    if not lines:
        raise GraphError("context needs at least one --line")
    if window < 0:
        raise GraphError(f"window must be 0 or more, not {window}")
    text = read_lines(root, path)
    if any(n < 1 or n > max(len(text), 1) for n in lines):
        raise GraphError(f"line out of range: '{path}' has {len(text)} lines")
    spans: list[list[int]] = []
    for n in sorted(set(lines)):
        start, end = max(1, n - window), min(len(text), n + window)
        if spans and start <= spans[-1][1] + 1:
            spans[-1][1] = max(spans[-1][1], end)
        else:
            spans.append([start, end])
    chunks = tuple(Chunk(s, e, "\n".join(text[s - 1 : e])) for s, e in spans)
    return Context(path, chunks)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_LINE else text[: _MAX_LINE - 1] + "…"
