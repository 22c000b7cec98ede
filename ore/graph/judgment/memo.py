"""Answers kept by the content they were computed from, beside the index (`<index>.memo`).

A repo-wide judgment (clone groups, the conventions of a scope) reads and compares every file's
shape: far more than a warm structural query, which reads only the index. Its answer depends on
nothing but its parameters, the files it looked at and their contents (the content hashes the
index already holds) and the code that computed it (this module's magic, the shapes' magic and
ORE's version). So the answer is kept under a key made of exactly those: asked again over the
same content it is read back; after any edit to a file it looked at, the key changes and it is
computed afresh. The file is written like the index (`write_sealed`: checksum, atomic replace); a
damaged, foreign or unreadable one reads as empty, and a failure to write only costs time. At most
`MAX_ENTRIES` answers are kept per root, the most recently computed.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..._version import __version__
from ..index.cache import MAGIC as INDEX_MAGIC
from ..index.cache import cache_path
from ..index.sealed import read_sealed, write_sealed
from .shapecache import SHAPES_MAGIC

if TYPE_CHECKING:
    from .view import GraphView

__all__ = ["MAX_ENTRIES", "MEMO_MAGIC", "remembered"]

MEMO_MAGIC = b"ore-graph-memo 14\n"  # bump when an answer kept here is computed differently
MAX_ENTRIES = 32
T = TypeVar("T")


def remembered(
    g: GraphView,
    name: str,
    params: tuple[object, ...],
    paths: Sequence[str],
    compute: Callable[[], T],
    encode: Callable[[T], Any],
    decode: Callable[[Any], T],
) -> T:
    """`compute()`, or the answer kept for the same `name`, `params` and content of `paths`
    (in that order). `encode` makes the answer marshal-able; `decode` turns it back."""
    key = _key(g, name, params, paths)
    entries = _read(g.root)
    if key in entries:
        try:
            return decode(entries[key])
        except (ValueError, TypeError, KeyError, IndexError):
            pass  # written by other code under the same key: compute it again
    value = compute()
    entries.pop(key, None)
    entries[key] = encode(value)
    while len(entries) > MAX_ENTRIES:
        del entries[next(iter(entries))]
    _write(g.root, entries)
    return value


def _key(g: GraphView, name: str, params: tuple[object, ...], paths: Sequence[str]) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    # the index's version too: an answer kept from records extracted otherwise is stale
    h.update(MEMO_MAGIC + SHAPES_MAGIC + INDEX_MAGIC + __version__.encode() + b"\0")
    h.update(repr((name, params)).encode("utf-8", "surrogatepass") + b"\0")
    files = g.index.files
    for path in paths:
        h.update(f"{path}\0{files[path].digest}\0".encode("utf-8", "surrogatepass"))
    return h.digest()


def _file(root: Path) -> Path:
    return cache_path(root).with_suffix(".memo")


def _read(root: Path) -> dict[bytes, Any]:
    payload = read_sealed(_file(root), MEMO_MAGIC)
    if payload is None:
        return {}
    try:
        saved_root, entries = marshal.loads(payload)
    except (ValueError, TypeError, EOFError):
        return {}
    if saved_root != str(root) or not isinstance(entries, dict):
        return {}
    return entries


def _write(root: Path, entries: dict[bytes, Any]) -> None:
    write_sealed(_file(root), MEMO_MAGIC, marshal.dumps((str(root), entries)))
