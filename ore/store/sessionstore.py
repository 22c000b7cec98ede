"""Saved sessions: one upstream-format JSON file per name under `$ORE_HOME/sessions/`.

`<name>.json` holds exactly `id`, `created_at` and `messages` (role, content, id, timestamp),
pretty UTF-8 JSON with a trailing newline; never a system message. The guarantees:

- Append-only: saving appends this turn to what is on disk now, under an exclusive `flock` on
  `<name>.json.lock`, so concurrent writers lose no turn and never rewrite one another's.
- Atomic (`ore._fs.atomic_write`): temp file in the same directory, fsync, rename, fsync of the
  directory. The directory is created 0o700, files are written 0o600.
- Names are 1-100 of `A-Za-z0-9._-`, not starting with `.`, without `..`: never a path elsewhere.
- A corrupt or unreadable file is reported with its path and never written, not even by append.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ._fs import (
    NotRegularFile,
    atomic_write,
    durable_rename,
    exclusive_lock,
    open_regular,
    os_error_words,
    read_fd,
)
from .errors import DataError, StoreError
from .types import Message, Session

__all__ = [
    "INDEX_FILE",
    "MAX_NAME_LENGTH",
    "MAX_SESSION_BYTES",
    "FileSessionStore",
    "SessionInfo",
    "SessionStore",
    "SessionTaken",
    "default_store",
    "validate_name",
]

MAX_NAME_LENGTH = 100
#: The listing cache (`ore.sessions`): never a session, since no session name starts with '.'.
INDEX_FILE = ".index.json"
MAX_SESSION_BYTES = 64 * 1024 * 1024
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_VALID_NAME = (
    f"a session name is 1 to {MAX_NAME_LENGTH} letters, digits, '.', '_' or '-', "
    "not starting with '.' and without '..'"
)


def _is_valid_name(name: str) -> bool:
    return (
        0 < len(name) <= MAX_NAME_LENGTH
        and not name.startswith(".")
        and ".." not in name
        and _NAME_CHARS.issuperset(name)
    )


def validate_name(name: str) -> str:
    """`name` unchanged when it is a valid session name, else a `StoreError` saying what is valid."""
    if not isinstance(name, str) or not _is_valid_name(name):
        shown = repr(name) if len(repr(name)) <= 40 else repr(name)[:37] + "..."
        raise StoreError(f"{shown} is not a valid session name; {_VALID_NAME}")
    return name


class SessionTaken(StoreError):
    """`append` found another session at the name (another id): nothing was written."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One saved session for `--list-sessions`; `modified` is the file's mtime (Unix seconds).

    When the file cannot be read, `problem` says why and id, created_at and message_count are None.
    """

    name: str
    path: Path
    id: str | None
    created_at: float | None
    message_count: int | None
    modified: float
    problem: str | None = None


class SessionStore(Protocol):
    """Where named sessions live. Every method validates `name` first (`StoreError` if bad)."""

    def exists(self, name: str) -> bool: ...

    def load(self, name: str) -> Session: ...

    def open_or_create(self, name: str) -> Session: ...

    def append(
        self, name: str, messages: Sequence[Message], *, session_id: str | None = None
    ) -> Session: ...

    def list(self) -> list[SessionInfo]: ...


class FileSessionStore:
    """Sessions as `<root>/<name>.json` files; see the module docstring for the guarantees.

    Reading never creates anything; the first write creates `root` (mode 0o700).
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def path(self, name: str) -> Path:
        """The file that holds session `name` (validated; the file need not exist)."""
        return self.root / f"{validate_name(name)}.json"

    def read_bytes(self, name: str) -> bytes:
        """Session `name` exactly as stored (for an export); `StoreError` if missing."""
        data = _read_bytes(self.path(name))
        if data is None:
            raise self._missing(name)
        return data

    def exists(self, name: str) -> bool:
        """Whether something is saved under `name` (it may still turn out to be corrupt)."""
        return self.path(name).exists()

    def load(self, name: str) -> Session:
        """The session saved under `name`; `StoreError` if it is missing, unreadable or corrupt."""
        path = self.path(name)
        raw = _read(path)
        if raw is None:
            raise self._missing(name)
        return _parse(path, raw)

    def open_or_create(self, name: str) -> Session:
        """The session to continue for `--save-session NAME`: the saved one, or a new empty one.

        An existing session is continued, never overwritten: the caller appends its new turns
        after what is there, exactly as `--resume-session NAME` would. A new session is written
        at once, so an unwritable directory is reported before any model is called. A corrupt
        file is reported and left as it is.
        """
        path = self.path(name)
        with self._locked(name):
            raw = _read(path)
            if raw is not None:
                return _parse(path, raw)
            session = Session()
            self._write(name, path, session.to_dict())
            return session

    def append(
        self, name: str, messages: Sequence[Message], *, session_id: str | None = None
    ) -> Session:
        """Append `messages` (one turn) to session `name` as it is on disk now; return the result.

        Runs under the session's exclusive lock, so concurrent appends are serialised and none is
        lost. Messages whose id is already saved are skipped, so retrying an append is harmless.
        If the file has disappeared (deleted mid-conversation) it is recreated with these messages.

        :param session_id: the id of the session the caller loaded; when given and the file now
            holds a different session, nothing is written and `SessionTaken` (a `StoreError`)
            is raised: `save_elsewhere` then keeps the turn under a new name.
        :raises ValueError: if a message is a system message (those are never stored).
        """
        path = self.path(name)
        new = tuple(messages)
        if any(m.role == "system" for m in new):
            raise ValueError("system messages are never stored in a session")
        with self._locked(name):
            raw = _read(path)
            on_disk = raw is not None
            if not on_disk:
                raw = (Session(id=session_id) if session_id else Session()).to_dict()
            current = _parse(path, raw)
            if session_id is not None and current.id != session_id:
                raise SessionTaken(
                    f"session file {path} now holds another session (id {current.id}, not "
                    f"{session_id}); save this conversation under a new name",
                    path=str(path),
                )
            seen = {m.id for m in current.messages}
            fresh = [m for m in new if m.id not in seen]
            if not fresh and on_disk:
                return current
            # Extend the file's own dict, so whatever the file holds is kept exactly as it was.
            raw["messages"].extend(m.to_dict() for m in fresh)
            self._write(name, path, raw)
            return current.append(*fresh)

    def save_elsewhere(self, name: str, session: Session) -> tuple[str, Session]:
        """Save `session` whole as a new session under the first free name of `NAME-2`,
        `NAME-3`, ... (each checked and created under its own lock); the name and the session.

        For a turn whose session `name` now holds another one (`SessionTaken`): a fork into a
        name that exists, or that another process created first. `name` is left as it is.

        :raises StoreError: a session that cannot be written at all (an unwritable folder).
        """
        validate_name(name)
        for number in range(2, _MAX_TRIES + 2):
            candidate = _numbered(name, number)
            path = self.path(candidate)
            with self._locked(candidate):
                if os.path.lexists(path):
                    continue
                self._write(candidate, path, session.to_dict())
                return candidate, session
        raise StoreError(
            f"no free name for this session: '{name}' and the {_MAX_TRIES} numbered names "
            f"after it are taken; save under another name with --save-session",
            path=str(self.path(name)),
        )

    def delete(self, name: str) -> None:
        """Remove session `name` (corrupt or not); `StoreError` if there is none."""
        path = self.path(name)
        if not os.path.lexists(path):
            raise self._missing(name)
        with self._locked(name):
            try:
                os.unlink(path)
            except FileNotFoundError:
                raise self._missing(name) from None
            except OSError as exc:
                raise StoreError(
                    f"cannot delete session file {path} ({os_error_words(exc)}); remove it by hand",
                    path=str(path),
                ) from exc
            # Safe while held: a waiter on this lock file sees it is gone and takes a fresh one.
            with suppress(OSError):
                os.unlink(self._lock_path(name))

    def create(self, name: str, session: Session) -> Session:
        """Save `session` as the new session `name`; `StoreError` if anything is saved there."""
        path = self.path(name)
        with self._locked(name):
            if os.path.lexists(path):
                raise self._taken(name)
            self._write(name, path, session.to_dict())
        return session

    def rename(self, old: str, new: str) -> None:
        """Rename session `old` to `new` in one atomic step, under both locks.

        `new` must be free, and `old` must exist and be readable: a corrupt file is reported and
        left where it is. Nothing but the two names is touched.
        """
        src, dst = self.path(old), self.path(new)
        if old == new:
            raise StoreError(f"'{old}' and '{new}' are the same name; give a new one")
        first, second = sorted((old, new))  # one order everywhere: no deadlock
        with self._locked(first), self._locked(second):
            raw = _read(src)
            if raw is None:
                raise self._missing(old)
            _parse(src, raw)
            if os.path.lexists(dst):
                raise self._taken(new)
            try:
                durable_rename(src, dst)
            except OSError as exc:
                raise self._write_error(dst, exc) from exc
            with suppress(OSError):  # as delete() does: a waiter sees it gone and retries
                os.unlink(self._lock_path(old))

    def read_index(self) -> Any:
        """The listing cache's JSON, or None when it is missing or unreadable (a cache only)."""
        try:
            return _read(self.root / INDEX_FILE)
        except StoreError:
            return None

    def update_index(self, change: Callable[[Any], dict[str, Any]]) -> None:
        """Rewrite the listing cache under its own lock: `change` gets what is there now (None
        when missing or corrupt) and returns the new content, written atomically."""
        name = INDEX_FILE.removesuffix(".json")
        with self._locked(name):
            self._write(name, self.root / INDEX_FILE, change(self.read_index()))

    def _taken(self, name: str) -> StoreError:
        return StoreError(
            f"a session named '{name}' already exists in {self.root}; pick another name",
            path=str(self.path(name)),
        )

    def _missing(self, name: str) -> StoreError:
        return StoreError(
            f"no session named '{name}' in {self.root}; list them with --list-sessions",
            path=str(self.path(name)),
        )

    def _lock_path(self, name: str) -> Path:
        return self.root / f"{name}.json.lock"

    def _write_error(self, what: Path, exc: OSError) -> StoreError:
        return StoreError(
            f"cannot write {what} ({os_error_words(exc)}); check that {self.root} is a writable directory "
            "with free space",
            path=str(what),
        )

    @contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        lock_path = self._lock_path(name)
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise self._write_error(self.root, exc) from exc
        with ExitStack() as held:
            try:
                held.enter_context(exclusive_lock(lock_path))
            except OSError as exc:
                raise self._write_error(lock_path, exc) from exc
            yield

    def _write(self, name: str, path: Path, data: dict[str, Any]) -> None:
        try:
            text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False)
        except ValueError as exc:  # NaN or Infinity: standard JSON has no way to say them
            raise StoreError(f"session '{name}' cannot be saved as JSON: {exc}") from exc
        try:
            blob = (text + "\n").encode("utf-8")
        except UnicodeEncodeError:
            # Lone surrogates (from undecodable argv bytes) cannot be UTF-8: escape them instead.
            blob = (json.dumps(data, indent=2) + "\n").encode("ascii")
        if len(blob) > MAX_SESSION_BYTES:
            raise StoreError(
                f"session '{name}' would grow past {MAX_SESSION_BYTES >> 20} MiB; "
                "continue in a new one with --save-session",
                path=str(path),
            )
        try:
            atomic_write(path, blob)
        except OSError as exc:
            raise self._write_error(path, exc) from exc

    def list(self) -> list[SessionInfo]:
        """Every saved session, sorted by name; unreadable ones are listed with their `problem`."""
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(
                f"cannot list sessions in {self.root} ({os_error_words(exc)}); fix its permissions",
                path=str(self.root),
            ) from exc
        infos = []
        for entry in entries:
            name = entry.name.removesuffix(".json")
            if name == entry.name or not _is_valid_name(name):
                continue  # lock files, temp files and strangers
            path = Path(entry.path)
            try:
                modified = entry.stat().st_mtime
            except OSError:
                continue  # deleted since the directory was read, or a dangling link
            try:
                raw = _read(path)
                session = None if raw is None else _parse(path, raw)
            except StoreError as exc:
                infos.append(SessionInfo(name, path, None, None, None, modified, exc.message))
                continue
            if session is not None:  # else deleted since the directory was read
                count = len(session.messages)
                infos.append(
                    SessionInfo(name, path, session.id, session.created_at, count, modified)
                )
        return infos


