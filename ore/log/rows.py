"""A logged turn as read back from the file (`LoggedTurn`): the columns a listing shows, each
checked, since the file is untrusted input."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from .._frozen import contract
from .db import LogError

if TYPE_CHECKING:
    import sqlite3

__all__ = ["COLUMNS", "LoggedTurn", "unreadable"]

#: The indexed columns, in `LoggedTurn`'s order.
COLUMNS = (
    "id, time, model, backend, session, duration, tokens_in, tokens_out, finish_reason, "
    "relation, prompt"
)


@contract
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
                _count(tin),
                _count(tout),
                _text(finish),
                str(relation),
                str(text),
            )
        except (TypeError, ValueError, OverflowError):
            raise unreadable(row[0]) from None

    def to_dict(self) -> dict[str, Any]:
        return {each.name: getattr(self, each.name) for each in fields(self)}


def unreadable(ident: object) -> LogError:
    """The one line for a row of the wrong shape (an edited file), whichever reader met it."""
    return LogError(
        f"the turn log holds a row it cannot read (turn {str(ident)[:20]!r}): was the "
        "file edited? 'ore log rm ID' removes it"
    )


#: Timestamps beyond this (the year 5138) are not a time a turn was logged.
_LATEST = 1e11


def _count(value: object) -> int | None:
    """A token count as SQLite keeps one: an integer or nothing (2.5 or "12" is an edit)."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError(value)


def _text(value: object) -> str | None:
    return None if value is None else str(value)
