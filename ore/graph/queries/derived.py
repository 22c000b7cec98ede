"""Whole-graph results kept beside the index: PageRank and Louvain communities, keyed by a digest
of the edges (and the files).

Communities need networkx (0.2 s to import) and a Louvain pass over every edge; PageRank a pure
Python power iteration over every edge (a fifth of a warm `dependents` on django). `place`, the
signature, `top-files`, `conventions` and `files` ask for them on every call. The first call
writes `<index name>.derived`; later calls whose edges and files are the same (the digest the
index's head carries, computed when the index is written) read the result back, and results
computed for other edges are dropped. A damaged, foreign or outdated file is simply recomputed.
"""

from __future__ import annotations

import contextlib
import marshal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..index.cache import cache_path
from ..index.kinds import is_test
from ..index.sealed import read_sealed, write_sealed
from . import rank

__all__ = ["TEST_JUMP", "communities", "derived_key", "pagerank"]

_MAGIC = b"ore-graph-derived 6\n"
TEST_JUMP = 0.1


def derived_key(edges_key: str, files: Sequence[str]) -> str:
    """What whole-graph results depend on: the digest of the edges the index's head carries, and
    the files (a graph computes it once)."""
    return edges_key + "\n" + "\n".join(files)


def communities(
    root: Path, key: str, files: list[str], out: Callable[[], rank.Adjacency]
) -> list[list[str]]:
    """Louvain communities (seed 42), from the cache when the edges are unchanged (`out` builds
    the adjacency, only when they are computed)."""
    groups = _derived(
        root, key, "communities", lambda: tuple(map(tuple, rank.communities(files, out())))
    )
    return [list(group) for group in groups]


def pagerank(
    root: Path, key: str, files: list[str], out: Callable[[], rank.Adjacency]
) -> dict[str, float]:
    """Weighted PageRank of every file, from the cache when the edges are unchanged (`out`
    builds the adjacency, only when it is computed: a fifth of a warm `top-files` on 18,000
    files).

    Tests count for less: a test file's share of the random jumps is `TEST_JUMP` of another
    file's. Tests say what they use, and the code they use keeps that rank; but a helper that only
    tests import (a fixture module, `tests/_cli.py`) would otherwise collect a central file's rank
    from the dozens of test files that nothing imports.
    """

    def compute() -> dict[str, float]:  # only when no kept answer fits (a jump per file)
        jumps = {path: TEST_JUMP if is_test(path) else 1.0 for path in files}
        return rank.pagerank(files, out(), personalization=jumps)

    return dict(_derived(root, key, "pagerank", compute))


def _derived(root: Path, key: str, name: str, compute: Callable[[], Any]) -> Any:
    target = cache_path(root).with_suffix(".derived")
    kept: dict[str, Any] = {}
    payload = read_sealed(target, _MAGIC)
    if payload is not None:
        with contextlib.suppress(ValueError, TypeError, EOFError):
            saved_key, saved = marshal.loads(payload)
            if saved_key == key and isinstance(saved, dict):
                kept = saved
                if name in kept:
                    return kept[name]
    kept[name] = value = compute()
    write_sealed(target, _MAGIC, marshal.dumps((key, kept)))
    return value
