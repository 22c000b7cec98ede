"""Saving a turn in constant time: the turn is written over the file's closing bracket, in
place, so the session file stays whole upstream JSON after every turn and a save writes only
the turn (plus a few bytes beside it), however long the session is.

Beside `NAME.json`, its lock file `NAME.json.lock` (locked by every writer, empty until now)
holds one JSON line, the state:
`{"state": 1, "id": ID, "file": [size, mtime_ns, inode]}`: the session's id and the version of
the file ORE last wrote (pretty JSON, `messages` last). Only while the file is exactly that
version is a turn added in place; anything else (no state, a file written by upstream ORE or
by hand, a write that did not finish) takes the slow path: read, check, write the whole file
atomically, as ORE always did.

Why a kill at any moment loses nothing: before the file is touched, the state records the
undo (`"undo": {"at": OFFSET, "tail": OLD_CLOSING}`) and is fsynced. The in-place write
starts at OFFSET and only ever grows the file, and every byte prefix of it leaves the file
invalid JSON until the write is whole (or equal to what was there). So a file that parses is
the session before or after the turn, and one that does not is repaired by a reader, in
memory, from the undo: the bytes before OFFSET are untouched. The next writer, under the lock,
sees the file is not the version the state names and rewrites it whole.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

from .._fs import open_regular, write_at, write_note
from ..errors import StoreError
from ..types import Message
from .files import decode, encode

__all__ = [
    "State",
    "append_in_place",
    "clear_state",
    "closing",
    "file_key",
    "piece",
    "read_state",
    "repaired",
    "write_state",
]

VERSION = 1
_STATE_LIMIT = 64 * 1024
#: How ORE's pretty JSON (indent 2, `messages` last) ends, with messages and without.
_CLOSE = b"\n  ]\n}\n"
_CLOSE_EMPTY = b"[]\n}\n"


class State(NamedTuple):
    """What ORE knows of a session file: its id, the version it last wrote, and, while a turn
    is being written in place, where that began, what it overwrote and where it will end.
    `last`: the ids of the turn saved last, so saving it again (a retry) adds nothing. (A
    NamedTuple: immutable, and cheap to define on the start-up path of `ore session list`.)"""

    id: str
    file: tuple[int, int, int]
    last: tuple[str, ...] = ()
    undo_at: int | None = None
    undo_tail: bytes = b""
    undo_end: int = 0


def file_key(st: os.stat_result) -> tuple[int, int, int]:
    """What tells one version of a file from another: size, mtime (ns), inode."""
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def read_state(path: Path) -> State | None:
    """The state beside a session file; None when missing, unreadable or not one (a state is
    only ever a shortcut or an undo: without it, the slow path is taken)."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        data = os.read(fd, _STATE_LIMIT)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        value = decode(path, data)
    except StoreError:
        return None
    if not isinstance(value, dict) or value.get("state") != VERSION:
        return None
    key, undo = value.get("file"), value.get("undo")
    if (
        not isinstance(value.get("id"), str)
        or not isinstance(key, list)
        or len(key) != 3
        or not all(type(k) is int for k in key)
    ):
        return None
    last = value.get("last")
    ids = tuple(i for i in last if isinstance(i, str)) if isinstance(last, list) else ()
    state = State(value["id"], (key[0], key[1], key[2]), ids)
    if (
        isinstance(undo, dict)
        and type(undo.get("at")) is int
        and type(undo.get("end")) is int
        and isinstance(undo.get("tail"), str)
    ):
        tail = undo["tail"].encode("utf-8")
        return State(state.id, state.file, ids, undo["at"], tail, undo["end"])
    return state


def write_state(path: Path, state: State, *, sync: bool) -> None:
    """Put `state` beside the session file (the lock held). Not atomic, and need not be: a
    state cut short is no state, and the file it speaks of is then read the slow way."""
    data: dict[str, Any] = {"state": VERSION, "id": state.id, "file": list(state.file)}
    data["last"] = list(state.last)
    if state.undo_at is not None:
        tail = state.undo_tail.decode("utf-8")
        data["undo"] = {"at": state.undo_at, "tail": tail, "end": state.undo_end}
    write_note(path, encode("", data, indent=None), sync=sync)


def clear_state(path: Path) -> None:
    """Forget what was known of a file (the lock held): its next save is written whole."""
    write_note(path, b"", sync=False)


def repaired(data: bytes, state: State | None) -> bytes | None:
    """The file as it was before a write in place that did not finish, from the undo; None
    when there is no undo that fits (a write that finished leaves the file at its end or
    beyond, and a file that does not parse then is corrupt, never repaired)."""
    if state is None or state.undo_at is None:
        return None
    if not state.undo_at <= len(data) < state.undo_end:
        return None
    return data[: state.undo_at] + state.undo_tail


def closing(path: Path, size: int) -> tuple[int, bytes] | None:
    """Where ORE's closing of the file at `path` begins and its bytes; None unless the file ends
    as ORE writes it."""
    fd = open_regular(path)
    try:
        end = os.pread(fd, 16, max(0, size - 16))
    finally:
        os.close(fd)
    for close in (_CLOSE, _CLOSE_EMPTY):
        if end.endswith(close):
            return size - len(close), close
    return None


def piece(name: str, messages: list[Message], old: bytes) -> bytes:
    """What replaces the closing `old`: the messages, indented as `json.dumps(indent=2)` would
    put them in the array, and the closing again."""
    items = []
    for m in messages:
        text = encode(name, m.to_dict()).decode("utf-8").rstrip("\n")
        items.append("\n".join("    " + line for line in text.split("\n")))
    body = ",\n".join(items).encode("utf-8")
    if old == _CLOSE_EMPTY:
        return b"[\n" + body + _CLOSE
    return b",\n" + body + _CLOSE


def append_in_place(path: Path, at: int, old: bytes, data: bytes) -> os.stat_result:
    """Write `data` at offset `at` of the file at `path` and fsync; on failure (a full disk)
    put `old` back at `at`, as the file was. The stat of the file after."""
    return write_at(path, at, data, before=old)
