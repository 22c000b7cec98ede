"""Writing a turn to the log: what is kept of it, its execution artifact (the `ore.exec.v3`
document `--artifact-out` writes, so any logged turn replays exactly) and the indexed columns a
listing shows, each read from that document (`record`); the one write transaction, the lock
waited for in slices (`written`); and how the writer's connection ends, leaving the turn in the
write-ahead log (`close_written`). It takes the document as the turn made it
(`ore.turn.document_of`) and defines no class, so that a turn pays only for the write (the rows
read back are `ore.log.rows`; opening the file and the schema are `ore.log.db`'s)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import OreError
from ..paths import log_path
from ..types import Usage
from .db import BUSY_SECONDS, LogError, LogLocked, connect, failure, transaction

if TYPE_CHECKING:
    import sqlite3

    from ..artifacts import ExecutionArtifact

__all__ = [
    "BUSY_SLICE_SECONDS",
    "EXCERPT_CHARS",
    "WAL_LIMIT_BYTES",
    "close_written",
    "excerpt",
    "record",
    "written",
]

_T = TypeVar("_T")

#: A record waits for the log's lock in slices this long (`written`): SQLite's own wait defers
#: Python's signal handlers, which run between the slices.
BUSY_SLICE_SECONDS = 0.1
#: How large the write-ahead log may grow before a turn's record lets its close checkpoint it
#: (`close_written`): every process that opens the log reads the whole write-ahead log again
#: (SQLite rebuilds its index when no other process holds it), so a few turns' worth is kept.
WAL_LIMIT_BYTES = 1 << 20
#: Characters of the prompt kept in the `prompt` column (the artifact keeps it whole).
EXCERPT_CHARS = 200


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis says it was cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def record(
    turn: Mapping[str, Any] | ExecutionArtifact,
    *,
    session: str | None = None,
    seconds: float | None = None,
    path: Path | None = None,
    until_exit: Callable[[object], bool] | None = None,
) -> int:
    """Keep one completed turn in the log: its `ore.exec.v3` document (`ore.turn.document_of`,
    `turn_document`), or an artifact, written as that document. Its id; a turn already logged
    (the same execution id) is kept once. `until_exit`: see `close_written`.

    :raises LogError: the log cannot be written (one line; the turn itself is unaffected).
    """
    where = log_path() if path is None else path
    try:
        if isinstance(turn, Mapping):
            data = turn
        else:
            from ..artifacts import V3

            data = turn.to_dict(V3)
        document = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (ValueError, OreError) as exc:
        raise LogError(f"the turn cannot be logged: {exc}") from None
    inputs, output = data["input"], data["output"]
    usage = Usage.from_metadata(output["metadata"])  # as the logged document reads back
    row = (
        data["execution_id"],
        data["timestamp"],
        time.strftime("%Y-%m-%d", time.localtime(data["timestamp"])),
        inputs["model_id"],
        data["backend"]["name"],
        session,
        seconds,
        usage.tokens_in,
        usage.tokens_out,
        usage.finish_reason,
        data["lineage"]["relation"],
        excerpt(inputs["prompt"]),
    )

    def write(db: sqlite3.Connection) -> int:
        cursor = db.execute(
            "INSERT INTO turns (execution_id, time, day, model, backend, session, duration, "
            "tokens_in, tokens_out, finish_reason, relation, prompt) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(execution_id) DO NOTHING",
            row,
        )
        if cursor.rowcount != 1:  # logged already
            found = db.execute(
                "SELECT id FROM turns WHERE execution_id = ?", (data["execution_id"],)
            ).fetchone()
            return int(found[0])
        number = int(cursor.lastrowid or 0)
        db.execute("INSERT INTO artifacts (id, document) VALUES (?, ?)", (number, document))
        db.execute(
            "INSERT INTO turns_text (rowid, prompt, answer) VALUES (?, ?, ?)",
            (number, inputs["prompt"], output["content"]),
        )
        return number

    return written(where, write, until_exit=until_exit)


def written(
    path: Path,
    write: Callable[[sqlite3.Connection], _T],
    *,
    until_exit: Callable[[object], bool] | None = None,
) -> _T:
    """`write(db)` in one write transaction on the log at `path`, its connection then closed as
    `close_written` says. A log locked by another process is waited for up to `BUSY_SECONDS`
    in slices of `BUSY_SLICE_SECONDS`, between which Python runs the handlers of the signals
    that came meanwhile (Ctrl-C, SIGTERM, SIGHUP: SQLite's own wait defers them), so a turn's
    record needs no thread of its own to stay interruptible (about 0.5 ms of a turn, docs/log.md
    "Cost").

    :raises LogError: the log cannot be opened or written (`LogLocked`: still locked when the
        wait was over).
    """
    import _sqlite3 as sqlite3  # not the `sqlite3` package: ore.log.db's docstring says why

    deadline = time.monotonic() + BUSY_SECONDS
    while True:
        try:
            db = connect(path, settle=False, busy=BUSY_SLICE_SECONDS)
            assert db is not None  # created when missing
            try:
                with transaction(db):
                    done = write(db)
            except sqlite3.Error as exc:
                db.close()
                raise failure(path, exc) from None
            except BaseException:
                db.close()
                raise
        except LogLocked:
            if time.monotonic() < deadline:
                time.sleep(0.005)  # were SQLite ever to give up without waiting its slice
                continue  # the signals that came meanwhile have been handled by now
            raise failure(path, sqlite3.OperationalError("database is locked")) from None
        close_written(db, path, until_exit=until_exit)
        return done


def close_written(
    db: sqlite3.Connection, path: Path, *, until_exit: Callable[[object], bool] | None = None
) -> None:
    """Close a connection that has just written a turn, leaving the turn in the write-ahead log
    rather than checkpointing it into the database.

    Why: SQLite checkpoints a WAL database when its last connection closes, and the next writer
    then restarts the log; with `synchronous=NORMAL` that is four fsyncs a turn (the log's
    header and its folder at the restart, the log and the database at the checkpoint), most of
    what logging cost a turn (8-20 ms on a shared disk, issue 23). A connection that is not
    the last one does not checkpoint, and a read-only one never does: so a read-only
    connection is opened before the writer closes and closed after it. (Python 3.12's
    `setconfig(SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE)` says the same; ORE runs on 3.11.) Once the
    write-ahead log holds `WAL_LIMIT_BYTES` (about 16 turns), the writer closes as any
    connection does, and the last one to close checkpoints it and removes it: kept longer, it
    would cost more than the fsyncs saved, since each process that opens the log reads it all
    again (SQLite rebuilds its index, and then forgets what was checkpointed, so its own
    automatic checkpoint would copy the whole log at every commit). A reader that closes
    last (`ore log list`, ...) checkpoints it too.

    Safety is WAL's: a process killed mid-write leaves its transaction whole or absent; a power
    cut may lose the turns the kernel had not yet written back (by default those of the last
    30 s or so; before, a turn was on disk when its process ended), never the file, since every
    checkpoint still syncs the log before copying it into the database and the database before
    the log is reused. If the read-only connection cannot be had, the writer closes as before.

    With `until_exit` (the `ore` program's one-shot turn, `ore.cli.ending.until_exit`), the
    connection is handed to it instead when it says the process will drop it by exiting: a
    process that exits holding it never checkpoints, so no read-only connection is needed
    either (about 0.3 ms of a turn, docs/log.md "Cost").
    """
    import _sqlite3 as sqlite3  # not the `sqlite3` package: ore.log.db's docstring says why

    try:
        grown = os.stat(f"{path}-wal").st_size >= WAL_LIMIT_BYTES
    except OSError:
        grown = False
    if grown:
        db.close()  # the last one checkpoints and removes the log; else a later one will
        return
    if until_exit is not None and until_exit(db):
        return
    try:
        reader = sqlite3.connect(_read_only(path), uri=True, isolation_level=None)
    except sqlite3.Error:
        db.close()  # the last one: it checkpoints, as before
        return
    try:
        reader.execute("PRAGMA user_version").fetchone()  # its shared lock, no schema read
    except sqlite3.Error:
        pass  # then the writer may be the last, and checkpoints: slower, never unsafe
    finally:
        db.close()
        reader.close()


def _read_only(path: Path) -> str:
    """A SQLite URI opening `path` read-only: `%`, `?` and `#` escaped, absolute (so a folder
    named `//x` is not taken for a host)."""
    text = os.path.abspath(path).replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file://{text}?mode=ro"
