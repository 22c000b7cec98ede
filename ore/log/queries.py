"""Reading and pruning the turn log: listings newest first, one turn by id (or -1 for the
latest), full-text search, usage per model per day, removal that really deletes, export.

Every function opens the log, does its one job and closes it; a missing log reads as empty."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._frozen import contract
from ..paths import log_path
from .db import LogError, connect, failure, transaction
from .rows import COLUMNS, LoggedTurn, unreadable

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact
    from ..types import Session

__all__ = [
    "Usage",
    "export",
    "export_rows",
    "find",
    "latest",
    "list_turns",
    "load_artifact",
    "prune",
    "remove",
    "search",
    "seed_session",
    "usage",
]


@contract
class Usage:
    """Turns and tokens of one model on one day (local time)."""

    day: str
    model: str
    turns: int
    tokens_in: int
    tokens_out: int

    def to_dict(self) -> dict[str, Any]:
        return {each.name: getattr(self, each.name) for each in fields(self)}


#: SQLite's largest integer: a larger id or count given by the user is none or all.
_LARGEST = 2**63 - 1


def _rows(path: Path | None, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    import sqlite3

    where = log_path() if path is None else path
    db = connect(where, create=False)
    if db is None:
        return []
    try:
        return db.execute(sql, params).fetchall()
    except sqlite3.Error as exc:
        raise failure(where, exc) from None
    finally:
        db.close()


def list_turns(
    n: int = 20,
    *,
    model: str | None = None,
    since: float | None = None,
    session: str | None = None,
    path: Path | None = None,
) -> list[LoggedTurn]:
    """The last `n` logged turns, newest first, of `model`, since `since`, in `session`."""
    where, params = _filters(model=model, since=since, session=session)
    sql = f"SELECT {COLUMNS} FROM turns{where} ORDER BY id DESC LIMIT ?"
    return [LoggedTurn.of(r) for r in _rows(path, sql, (*params, min(n, _LARGEST)))]


def _filters(**given: Any) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for name, value in given.items():
        if value is None:
            continue
        if name == "since":
            clauses.append("time >= ?")
        elif name == "model" and ":" not in value:  # llama3.2 means every tag of it
            clauses.append("(model = ? OR substr(model, 1, ?) = ?)")
            params += [value, len(value) + 1]
            value = f"{value}:"
        else:
            clauses.append(f"{name} = ?")
        params.append(value)
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


def _by_ref(ref: int) -> tuple[str, tuple[int, ...]]:
    """SQL tail picking turn `ref`: an id, or -N for the Nth newest."""
    if ref < 0:
        return " ORDER BY id DESC LIMIT 1 OFFSET ?", (-ref - 1,)
    return " WHERE id = ?", (ref,)


def _missing(ref: int) -> LogError:
    if ref < 0:
        return LogError(
            "the turn log holds no such turn: it is empty or shorter; 'ore log list' shows it"
        )
    return LogError(f"the turn log holds no turn {ref}; 'ore log list' shows the ids")


def _turn(ref: int, path: Path | None) -> tuple[LoggedTurn, str] | None:
    if abs(ref) > _LARGEST:  # no such id, and SQLite could not even take the number
        return None
    tail, params = _by_ref(ref)
    rows = _rows(
        path,
        f"SELECT {COLUMNS}, (SELECT document FROM artifacts AS a WHERE a.id = turns.id) "
        f"FROM turns{tail}",
        params,
    )
    if not rows:
        return None
    *columns, document = rows[0]
    turn = LoggedTurn.of(tuple(columns))
    if not isinstance(document, str):
        raise LogError(f"turn {turn.id} has no artifact in the log (was the file edited?)")
    return turn, document


def find(ref: int, *, path: Path | None = None) -> tuple[LoggedTurn, str]:
    """Turn `ref` (an id, or -1 for the latest, -2 the one before, ...) and its artifact JSON.

    :raises LogError: no such turn.
    """
    found = _turn(ref, path)
    if found is None:
        raise _missing(ref)
    return found


def load_artifact(ref: int, *, path: Path | None = None) -> ExecutionArtifact:
    """Turn `ref`'s artifact, read as untrusted data (the file may have been edited)."""
    from ..artifacts import parse_artifact

    turn, document = find(ref, path=path)
    return parse_artifact(document.encode("utf-8"), source=f"log:{turn.id}")


