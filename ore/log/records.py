"""What the log keeps of a turn: its execution artifact (the `ore.exec.v3` document
`--artifact-out` writes, so any logged turn replays exactly) and the indexed columns a listing
shows. Recording is one short write transaction; it defines no class, so that a turn pays only
for the write (the rows read back are `ore.log.rows`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import OreError
from .db import LogError, close_written, connect, failure, log_path, transaction

if TYPE_CHECKING:
    from ..artifacts import ExecutionArtifact

__all__ = ["EXCERPT_CHARS", "excerpt", "record"]

#: Characters of the prompt kept in the `prompt` column (the artifact keeps it whole).
EXCERPT_CHARS = 200


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
    import _sqlite3 as sqlite3  # not the `sqlite3` package: ore.log.db's docstring says why

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
    db = connect(where, settle=False)
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
        close_written(db, where)
