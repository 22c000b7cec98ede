"""Sealed files beside the index (kept answers, shapes): a magic line, a blake2b checksum, then
the payload. A file that is missing, not a regular file (a FIFO there never blocks), of another
version or damaged reads as None; a write replaces the file atomically, and a failure to write
only costs time.
"""

from __future__ import annotations

import contextlib
import hashlib
from pathlib import Path

from ..._fs import atomic_write, read_regular

__all__ = ["read_sealed", "write_sealed"]

_SUM = 32
#: A larger file is not read (nor written): no real tree comes near it, so it is not ours.
_MAX_BYTES = 1 << 31


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