def latest(*, path: Path | None = None) -> tuple[LoggedTurn, str] | None:
    """The newest logged turn and its artifact JSON; None for an empty or missing log."""
    return _turn(-1, path)


_WORD = re.compile(r"\w+", re.UNICODE)
#: A search ranks at most this many matches, the newest: a word in more turns (a very common
#: one) is ranked among its newest RANKED, so that a search stays fast however large the log.
RANKED = 5000


def fts_query(text: str) -> str | None:
    """`text` as an FTS5 query every word of which must match (each word quoted, so FTS5's own
    syntax in the text is plain text); None when it has no word."""
    words = _WORD.findall(text)
    return " ".join(f'"{w}"' for w in words) if words else None


def search(text: str, n: int = 20, *, path: Path | None = None) -> list[LoggedTurn]:
    """Turns whose prompt or answer holds every word of `text`, best match first (FTS5's
    bm25 rank, among the newest `RANKED` matches), newest first among equals."""
    query = fts_query(text)
    if query is None:
        return []
    cols = ", ".join(f"t.{c.strip()}" for c in COLUMNS.split(","))
    # The newest RANKED matches are ranked (bm25 is computed only for the rows read), cut to
    # the n best inside the text index, and only those joined to their columns.
    sql = (
        f"SELECT {cols} FROM (SELECT hit, score FROM (SELECT rowid AS hit, rank AS score "
        "FROM turns_text WHERE turns_text MATCH ? ORDER BY rowid DESC LIMIT ?) "
        "ORDER BY score, hit DESC LIMIT ?) "
        "JOIN turns AS t ON t.id = hit ORDER BY score, t.id DESC"
    )
    return [LoggedTurn.of(r) for r in _rows(path, sql, (query, RANKED, min(n, _LARGEST)))]


def usage(*, since: float | None = None, path: Path | None = None) -> list[Usage]:
    """Turns and tokens per model per day (local time), the newest day first."""
    where, params = _filters(since=since)
    # The first row of each group whose columns are of the wrong type (an edited file) is
    # found in the same pass: refused as every other reader refuses it, never summed.
    sql = (
        "SELECT day, model, count(*), coalesce(sum(tokens_in), 0), "
        "coalesce(sum(tokens_out), 0), min(CASE WHEN typeof(day) = 'text' "
        "AND typeof(model) = 'text' AND typeof(tokens_in) IN ('integer', 'null') "
        f"AND typeof(tokens_out) IN ('integer', 'null') THEN NULL ELSE id END) FROM turns{where} "
        "GROUP BY day, model ORDER BY day DESC, model"
    )
    rows = _rows(path, sql, params)
    for row in rows:
        if row[5] is not None:
            raise unreadable(row[5])
    return [Usage(*row[:5]) for row in rows]


