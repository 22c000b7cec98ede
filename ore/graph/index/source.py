"""Reading one source file of an indexed root for the judgment queries, as `extract` reads it:
through `ore._fs.open_below` (inside the root only, never through a symlink swapped in after
the check, never blocking on a FIFO or device)."""

from __future__ import annotations

import os
from pathlib import Path

from ..._fs import open_below, read_fd

__all__ = ["SourceLines", "read_source", "text_lines"]


def text_lines(text: str) -> list[str]:
    """`text` cut into lines as ORE numbers them everywhere (the index, its symbols, git and
    `grep -n` do too): at each `\\n` only, a `\\r\\n` being one line break and a final line
    break ending the last line. A lone `\\r`, a form feed, U+0085 or U+2028 is no line break,
    as `str.splitlines` would make it: every line after one would be numbered one too many."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # what follows the last line break is no line
    if "\r" not in text:
        return lines
    return [line[:-1] if line.endswith("\r") else line for line in lines]


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


class SourceLines:
    """The text lines of a root's files, each file read once (`read_source`, up to `limit`
    bytes; a file that cannot be read has one empty line): one query's reads shared by the
    parts that look at the same files (the clone pairing, its cuts, the exactness check)."""

    def __init__(self, root: str | os.PathLike[str], *, limit: int) -> None:
        self.root, self.limit = root, limit
        self._lines: dict[str, list[str]] = {}

    def __call__(self, path: str) -> list[str]:
        found = self._lines.get(path)
        if found is None:
            data = read_source(self.root, path, limit=self.limit) or b""
            found = self._lines[path] = data.decode("utf-8", "replace").split("\n")
        return found
