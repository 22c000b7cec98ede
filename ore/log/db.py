"""Opening the turn log: `$ORE_HOME/log.db`, a SQLite file in WAL mode, 0600, with a busy
timeout so that many `ore` processes write at once without "database is locked", and its schema
as numbered migrations (`MIGRATIONS`) with a version table, so that a newer ORE reads an older
log and an older ORE refuses a newer one. The schema is here, not in a module of its own, so
that a turn's record loads one module to open the log (docs/log.md "Cost").

The file is untrusted input: a symlink, a FIFO, a directory, garbage or a log from a future
ORE is one `LogError` line, and the file is never replaced or rewritten to make it fit.

What a turn's record runs imports SQLite's C module `_sqlite3` itself (CPython's and PyPy's
name for it since Python 2.5; typeshed types it): the `sqlite3` package is that module plus date
and time adapters the log never uses, 0.6 ms more of every logged turn (docs/log.md "Cost").
The classes are the same ones (`sqlite3.Error` is `_sqlite3.Error`), so code importing
`sqlite3` catches what this raises.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OreError
from ..paths import log_path

if TYPE_CHECKING:
    import sqlite3


__all__ = [
    "BUSY_SECONDS",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "LogError",
    "LogLocked",
    "connect",
    "failure",
    "transaction",
]

# -- the schema, as numbered migrations ----------------------------------------------------
# Migration N brings a log at version N-1 to N. A released migration is never edited; a change
# is a new one (and a fixture log of the previous version in tests/data/, which the tests read).

#: The version this ORE writes; it reads every version up to it.
SCHEMA_VERSION = 1

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        # AUTOINCREMENT: an id removed by 'ore log rm' is never given to another turn, so
        # 'log:ID' always means one turn or none.
        """CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            execution_id TEXT NOT NULL UNIQUE,
            time REAL NOT NULL,
            day TEXT NOT NULL,
            model TEXT NOT NULL,
            backend TEXT,
            session TEXT,
            duration REAL,
            tokens_in INTEGER,
            tokens_out INTEGER,
            finish_reason TEXT,
            relation TEXT NOT NULL,
            prompt TEXT NOT NULL
        )""",
        # The documents apart from the columns: listings, filters and usage scan small rows.
        """CREATE TABLE artifacts (
            id INTEGER PRIMARY KEY REFERENCES turns(id),
            document TEXT NOT NULL
        )""",
        "CREATE INDEX turns_by_time ON turns(time)",
        "CREATE INDEX turns_by_model ON turns(model, id)",
        "CREATE INDEX turns_by_session ON turns(session, id)",
        # `ore log usage` reads this index alone: the day (local time, as the turn's process saw
        # it), the model and the token counts.
        "CREATE INDEX turns_by_day ON turns(day, model, tokens_in, tokens_out)",
        "CREATE VIRTUAL TABLE turns_text USING fts5(prompt, answer, tokenize='unicode61')",
    ),
}


# -- opening ------------------------------------------------------------------------------

#: Seconds a writer waits for another process's write before giving up (one line, no turn lost
#: but this one's record).
BUSY_SECONDS = 10.0


class LogError(OreError):
    """The turn log cannot be read or written: the one line says why and what to do."""


class LogLocked(LogError):
    """The turn log stayed locked by another process for as long as it was waited for."""


def _os_words(exc: BaseException) -> str:
    """`ore._fs.os_error_words`, imported when a line is worded: a turn's record needs none."""
    from .._fs import os_error_words

    return os_error_words(exc)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _refuse(path: Path, what: str) -> LogError:
    return LogError(
        f"the turn log {path} is {what}, not ORE's log file; move it aside "
        "(a new log then starts) or turn the log off with 'ore log off'"
    )


