"""Saved sessions: one upstream-format JSON file per name under `$ORE_HOME/sessions/`.

`<name>.json` holds exactly `id`, `created_at` and `messages` (role, content, id, timestamp),
pretty UTF-8 JSON with a trailing newline; never a system message. The guarantees:

- Append-only: saving appends this turn to what is on disk now, under an exclusive `flock` on
  `<name>.json.lock`, so concurrent writers lose no turn and never rewrite one another's.
- Constant time per turn: a turn is written in place over the file's closing bracket, with an
  undo in the lock file beside it (`ore.store.tail`), so the file is whole after every
  turn and a save writes only the turn. A file ORE did not write last is written whole.
- Atomic: a whole file is written through `ore._fs.atomic_write` (temp file in the same
  directory, fsync, rename, fsync of the directory); a turn written in place is undone by any
  reader while it is unfinished. A writer killed at any moment leaves the session as it was
  before or after its turn. The directory is created 0o700, files are written 0o600.
- Names are 1-100 of `A-Za-z0-9._-`, not starting with `.`, without `..`: never a path elsewhere.
- A corrupt or unreadable file is reported with its path and never written, not even by append.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .._fs import durable_rename, exclusive_lock, folder_problem, os_error_words
from ..errors import StoreError
from ..types import Message, Session
from . import files, tail
from .names import is_valid_name, numbered, validate_name

__all__ = [
    "INDEX_FILE",
    "FileSessionStore",
    "SessionInfo",
    "SessionStore",
    "SessionTaken",
    "default_store",
]

#: The listing cache (`ore.sessions`): never a session, since no session name starts with '.'.
INDEX_FILE = ".index.json"


class SessionTaken(StoreError):
    """`append` found another session at the name (another id): nothing was written."""


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One saved session for `--list-sessions`; `modified` is the last write (Unix seconds).

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

    def state_path(self, name: str) -> Path:
        """What ORE knows of `name`'s file (`ore.store.tail`): held by the file writers lock,
        `NAME.json.lock`, so a session has no other companion."""
        return self._lock_path(validate_name(name))

    def modified(self, name: str, st: os.stat_result) -> tuple[float, list[int]]:
        """When session `name`, whose file's stat is `st`, was last written, and a key that
        changes whenever the file does (size, mtime, inode)."""
        return st.st_mtime, list(tail.file_key(st))

    def read_bytes(self, name: str) -> bytes:
        """Session `name` exactly as stored (for an export); `StoreError` if missing. A file a
        writer left mid-turn is given as it was before that turn."""
        path = self.path(name)
        found = self._read_data(path, self.state_path(name))
        if found is None:
            raise self._missing(name)
        return found[0]

    def exists(self, name: str) -> bool:
        """Whether something is saved under `name` (it may still turn out to be corrupt)."""
        return self.path(name).exists()

    def load(self, name: str) -> Session:
        """The session saved under `name`; `StoreError` if it is missing, unreadable or corrupt."""
        path = self.path(name)
        raw = self._read(name)
        if raw is None:
            raise self._missing(name)
        return files.parse(path, raw)

    def prepare(self, name: str, *, new: bool = False) -> None:
        """Check, before any model is called, that session `name` can be written (its folder
        made, its lock taken) and, when `new`, that nothing is saved there yet; nothing is
        saved: a session file appears with its first turn."""
        with self._locked(name):
            if new and os.path.lexists(self.path(name)):
                raise self._taken(name)

    def open_or_create(self, name: str) -> Session:
        """The session to continue for `--save-session NAME`: the saved one, or a new empty one
        held in memory (`prepare`d: an unwritable folder is reported before any model call).

        An existing session is continued, never overwritten: the caller appends its new turns
        after what is there, exactly as `--resume-session NAME` would. A corrupt file is
        reported and left as it is.
        """
        if os.path.lexists(self.path(name)):
            return self.load(name)
        self.prepare(name)
        return Session()

    def append(
        self, name: str, messages: Sequence[Message], *, session_id: str | None = None
    ) -> Session:
        """Append `messages` (one turn) to session `name` as it is on disk now (`add`), and
        return the whole session as it is then (which costs a read of all of it)."""
        self.add(name, messages, session_id=session_id)
        return self.load(name)

    def add(
        self,
        name: str,
        messages: Sequence[Message],
        *,
        session_id: str | None = None,
        new: Session | None = None,
    ) -> str:
        """Append `messages` (one turn) to session `name` as it is on disk now; the id of the
        session they were added to. Writes only the turn (in place) when the file is the one ORE
        wrote last; else the whole file.

        Runs under the session's exclusive lock, so concurrent appends are serialised and none
        is lost. A message whose id is already saved is saved once, so retrying is harmless. If
        the file has disappeared (deleted mid-conversation) it is recreated with these messages.

        :param session_id: the id of the session the caller loaded; when given and the file now
            holds a different session, nothing is written and `SessionTaken` (a `StoreError`)
            is raised: `save_elsewhere` then keeps the turn under a new name.
        :param new: the session the caller holds, whose id and creation time a session file
            created now gets (default: `session_id` and now).
        :raises ValueError: if a message is a system message (those are never stored).
        """
        path = self.path(name)
        turn = list(messages)
        if any(m.role == "system" for m in turn):
            raise ValueError("system messages are never stored in a session")
        with self._locked(name):
            state_path = self.state_path(name)
            state = tail.read_state(state_path)
            try:
                st = os.lstat(path)
            except OSError:
                st = None
            if (
                st is not None
                and stat.S_ISREG(st.st_mode)
                and state is not None
                and state.undo_at is None
                and state.file == tail.file_key(st)
            ):
                if session_id is not None and state.id != session_id:
                    raise self._taken_by(path, state.id, session_id)
                fresh = [m for m in turn if m.id not in state.last]
                if not fresh:
                    return state.id  # this turn was saved last: a retry
                if self._add_in_place(name, st, state, fresh):
                    return state.id
            return self._rewrite(name, turn, session_id, new)

    def _add_in_place(
        self, name: str, st: os.stat_result, state: tail.State, turn: list[Message]
    ) -> bool:
        """Write `turn` over the closing of `name`'s file, which is the version ORE wrote last
        (the lock held); False when the file does not end as ORE writes it."""
        path, state_path = self.path(name), self.state_path(name)
        try:
            end = tail.closing(path, st.st_size)
        except OSError:
            return False
        if end is None:
            return False
        at, old = end
        data = tail.piece(name, turn, old)
        if at + len(data) > files.MAX_SESSION_BYTES:
            return False  # the whole file is written, or refused with the size in words
        undo = tail.State(state.id, state.file, state.last, at, old, at + len(data))
        try:
            tail.write_state(state_path, undo, sync=True)  # before the file is touched
            after = tail.append_in_place(path, at, old, data)
        except OSError as exc:
            raise files.write_error(self.root, path, exc) from exc
        last = tuple(m.id for m in turn)
        with suppress(OSError):  # a state left with its undo only sends the next save the slow way
            tail.write_state(
                state_path, tail.State(state.id, tail.file_key(after), last), sync=False
            )
        return True

    def _rewrite(
        self, name: str, turn: list[Message], session_id: str | None, new: Session | None
    ) -> str:
        """The slow path of `add` (the lock held): read and check the whole file, add `turn`,
        write it whole."""
        path = self.path(name)
        raw = self._read(name)
        on_disk = raw is not None
        if raw is None:
            start = new or (Session(id=session_id) if session_id else Session())
            raw = Session(id=start.id, created_at=start.created_at).to_dict()
        current = files.parse(path, raw)
        if session_id is not None and on_disk and current.id != session_id:
            raise self._taken_by(path, current.id, session_id)
        seen = {m.get("id") for m in raw["messages"] if isinstance(m, dict)}
        fresh = [m for m in turn if m.id not in seen]
        if fresh or not on_disk:
            # Extend the file's own dict, so whatever the file holds is kept exactly as it was.
            raw["messages"].extend(m.to_dict() for m in fresh)
            self._write_session(name, raw, tuple(m.id for m in fresh))
        return current.id

    def _write_session(self, name: str, raw: dict[str, Any], last: tuple[str, ...] = ()) -> None:
        """Write session `name` whole, then its state (the lock held). A state that cannot be
        written costs nothing but the next save's speed."""
        path = self.path(name)
        files.write_json(self.root, name, path, raw)
        with suppress(OSError):
            st = os.lstat(path)
            tail.write_state(
                self.state_path(name),
                tail.State(str(raw["id"]), tail.file_key(st), last),
                sync=False,
            )

    def _read_data(self, path: Path, state_path: Path) -> tuple[bytes, Any] | None:
        """The bytes of the session file at `path` and their JSON, None if there is no file. A
        file left mid-turn (a writer killed, or writing now) is read as it was before that
        turn, from the undo beside it; a writer finishing meanwhile is read again."""
        seen = None
        while True:
            state = tail.read_state(state_path)
            data = files.read_bytes(path)
            if data is None:
                return None
            try:
                return data, files.decode(path, data)
            except StoreError as exc:
                error = exc
            for undo in (state, tail.read_state(state_path)):
                fixed = tail.repaired(data, undo)
                if fixed is not None:
                    with suppress(StoreError):
                        return fixed, files.decode(path, fixed)
            if data == seen:
                raise error
            seen = data

    def _read(self, name: str) -> Any:
        """The session file's JSON (see `_read_data`); None if there is no file."""
        found = self._read_data(self.path(name), self.state_path(name))
        return None if found is None else found[1]

    def _taken_by(self, path: Path, found: str, expected: str) -> SessionTaken:
        return SessionTaken(
            f"session file {path} now holds another session (id {found}, not "
            f"{expected}); save this conversation under a new name",
            path=str(path),
        )

    def save_elsewhere(self, name: str, session: Session) -> tuple[str, Session]:
        """Save `session` whole as a new session under the first free name of `NAME-2`,
        `NAME-3`, ... (each checked and created under its own lock); the name and the session.

        For a turn whose session `name` now holds another one (`SessionTaken`): a fork into a
        name that exists, or that another process created first. `name` is left as it is.

        :raises StoreError: a session that cannot be written at all (an unwritable folder).
        """
        validate_name(name)
        for number in range(2, _MAX_TRIES + 2):
            candidate = numbered(name, number)
            path = self.path(candidate)
            with self._locked(candidate):
                if os.path.lexists(path):
                    continue
                self._write_session(candidate, session.to_dict())
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
            self._write_session(name, session.to_dict())
        return session

    def rename(self, old: str, new: str) -> None:
        """Rename session `old` to `new` in one atomic step, under both locks.

        `new` must be free, and `old` must exist and be readable: a corrupt file is reported and
        left where it is. A file left mid-turn is written whole first, so the rename moves the
        session as it reads. Nothing but the two names is touched.
        """
        src, dst = self.path(old), self.path(new)
        if old == new:
            raise StoreError(f"'{old}' and '{new}' are the same name; give a new one")
        first, second = sorted((old, new))  # one order everywhere: no deadlock
        with self._locked(first), self._locked(second):
            found = self._read_data(src, self.state_path(old))
            if found is None:
                raise self._missing(old)
            data, raw = found
            files.parse(src, raw)
            if os.path.lexists(dst):
                raise self._taken(new)
            if data != files.read_bytes(src):
                self._write_session(old, raw)  # left mid-turn: whole, as it reads, before it moves
            with suppress(OSError):  # a state is only a shortcut: `new` starts without one
                tail.clear_state(self.state_path(new))
            try:
                durable_rename(src, dst)
            except OSError as exc:
                raise files.write_error(self.root, dst, exc) from exc
            with suppress(OSError):  # as delete() does: a waiter sees it gone and retries
                os.unlink(self._lock_path(old))

    def read_index(self) -> Any:
        """The listing cache's JSON, or None when it is missing or unreadable (a cache only)."""
        try:
            return files.read_json(self.root / INDEX_FILE)
        except StoreError:
            return None

    def update_index(self, change: Callable[[Any], dict[str, Any]]) -> None:
        """Rewrite the listing cache under its own lock: `change` gets what is there now (None
        when missing or corrupt) and returns the new content, written atomically (not at all
        when it is what is there: the model of a session's every turn is mostly the last one)."""
        name = INDEX_FILE.removesuffix(".json")
        with self._locked(name):
            current = self.read_index()
            new = change(current)
            if new != current:
                files.write_json(self.root, name, self.root / INDEX_FILE, new)

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

    @contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        lock_path = self._lock_path(name)
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise files.write_error(self.root, self.root, exc) from exc
        with ExitStack() as held:
            try:
                held.enter_context(exclusive_lock(lock_path))
            except OSError as exc:
                raise files.write_error(self.root, lock_path, exc) from exc
            yield

    def scan(self) -> list[tuple[str, Path, os.stat_result]]:
        """Every `NAME.json` with a valid name, sorted by name, and its stat; never reads a
        file. The one scan of the sessions folder: listings, `--continue` and "did you mean"
        all start from it."""
        try:
            entries = sorted(os.scandir(self.root), key=lambda e: e.name)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(
                folder_problem(exc, self.root, "list sessions in"),
                path=str(self.root),
            ) from exc
        found = []
        for entry in entries:
            name = entry.name.removesuffix(".json")
            if name == entry.name or not is_valid_name(name):
                continue  # lock files, states, temp files, the cache and strangers
            try:
                found.append((name, Path(entry.path), entry.stat()))
            except OSError:
                continue  # deleted since the directory was read, or a dangling link
        return found

    def list(self) -> list[SessionInfo]:
        """Every saved session, sorted by name; unreadable ones are listed with their `problem`."""
        infos = []
        for name, path, st in self.scan():
            modified = self.modified(name, st)[0]
            try:
                raw = self._read(name)
                session = None if raw is None else files.parse(path, raw)
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


def default_store() -> FileSessionStore:
    """The store the CLI uses: `$ORE_HOME/sessions` (`~/.ore/sessions` by default)."""
    from ..paths import ore_home

    return FileSessionStore(ore_home() / "sessions")