def _delete(where_sql: str, params: Sequence[Any], path: Path | None, *, vacuum: bool) -> int:
    """Delete the turns `where_sql` picks, their text index entries too, so that nothing of them
    stays readable in the file: secure_delete zeroes freed pages, the text index is merged
    (dropping the deleted entries), and the WAL is checkpointed and truncated; `vacuum` also
    rewrites the whole file.

    All or nothing, as far as SQLite allows: the WAL (which holds the newest turns' text) is
    checkpointed and truncated first, so a full disk or a busy log stops the deletion before
    it starts ("nothing is deleted"); once the deletion is committed, a checkpoint that fails
    leaves the text only in the database's pages, and the line says that too."""
    import sqlite3

    where = log_path() if path is None else path
    db = connect(where, create=False)
    if db is None:
        return 0
    try:
        try:
            ids = [r[0] for r in db.execute(f"SELECT id FROM turns WHERE {where_sql}", params)]
            if not ids:
                return 0
            _truncate_wal(db, where)
            with transaction(db):
                gone = [(i,) for i in ids]
                db.executemany("DELETE FROM turns_text WHERE rowid = ?", gone)
                db.executemany("DELETE FROM artifacts WHERE id = ?", gone)
                db.executemany("DELETE FROM turns WHERE id = ?", gone)
                db.execute("INSERT INTO turns_text(turns_text) VALUES ('optimize')")
        except (sqlite3.Error, LogError) as exc:
            told = exc if isinstance(exc, LogError) else failure(where, exc)
            raise LogError(f"nothing is deleted: {told.message}") from None
        try:
            if vacuum:
                db.execute("VACUUM")
            _truncate_wal(db, where)
        except (sqlite3.Error, LogError) as exc:
            told = exc if isinstance(exc, LogError) else failure(where, exc)
            raise LogError(
                f"{len(ids)} turn(s) are deleted from the log, but their text may remain in "
                f"{where.name}'s free pages until it is checkpointed: {told.message}; then any "
                "'ore log' command finishes it"
            ) from None
        return len(ids)
    finally:
        db.close()


def _truncate_wal(db: Any, where: Path) -> None:
    """Checkpoint the whole write-ahead log into the database and truncate it; `LogError` when
    a reader kept part of it (SQLite says so in the result, not by raising)."""
    busy, _frames, _copied = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise LogError(f"the turn log {where} is being read by another process; try again")


def remove(refs: Sequence[int], *, path: Path | None = None) -> list[int]:
    """Delete turns by id (or -N); the ids deleted. `LogError` for one not in the log (nothing
    is deleted then)."""
    ids = list(dict.fromkeys(_id_of(ref, path) for ref in refs))  # each id once
    marks = ", ".join("?" for _ in ids)
    _delete(f"id IN ({marks})", ids, path, vacuum=False)
    return ids


def _id_of(ref: int, path: Path | None) -> int:
    """Turn `ref`'s id, its row unread: a row edited past reading can still be removed."""
    if abs(ref) > _LARGEST:
        raise _missing(ref)
    tail, params = _by_ref(ref)
    rows = _rows(path, f"SELECT id FROM turns{tail}", params)
    if not rows or not isinstance(rows[0][0], int):
        raise _missing(ref)
    return int(rows[0][0])


def prune(before: float, *, path: Path | None = None) -> int:
    """Delete every turn logged before `before` (Unix seconds) and rewrite the file (VACUUM);
    how many were deleted."""
    return _delete("time < ?", (before,), path, vacuum=True)


def export(*, path: Path | None = None, batch: int = 500) -> Iterator[str]:
    """Every logged artifact's JSON, oldest first, one string each (JSON Lines)."""
    for _number, document in export_rows(path=path, batch=batch):
        yield document


def export_rows(*, path: Path | None = None, batch: int = 500) -> Iterator[tuple[int, str]]:
    """Every logged turn's id and artifact JSON, oldest first (the JSON as stored: the file
    may have been edited, so a reader checks it)."""
    last = 0
    while True:
        rows = _rows(
            path,
            "SELECT id, document FROM artifacts WHERE id > ? ORDER BY id LIMIT ?",
            (last, batch),
        )
        if not rows:
            return
        for number, document in rows:
            yield int(number), str(document)
        last = int(rows[-1][0])


def seed_session(artifact: ExecutionArtifact) -> Session:
    """The conversation a logged one-shot turn was: what it sent before the prompt (a REPL's
    history), the prompt and the answer, without the system message and the turn's context
    blocks, as a session to go on from (`--continue`)."""
    from ..types import Message, Session

    sent = artifact.messages or ()
    history = tuple(m for m in sent[:-1] if m.role != "system")
    answer = artifact.output
    return Session(
        messages=(
            *history,
            Message(role="user", content=artifact.prompt),
            Message(role="assistant", content=answer.content, timestamp=answer.timestamp),
        )
    )
