"""Turns: a user message and the answers after it, counted from 1 (what `--at`, `--turns` and
`--history` count), and what a turn sends when the history no longer fits the context window."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..types import Message, Session, Usage

__all__ = ["last_turns", "overflow_hint", "split_turns", "turn_count", "turn_slice"]

#: Below this many characters sent, no context window is exceeded (2,048 tokens, ~4 a token).
_SMALLEST_WINDOW_CHARS = 8192


def split_turns(messages: Sequence[Message]) -> list[tuple[Message, ...]]:
    """The messages grouped by turn: each group starts with a user message (anything before the
    first one joins the first turn)."""
    turns: list[list[Message]] = []
    for m in messages:
        if m.role == "user" or not turns:
            turns.append([m])
        else:
            turns[-1].append(m)
    return [tuple(t) for t in turns]


def turn_count(messages: Sequence[Message]) -> int:
    """How many turns (user messages) `messages` holds."""
    return sum(1 for m in messages if m.role == "user")


def turn_slice(
    messages: Sequence[Message], first: int, last: int | None = None
) -> tuple[Message, ...]:
    """Turns `first` to `last` (1-based, inclusive; `last` None: to the end)."""
    turns = split_turns(messages)
    end = len(turns) if last is None else last
    return tuple(m for turn in turns[max(first, 1) - 1 : end] for m in turn)


def last_turns(session: Session, n: int | None) -> Session:
    """`session` holding only its last `n` turns (all of them when `n` is None or larger): what
    `--history N` sends. Same id, so saving the new turn appends to the whole session on disk."""
    if n is None:
        return session
    turns = split_turns(session.messages)
    if n >= len(turns):
        return session
    kept = tuple(m for turn in turns[len(turns) - n :] for m in turn) if n > 0 else ()
    return Session(messages=kept, id=session.id, created_at=session.created_at)


def overflow_hint(
    sent: Sequence[Message], history: Sequence[Message], usage: Usage | Mapping[str, Any]
) -> int | None:
    """When the server read far fewer prompt tokens than were sent, it cut the history to fit
    its context window (Ollama does, silently): how many latest turns would fit. Else None.

    "Far fewer" is under one token per 8 characters, when at least 8,192 characters were sent;
    text runs about 4 characters a token, so an answer this says was cut was cut.

    :param usage: the response's `usage` (or the `metadata` it is read from).
    """
    if not isinstance(usage, Usage):
        usage = Usage.from_metadata(usage)
    tokens = usage.tokens_in
    if not history or tokens is None or tokens <= 0:
        return None
    chars = sum(len(m.content) for m in sent)
    if chars < _SMALLEST_WINDOW_CHARS or tokens * 8 >= chars:
        return None
    budget = tokens * 4 - (chars - sum(len(m.content) for m in history))
    fits = 0
    for turn in reversed(split_turns(history)):
        budget -= sum(len(m.content) for m in turn)
        if budget < 0:
            break
        fits += 1
    return fits