#: How many numbered names `save_elsewhere` tries (NAME-2, NAME-3, ...) before it gives up.
_MAX_TRIES = 1000


def _numbered(name: str, number: int) -> str:
    """`NAME-N`, NAME cut so that the whole stays a valid name."""
    suffix = f"-{number}"
    return validate_name(name[: MAX_NAME_LENGTH - len(suffix)].rstrip(".") + suffix)


def default_store() -> FileSessionStore:
    """The store the CLI uses: `$ORE_HOME/sessions` (`~/.ore/sessions` by default)."""
    from .paths import ore_home

    return FileSessionStore(ore_home() / "sessions")


def _corrupt(path: Path, why: str) -> StoreError:
    return StoreError(f"session file {path} is corrupt ({why}); fix or move it", path=str(path))


def _read(path: Path) -> Any:
    """The JSON value in `path`, or None if there is no such file. Never writes anything."""
    data = _read_bytes(path)
    if data is None:
        return None
    try:
        # NaN, Infinity and a number too large for a float are not JSON: a file holding one is
        # corrupt, never loaded and written back as something no other reader accepts.
        return json.loads(data.decode("utf-8-sig"), parse_constant=_refuse, parse_float=_finite)
    except UnicodeDecodeError as exc:
        raise _corrupt(path, f"not UTF-8 text at byte {exc.start}") from exc
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, too many digits, too deep
        raise _corrupt(path, f"not JSON: {exc}") from exc


