"""One session file read and written as upstream's JSON: every byte from disk is untrusted.

Reading never blocks and never writes (a FIFO or device is refused, a file over
`MAX_SESSION_BYTES` is refused unread); NaN, Infinity and numbers too large for a float are
not JSON, so a file holding one is corrupt, never loaded and written back as something no
other reader accepts. Writing is `ore._fs.atomic_write`: old content or new, never half.
"""

from __future__ import annotations

import errno
import json
import math
import os
from pathlib import Path
from typing import Any

from .._fs import (
    NotRegularFile,
    atomic_write,
    folder_problem,
    not_a_folder,
    open_regular,
    os_error_words,
    read_fd,
)
from ..errors import DataError, StoreError
from ..types import Session

__all__ = [
    "MAX_SESSION_BYTES",
    "corrupt",
    "decode",
    "encode",
    "parse",
    "read_bytes",
    "read_json",
    "write_error",
    "write_json",
]

MAX_SESSION_BYTES = 64 * 1024 * 1024


def corrupt(path: Path, why: str) -> StoreError:
    return StoreError(f"session file {path} is corrupt ({why}); fix or move it", path=str(path))


def write_error(root: Path, what: Path, exc: OSError) -> StoreError:
    if exc.errno in (errno.EEXIST, errno.ENOTDIR) and root.exists() and not root.is_dir():
        # A file in the folder's place: said as at every folder of ORE's (its fix, not EEXIST).
        return StoreError(folder_problem(not_a_folder(), root, "keep sessions in"), path=str(root))
    return StoreError(
        f"cannot write {what} ({os_error_words(exc)}); check that {root} is a writable "
        "directory with free space",
        path=str(what),
    )


def read_json(path: Path) -> Any:
    """The JSON value in `path`, or None if there is no such file. Never writes anything."""
    data = read_bytes(path)
    return None if data is None else decode(path, data)


def decode(path: Path, data: bytes) -> Any:
    """The JSON value of `data`, read from `path`; corrupt unless it is standard JSON."""
    try:
        return json.loads(data.decode("utf-8-sig"), parse_constant=_refuse, parse_float=_finite)
    except UnicodeDecodeError as exc:
        raise corrupt(path, f"not UTF-8 text at byte {exc.start}") from exc
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, too many digits, too deep
        raise corrupt(path, f"not JSON: {exc}") from exc


def read_bytes(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of session file `path`, or None if there is none (a FIFO or device there is
    refused, never waited on; a symbolic link is refused, never followed: a link planted in the
    sessions folder would send a file from elsewhere to the model, and a save would replace the
    link with a file). `limit`: `MAX_SESSION_BYTES` unless given."""
    limit = MAX_SESSION_BYTES if limit is None else limit
    try:
        fd = open_regular(path)
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise corrupt(path, "it is a directory" if exc.is_dir else "not a regular file") from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            raise StoreError(
                f"session file {path} is a symbolic link, which ORE does not follow; move it "
                "away, or put the session's own file in its place",
                path=str(path),
            ) from exc
        raise StoreError(
            f"session file {path} cannot be read ({os_error_words(exc)}); "
            "fix its permissions or move it",
            path=str(path),
        ) from exc
    try:
        data = read_fd(fd, limit=limit)
    except OSError as exc:
        raise corrupt(path, os_error_words(exc)) from exc
    finally:
        os.close(fd)
    if len(data) > limit:
        raise corrupt(path, f"larger than {limit >> 20} MiB")
    return data


def parse(path: Path, raw: Any) -> Session:
    """The session `raw` (read from `path`) holds; corrupt unless it is one."""
    try:
        return Session.from_dict(raw)
    except DataError as exc:
        raise corrupt(path, exc.message) from exc
    except OverflowError as exc:  # an integer too large for a float timestamp
        raise corrupt(path, str(exc)) from exc


def encode(name: str, data: Any, *, indent: int | None = 2) -> bytes:
    """`data` as UTF-8 JSON with a trailing newline (lone surrogates, from undecodable argv
    bytes, escaped); `StoreError` for NaN or Infinity, which standard JSON cannot say."""
    try:
        text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise StoreError(f"session '{name}' cannot be saved as JSON: {exc}") from exc
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(data, indent=indent) + "\n").encode("ascii")


def write_json(root: Path, name: str, path: Path, data: Any) -> None:
    """`data` written atomically to `path` as pretty JSON, if it stays under the size limit."""
    blob = encode(name, data)
    if len(blob) > MAX_SESSION_BYTES:
        raise StoreError(
            f"session '{name}' would grow past {MAX_SESSION_BYTES >> 20} MiB; "
            "continue in a new one with --save-session",
            path=str(path),
        )
    try:
        atomic_write(path, blob)
    except OSError as exc:
        raise write_error(root, path, exc) from exc


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is too large for a JSON number")
    return value
