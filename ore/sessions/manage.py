"""Managing saved sessions: fork, remove, rename. Every write is the store's (atomic, under each
session's lock); the listing cache follows."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..store import FileSessionStore, validate_name
from ..types import Session
from .finding import load, missing
from .listing import change_index, index_entries, record_model
from .turns import split_turns

__all__ = ["fork", "remove", "rename"]


def fork(store: FileSessionStore, name: str, new: str, at: int | None = None) -> Session:
    """Save the first `at` turns of session `name` (all by default) as the new session `new`.

    The original is only read. Messages keep their ids and timestamps; the fork gets a new id.
    :raises ValueError: if `at` is not between 1 and the number of turns.
    """
    validate_name(new)
    session = load(store, name)
    turns = split_turns(session.messages)
    if at is not None and not 1 <= at <= len(turns):
        raise ValueError(f"session '{name}' has {len(turns)} turns")
    kept = turns if at is None else turns[:at]
    forked = store.create(new, Session(messages=tuple(m for t in kept for m in t)))
    model = index_entries(store.read_index()).get(name, {}).get("model")
    if model is not None:
        record_model(store, new, model)
    return forked


def remove(store: FileSessionStore, names: Iterable[str]) -> list[str]:
    """Remove the named sessions. All are checked first (a bad name, a missing or a corrupt
    session is reported and nothing is removed); then each file goes on its own, under its lock."""
    names = list(dict.fromkeys(names))
    for name in names:
        load(store, name)
    for name in names:
        store.delete(name)

    def change(entries: dict[str, dict[str, Any]]) -> None:
        for name in names:
            entries.pop(name, None)

    change_index(store, change)
    return names


def rename(store: FileSessionStore, old: str, new: str) -> None:
    """Rename session `old` to `new` atomically; `new` must be free, `old` readable."""
    validate_name(new)
    if not os.path.lexists(store.path(old)):
        raise missing(store, old)
    store.rename(old, new)

    def change(entries: dict[str, dict[str, Any]]) -> None:
        entry = entries.pop(old, None)
        if entry is not None:
            entries[new] = {"model": entry.get("model")}

    change_index(store, change)
