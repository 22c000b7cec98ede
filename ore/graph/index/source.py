"""Reading one source file of an indexed root for the judgment queries, as `extract` reads it:
through `ore._fs.open_below` (inside the root only, never through a symlink swapped in after
the check, never blocking on a FIFO or device)."""

from __future__ import annotations

import os
from pathlib import Path

from ..._fs import open_below, read_fd

__all__ = ["read_source"]


def read_source(root: str | os.PathLike[str], path: str, *, limit: int) -> bytes | None:
    """At most `limit` + 1 bytes of `path` (relative to `root`), or None when it cannot be read
    as a regular file inside the root."""
    try:
        fd = open_below(Path(root), path)
        try:
            return read_fd(fd, limit=limit)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None
