"""Whole-graph results kept beside the index: Louvain communities, keyed by a digest of the edges.

Communities need networkx (0.2 s to import) and a Louvain pass over every edge; `place` and the
signature ask for them on every call. The first call writes `<index name>.communities`; later
calls whose edges are the same (blake2b of their `marshal` form) read it back. A damaged,
foreign or outdated file is simply recomputed.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
from typing import TYPE_CHECKING

from . import rank
from .cache import cache_path, read_sealed, write_sealed

if TYPE_CHECKING:
    from .graph import CodeGraph

__all__ = ["communities"]

_MAGIC = b"ore-graph-communities 2\n"


def communities(g: CodeGraph) -> list[list[str]]:
    """Louvain communities of `g` (seed 42), from the cache when the edges are unchanged."""
    digest = hashlib.blake2b(marshal.dumps(tuple(map(tuple, g.index.edges))), digest_size=16)
    key = digest.hexdigest() + "\n" + "\n".join(g.files)
    target = cache_path(g.root).with_suffix(".communities")
    payload = read_sealed(target, _MAGIC)
    if payload is not None:
        with contextlib.suppress(ValueError, TypeError, EOFError):
            saved_key, groups = marshal.loads(payload)
            if saved_key == key:
                return [list(group) for group in groups]
    groups = rank.communities(g.files, g.out)
    write_sealed(target, _MAGIC, marshal.dumps((key, tuple(map(tuple, groups)))))
    return groups
