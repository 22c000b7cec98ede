"""What the log keeps of a turn: its execution artifact (the `ore.exec.v3` document
`--artifact-out` writes, so any logged turn replays exactly) and the indexed columns a listing
shows (`LoggedTurn`). Recording is one short write transaction."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import OreError
from .db import LogError, connect, failure, log_path, transaction

if TYPE_CHECKING:
    import sqlite3

    from ..artifacts import ExecutionArtifact

__all__ = ["COLUMNS", "EXCERPT_CHARS", "LoggedTurn", "excerpt", "record"]

#: Characters of the prompt kept in the `prompt` column (the artifact keeps it whole).
EXCERPT_CHARS = 200

#: The indexed columns, in `LoggedTurn`'s order.
COLUMNS = (
    "id, time, model, backend, session, duration, tokens_in, tokens_out, finish_reason, "
    "relation, prompt"
)


@dataclass(frozen=True, slots=True)
class LoggedTurn:
    """One logged turn as a listing shows it.

    :param id: the log's number for it (`ore log show ID`, `--artifact-in log:ID`).
    :param time: when it was recorded, Unix seconds.
    :param model: the model asked; `backend` the server kind that answered.
    :param session: the saved session it was appended to, None for a one-shot.
    :param duration: the model call's wall time, seconds.
    :param relation: "root", or "replay" / "chain" for a turn made from an artifact.
    :param prompt: the prompt's first `EXCERPT_CHARS` characters, on one line.
    """

    id: int
    time: float
    model: str
    backend: str | None
    session: str | None
    duration: float | None
    tokens_in: int | None
    tokens_out: int | None
    finish_reason: str | None
    relation: str
    prompt: str

    @classmethod
    def of(cls, row: sqlite3.Row | tuple[Any, ...]) -> LoggedTurn:
        """A row as read from the file, which is untrusted: a value of the wrong type (an
        edited file) is one `LogError`, never a traceback later."""
        try:
            number, when, model, backend, session, duration, tin, tout, finish, relation, text = row
            moment = float(when)
            if not math.isfinite(moment) or abs(moment) > _LATEST:
                raise ValueError(when)
            return cls(
                int(number),
                moment,
                str(model),
                _text(backend),
                _text(session),
                None if duration is None else float(duration),
                None if tin is None else int(tin),
                None if tout is None else int(tout),
                _text(finish),
                str(relation),
                str(text),
            )
        except (TypeError, ValueError, OverflowError):
            raise LogError(
                f"the turn log holds a row it cannot read (turn {str(row[0])[:20]!r}): was the "
                "file edited? 'ore log rm ID' removes it"
            ) from None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


#: Timestamps beyond this (the year 5138) are not a time a turn was logged.
_LATEST = 1e11


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """`text` on one line, at most `limit` characters (an ellipsis says it was cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "\u2026"


def record(
    artifact: ExecutionArtifact,
    *,
    session: str | None = None,
    seconds: float | None = None,
    path: Path | None = None,
) -> int:
    """Keep one completed turn in the log; its id. A turn already logged (the same execution
    id) is kept once.

    :raises LogError: the log cannot be written (one line; the turn itself is unaffected).
    """
    import sqlite3

    from ..artifacts import V3

    where = log_path() if path is None else path
    output = artifact.output
    usage = output.usage
    try:
        document = json.dumps(
            artifact.to_dict(V3), ensure_ascii=False, allow_nan=False, separators=(",", ":")
        )
    except (ValueError, OreError) as exc:
        raise LogError(f"the turn cannot be logged: {exc}") from None
    backend = artifact.backend.name if artifact.backend is not None else None
    row = (
        artifact.execution_id,
        artifact.timestamp,
        time.strftime("%Y-%m-%d", time.localtime(artifact.timestamp)),
        artifact.model_id,
        backend,
        session,
        seconds,
        usage.tokens_in,
        usage.tokens_out,
        usage.finish_reason,
        artifact.relation,
        excerpt(artifact.prompt),
    )
    db = connect(where)
    assert db is not None
    try:
        with transaction(db):
            cursor = db.execute(
                "INSERT INTO turns (execution_id, time, day, model, backend, session, duration, "
                "tokens_in, tokens_out, finish_reason, relation, prompt) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(execution_id) DO NOTHING",
                row,
            )
            if cursor.rowcount == 1:
                number = int(cursor.lastrowid or 0)
                db.execute("INSERT INTO artifacts (id, document) VALUES (?, ?)", (number, document))
                db.execute(
                    "INSERT INTO turns_text (rowid, prompt, answer) VALUES (?, ?, ?)",
                    (number, artifact.prompt, output.content),
                )
            else:
                found = db.execute(
                    "SELECT id FROM turns WHERE execution_id = ?", (artifact.execution_id,)
                ).fetchone()
                number = int(found[0])
        return number
    except sqlite3.Error as exc:
        raise failure(where, exc) from None
    finally:
        db.close()