def _check_file(path: Path, *, create: bool) -> bool:
    """Whether the log file exists as a regular file; created (0600) when missing and `create`.
    Anything else at the path (or at its -wal and -shm companions) is refused, never followed."""
    for companion in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            mode = os.lstat(companion).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise LogError(f"cannot read the turn log {path}: {_os_words(exc)}") from None
        if not stat.S_ISREG(mode):
            raise _refuse(companion, _kind(mode))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return False
        return _create(path)
    except OSError as exc:
        raise LogError(f"cannot read the turn log {path}: {_os_words(exc)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, _kind(st.st_mode))
    return True


def _keep_private(path: Path) -> None:
    """The log holds what turns sent (tool output too): never readable by others. Made so only
    once the file is known to be ORE's log (`_version`): a foreign file at the path, or a hard
    link to one, is refused with its mode as it was. Changed through the file itself, opened
    without following a symlink or waiting on a FIFO, so a path swapped meanwhile is left be."""
    with suppress(OSError):
        if not os.lstat(path).st_mode & 0o077:
            return  # as it should be: nothing opened, `ore._fs` not even imported
        from .._fs import open_regular

        fd = open_regular(path)  # no symlink followed, no FIFO waited on, a regular file
        try:
            st = os.fstat(fd)
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                os.fchmod(fd, 0o600)
        finally:
            os.close(fd)


def _create(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # O_EXCL never follows a symlink: one planted meanwhile fails here, it is not written.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    except FileExistsError:
        return _check_file(path, create=False)
    except OSError as exc:
        raise LogError(
            f"cannot create the turn log {path}: {_os_words(exc)}; "
            "free space or fix permissions, or turn the log off with 'ore log off'"
        ) from None
    return True


def connect(
    path: Path | None = None,
    *,
    create: bool = True,
    settle: bool = True,
    busy: float | None = None,
) -> sqlite3.Connection | None:
    """An open connection to the log at `path` (default `log_path()`), its schema current;
    None when there is no log and `create` is false. With `settle`, once the records of
    turns whose process has ended are all in (`ore.log.writers`): a writer passes False.
    `busy`: the seconds SQLite waits for another process's lock (default `BUSY_SECONDS`).

    :raises LogError: the path holds something else than a log, the file is not SQLite or is
        corrupt, it was written by a newer ORE, or it cannot be opened or written.
    """
    import _sqlite3 as sqlite3  # not the `sqlite3` package: the module's docstring says why

    path = log_path() if path is None else path
    if settle:
        from .writers import settle as wait_for_writers

        wait_for_writers(path, BUSY_SECONDS)
    if not _check_file(path, create=create):
        return None
    try:
        db = sqlite3.connect(
            str(path),
            timeout=BUSY_SECONDS if busy is None else busy,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise failure(path, exc) from None
    try:
        version = _version(db, path)  # a foreign or newer file is refused, never changed
        if version > SCHEMA_VERSION:
            raise _newer(path, version)
        _keep_private(path)
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        if mode != "wal":
            db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints, never corrupt
        db.execute("PRAGMA secure_delete=ON")  # rm and prune overwrite what they delete
        if version < SCHEMA_VERSION:
            _migrate(db, path)
    except LogError:
        db.close()
        raise
    except sqlite3.Error as exc:
        db.close()
        raise failure(path, exc) from None
    return db


def failure(path: Path, exc: BaseException) -> LogError:
    """The one line for a SQLite or OS error on the log at `path`."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        return LogLocked(
            f"the turn log {path} stayed locked by another process for {BUSY_SECONDS:.0f} s; "
            "try again when it is done"
        )
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return LogError(
            f"the turn log {path} is not a readable SQLite database ({text}); "
            "move it aside (a new log then starts)"
        )
    if "full" in text or "disk I/O" in text:
        return LogError(f"cannot write the turn log {path}: {text}; free some space")
    return LogError(f"cannot use the turn log {path}: {_os_words(exc)}")


def _version(db: sqlite3.Connection, path: Path) -> int:
    """The schema version the file holds: 0 for an empty file."""
    names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    if not names:
        return 0
    if "schema_version" not in names:
        raise LogError(
            f"{path} is a SQLite database but not ORE's turn log (no schema_version table); "
            "move it aside (a new log then starts)"
        )
    row = db.execute("SELECT max(version) FROM schema_version").fetchone()
    if row is None or not isinstance(row[0], int) or row[0] < 1:  # 1 is the first there is
        raise LogError(f"the turn log {path} has no valid schema version; move it aside")
    return int(row[0])


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring the schema to `SCHEMA_VERSION`, one migration at a time, each in the transaction
    that records it (so two processes opening a new log at once create it once)."""
    with transaction(db):
        version = _version(db, path)  # another process may have migrated meanwhile
        if version > SCHEMA_VERSION:
            raise _newer(path, version)
        for target in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[target]:
                db.execute(statement)
            db.execute("INSERT INTO schema_version(version) VALUES (?)", (target,))


def _newer(path: Path, version: int) -> LogError:
    return LogError(
        f"the turn log {path} was written by a newer ORE (schema version {version}; this ORE "
        f"reads up to {SCHEMA_VERSION}); upgrade ORE, or turn the log off with 'ore log off'"
    )


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT: the write lock is taken first (waiting up to the busy
    timeout), so two writers never deadlock upgrading a read lock; rolled back on error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
