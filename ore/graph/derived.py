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
import os
import tempfile
from typing import TYPE_CHECKING

from . import rank
from .cache import cache_path

if TYPE_CHECKING:
    from .graph import CodeGraph

__all__ = ["communities"]

_MAGIC = b"ore-graph-communities 1\n"


def communities(g: CodeGraph) -> list[list[str]]:
    """Louvain communities of `g` (seed 42), from the cache when the edges are unchanged."""
    digest = hashlib.blake2b(marshal.dumps(tuple(map(tuple, g.index.edges))), digest_size=16)
    key = digest.hexdigest() + "\n" + "\n".join(g.files)
    target = cache_path(g.root).with_suffix(".communities")
    with contextlib.suppress(OSError, ValueError, TypeError, EOFError):
        blob = target.read_bytes()
        if blob.startswith(_MAGIC):
            saved_key, groups = marshal.loads(blob[len(_MAGIC) :])
            if saved_key == key:
                return [list(group) for group in groups]
    groups = rank.communities(g.files, g.out)
    _write(target, _MAGIC + marshal.dumps((key, tuple(map(tuple, groups)))))
    return groups


def _write(target: os.PathLike[str], blob: bytes) -> None:
    folder = os.path.dirname(target)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".communities", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
