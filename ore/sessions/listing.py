"""`ore session list`: every saved session with its turns, first prompt and the model last used.

Listing stays fast with many or large sessions through a small cache, `sessions/.index.json`:
per session, a summary keyed by the file's size, modification time and inode, and the model
last used (recorded after each saved turn; session files keep upstream's format, so the model
lives only here). A summary whose key no longer matches the file is rebuilt from the file; a
missing, corrupt or hostile cache is ignored and rebuilt, never trusted for anything but what it
can be checked against.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..store import FileSessionStore, validate_name
from ..types import Session
from .turns import turn_count

__all__ = [
    "SessionSummary",
    "change_index",
    "index_entries",
    "list_sessions",
    "record_model",
    "when",
]

_INDEX_VERSION = 1
_FIRST_PROMPT_CHARS = 72


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One saved session as `ore session list` shows it; `problem` says why it is unreadable
    (and then only name, path and modified are known). `modified` is the last write (Unix s)."""

    name: str
    path: Path
    modified: float
    turns: int | None = None
    messages: int | None = None
    first_prompt: str | None = None
    model: str | None = None
    id: str | None = None
    created_at: float | None = None
    problem: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "last_used": self.modified}
        if self.problem is not None:
            return data | {"path": str(self.path), "problem": self.problem}
        return data | {
            "turns": self.turns,
            "messages": self.messages,
            "model": self.model,
            "first_prompt": self.first_prompt,
            "id": self.id,
            "created_at": self.created_at,
            "path": str(self.path),
        }


def _one_line(text: str, limit: int = _FIRST_PROMPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _summary_fields(session: Session) -> dict[str, Any]:
    first = next((m.content for m in session.messages if m.role == "user"), "")
    return {
        "turns": turn_count(session.messages),
        "messages": len(session.messages),
        "first_prompt": _one_line(first),
        "id": session.id,
        "created_at": session.created_at,
    }


_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "turns": (int,),
    "messages": (int,),
    "first_prompt": (str,),
    "id": (str,),
    "created_at": (int, float),
}


def _checked_entry(value: Any) -> dict[str, Any] | None:
    """One cache entry, if it has the shape ORE writes; anything else is no entry at all."""
    if not isinstance(value, dict):
        return None
    entry: dict[str, Any] = {}
    model = value.get("model")
    entry["model"] = model if isinstance(model, str) and len(model) <= 200 else None
    key = value.get("key")
    if isinstance(key, list) and len(key) == 3 and all(type(k) is int for k in key):
        summary, problem = value.get("summary"), value.get("problem")
        if isinstance(problem, str):
            entry |= {"key": key, "problem": problem}
        elif isinstance(summary, dict) and all(
            isinstance(summary.get(f), types) and not isinstance(summary.get(f), bool)
            for f, types in _FIELD_TYPES.items()
        ):
            entry |= {"key": key, "summary": {f: summary[f] for f in _FIELD_TYPES}}
    return entry


def index_entries(raw: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(raw, dict) or raw.get("version") != _INDEX_VERSION:
        return {}
    sessions = raw.get("sessions")
    if not isinstance(sessions, dict):
        return {}
    checked = {}
    for name, value in sessions.items():
        entry = _checked_entry(value)
        if entry is not None and isinstance(name, str):
            with suppress(StoreError):
                checked[validate_name(name)] = entry
    return checked


def change_index(
    store: FileSessionStore, change: Callable[[dict[str, dict[str, Any]]], None]
) -> None:
    """Apply `change` to the cache's entries and write it back; a cache that cannot be written
    is not worth failing anything for (listing rebuilds it)."""

    def rewrite(raw: Any) -> dict[str, Any]:
        entries = index_entries(raw)
        change(entries)
        return {"version": _INDEX_VERSION, "sessions": entries}

    with suppress(StoreError, OSError):
        store.update_index(rewrite)


def record_model(store: FileSessionStore, name: str, model: str) -> None:
    """Remember `model` as the one session `name` used last (shown by `ore session list`)."""

    def change(entries: dict[str, dict[str, Any]]) -> None:
        entries.setdefault(name, {})["model"] = model

    change_index(store, change)


def _summarise(
    store: FileSessionStore, name: str, path: Path, st: os.stat_result, model: str | None
) -> tuple[SessionSummary, dict[str, Any] | None]:
    """Read one session whole; the summary, and the cache entry when the file held still."""
    modified, key = store.modified(name, st)
    try:
        session = store.load(name)
    except StoreError as exc:
        summary = SessionSummary(name, path, modified, problem=exc.message)
        entry: dict[str, Any] = {"problem": exc.message}
    else:
        fields = _summary_fields(session)
        summary = SessionSummary(name, path, modified, model=model, **fields)
        entry = {"summary": fields}
    try:
        still = store.modified(name, os.stat(path))[1] == key
    except OSError:
        still = False
    return summary, ({"key": key, **entry} if still else None)


def list_sessions(store: FileSessionStore) -> list[SessionSummary]:
    """Every saved session, the one written last first; unreadable ones with their `problem`;
    one holding no message (an older ORE left it when a turn failed) is passed over.

    A session whose file is unchanged since the cache saw it costs one `stat`; any other is read
    once and cached. The cache is rewritten only when something changed.
    """
    entries = index_entries(store.read_index())
    found = store.scan()
    summaries, fresh = [], {}
    for name, path, st in found:
        entry = entries.get(name, {})
        model = entry.get("model")
        modified, key = store.modified(name, st)
        if entry.get("key") == key and "summary" in entry:
            summaries.append(SessionSummary(name, path, modified, model=model, **entry["summary"]))
        elif entry.get("key") == key and "problem" in entry:
            summaries.append(SessionSummary(name, path, modified, problem=entry["problem"]))
        else:
            summary, new = _summarise(store, name, path, st, model)
            summaries.append(summary)
            if new is not None:
                fresh[name] = new
    gone = set(entries) - {name for name, _, _ in found}
    if fresh or gone:

        def change(current: dict[str, dict[str, Any]]) -> None:
            for name in gone:
                current.pop(name, None)
            for name, new in fresh.items():
                model = current.get(name, {}).get("model")
                current[name] = {"model": model, **new}

        change_index(store, change)
    summaries.sort(key=lambda s: (-s.modified, s.name))
    return [s for s in summaries if s.messages != 0]  # an empty session is no conversation


def when(seconds: float | None) -> str:
    """A Unix time as local `YYYY-MM-DD HH:MM`, for people."""
    if seconds is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))
