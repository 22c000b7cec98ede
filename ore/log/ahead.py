"""The log opened while the model answers.

A turn whose record is written in its own process (its stderr is not a terminal, or a REPL's
turn) opens the log in a thread of its own as the turn starts (`Ahead`), and `record` takes
that connection. Loading SQLite and opening the file (the schema read, the write-ahead log's
index mapped) then overlap the turn instead of following its answer: most of it runs in
SQLite's C code, outside Python's lock, on another core. Opening takes no lock on the log
(SQLite's reads in WAL mode wait for no writer), so a turn that fails has only an unused
connection to close. Nothing here is imported until a turn asks: only `threading`.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _sqlite3 import Connection

__all__ = ["Ahead"]


class Ahead:
    """The log at `path` (default `log_path()`) being opened in a thread: `take` waits for it
    and gives the connection, or raises what opening raised (`LogError`)."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._db: Connection | None = None
        self._failed: Exception | None = None
        self._thread = threading.Thread(target=self._open, name="ore-log-open", daemon=True)
        self._thread.start()

    def _open(self) -> None:
        try:
            from .db import connect, log_path

            if self._path is None:
                self._path = log_path()
            self._db = connect(self._path, settle=False)  # a writer waits for no other record
        except Exception as exc:  # told when the record is written, as a failed write is
            self._failed = exc

    def take(self) -> Connection:
        """The open connection, now the caller's to close (`close_written`).

        :raises LogError: the log could not be opened (one line, as `connect` says it).
        """
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        db, self._db = self._db, None
        assert db is not None
        return db

    def close(self) -> None:
        """Close the connection if no record took it (the turn failed), as a writer closes:
        no checkpoint. Still opening (a new log waiting behind another writer): left to the
        process's end, which closes it as a killed writer's is."""
        if self._thread.is_alive() or self._db is None or self._path is None:
            return
        from .db import close_written

        db, self._db = self._db, None
        close_written(db, self._path)