def _read_bytes(path: Path) -> bytes | None:
    """The bytes of session file `path`, or None if there is none (a FIFO or device there is
    refused, never waited on)."""
    try:
        fd = open_regular(path, follow_symlinks=True)  # a FIFO is refused, never waited on
    except FileNotFoundError:
        return None
    except NotRegularFile as exc:
        raise _corrupt(path, "it is a directory" if exc.is_dir else "not a regular file") from exc
    except OSError as exc:
        raise StoreError(
            f"session file {path} cannot be read ({os_error_words(exc)}); "
            "fix its permissions or move it",
            path=str(path),
        ) from exc
    try:
        data = read_fd(fd, limit=MAX_SESSION_BYTES)
    except OSError as exc:
        raise _corrupt(path, os_error_words(exc)) from exc
    finally:
        os.close(fd)
    if len(data) > MAX_SESSION_BYTES:
        raise _corrupt(path, f"larger than {MAX_SESSION_BYTES >> 20} MiB")
    return data


def _refuse(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} is too large for a JSON number")
    return value


def _parse(path: Path, raw: Any) -> Session:
    try:
        return Session.from_dict(raw)
    except DataError as exc:
        raise _corrupt(path, exc.message) from exc
    except OverflowError as exc:  # an integer too large for a float timestamp
        raise _corrupt(path, str(exc)) from exc
