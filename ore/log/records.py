"""What the log keeps of a turn: its execution artifact (the `ore.exec.v3` document
`--artifact-out` writes, so any logged turn replays exactly) and the indexed columns a listing
shows, each read from that document. Recording is one short write transaction; it takes the
document as the turn made it (`ore.turn.document_of`) and defines no class, so that a turn
pays only for the write (the rows read back are `ore.log.rows`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import OreError
from ..paths import log_path
from ..types import Usage
from .db import LogError, written

if TYPE_CHECKING:
    import sqlite3

    from ..artifacts import ExecutionArtifact

__all__ = ["EXCERPT_CHARS", "excerpt", "record"]

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
    (the same execution id) is kept once. `until_exit`: see `ore.log.db.close_written`.

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
