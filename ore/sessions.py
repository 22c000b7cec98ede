"""Sessions as things a person manages: list, show, fork, remove, rename, export, continue.

Built on `ore.store`, which does every read, write and lock; this module never opens a file for
writing itself, calls no model and prints nothing. A *turn* is a user message and the answers
after it, counted from 1; `--at`, `--turns` and `--history` count turns.

Listing stays fast with many or large sessions through a small cache, `sessions/.index.json`:
per session, a summary keyed by the file's size, modification time and inode, and the model
last used (recorded by the CLI after each saved turn; session files keep upstream's format, so
the model lives only here). A summary whose key no longer matches the file is rebuilt from the
file; a missing, corrupt or hostile cache is ignored and rebuilt, never trusted for anything but
what it can be checked against.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._fs import os_error_words
from .errors import StoreError
from .store import FileSessionStore, SessionInfo, default_store, validate_name
from .types import Message, Session, Usage

__all__ = [
    "SessionSummary",
    "fork",
    "last_turns",
    "latest",
    "list_sessions",
    "load",
    "overflow_hint",
    "record_model",
    "remove",
    "rename",
    "saved_sessions",
    "session_store",
    "split_turns",
    "stored_bytes",
    "to_markdown",
    "turn_count",
    "turn_slice",
]

_INDEX_VERSION = 1
_FIRST_PROMPT_CHARS = 72
#: Below this many characters sent, no context window is exceeded (2,048 tokens, ~4 a token).
_SMALLEST_WINDOW_CHARS = 8192


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


# -- turns ---------------------------------------------------------------------------------------


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


# -- finding sessions ----------------------------------------------------------------------------


def _scan(store: FileSessionStore) -> list[tuple[str, Path, os.stat_result]]:
    """Every `NAME.json` with a valid name, and its stat; never reads a file."""
    try:
        entries = list(os.scandir(store.root))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(
            f"cannot list sessions in {store.root} ({os_error_words(exc)}); fix its permissions",
            path=str(store.root),
        ) from exc
    found = []
    for entry in entries:
        name = entry.name.removesuffix(".json")
        if name == entry.name:
            continue
        try:
            validate_name(name)
            found.append((name, Path(entry.path), entry.stat()))
        except (StoreError, OSError):
            continue  # lock files, temp files, the cache, strangers, or deleted meanwhile
    return found


def latest(store: FileSessionStore) -> str:
    """The name of the session written last (`--continue`); a session holding no message (left by an older ORE whose turn failed) is passed over. `StoreError`
    when none is saved."""
    found = []
    for name, _, st in _scan(store):
        with suppress(OSError):
            found.append((store.modified(name, st)[1], name))
    for _, name in sorted(found, key=lambda f: (f[0][1], f[1]), reverse=True):
        try:
            if store.load(name).messages:
                return name
        except StoreError:
            return name  # resumed, it is reported with its path, as it always was
    raise StoreError(
        f"no saved session to continue in {store.root}; start one with "
        'ore --save-session NAME "your question"'
    )


def _missing(store: FileSessionStore, name: str) -> StoreError:
    import difflib

    names = [n for n, _, _ in _scan(store)]
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}? " if close else ""
    return StoreError(
        f"no session named '{name}' in {store.root}; {hint}'ore session list' shows them all",
        path=str(store.path(name)),
    )


def session_store() -> FileSessionStore:
    """The sessions under `$ORE_HOME/sessions`: the store the functions here are given."""
    return default_store()


def stored_bytes(store: FileSessionStore, name: str) -> bytes:
    """Session `name` exactly as stored (`ore session export --format json`)."""
    return store.read_bytes(name)


def saved_sessions(store: FileSessionStore | None = None) -> list[SessionInfo]:
    """Every saved session as `--list-sessions` shows it: sorted by name, unreadable ones with
    their `problem`, read from the files themselves (no cache); one holding no message is
    passed over. `store`: `$ORE_HOME/sessions`."""
    infos = (store if store is not None else default_store()).list()
    return [i for i in infos if i.message_count != 0]


def load(store: FileSessionStore, name: str) -> Session:
    """Session `name`; a missing one is a `StoreError` naming the closest saved names."""
    if not os.path.lexists(store.path(name)):
        raise _missing(store, name)
    return store.load(name)


# -- listing, with its cache ---------------------------------------------------------------------


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


def _entries(raw: Any) -> dict[str, dict[str, Any]]:
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


def _change_index(
    store: FileSessionStore, change: Callable[[dict[str, dict[str, Any]]], None]
) -> None:
    """Apply `change` to the cache's entries and write it back; a cache that cannot be written
    is not worth failing anything for (listing rebuilds it)."""

    def rewrite(raw: Any) -> dict[str, Any]:
        entries = _entries(raw)
        change(entries)
        return {"version": _INDEX_VERSION, "sessions": entries}

    with suppress(StoreError, OSError):
        store.update_index(rewrite)


def record_model(store: FileSessionStore, name: str, model: str) -> None:
    """Remember `model` as the one session `name` used last (shown by `ore session list`)."""

    def change(entries: dict[str, dict[str, Any]]) -> None:
        entries.setdefault(name, {})["model"] = model

    _change_index(store, change)


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
    entries = _entries(store.read_index())
    found = _scan(store)
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

        _change_index(store, change)
    summaries.sort(key=lambda s: (-s.modified, s.name))
    return [s for s in summaries if s.messages != 0]  # an empty session is no conversation


# -- managing ------------------------------------------------------------------------------------


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
    model = _entries(store.read_index()).get(name, {}).get("model")
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

    _change_index(store, change)
    return names


def rename(store: FileSessionStore, old: str, new: str) -> None:
    """Rename session `old` to `new` atomically; `new` must be free, `old` readable."""
    validate_name(new)
    if not os.path.lexists(store.path(old)):
        raise _missing(store, old)
    store.rename(old, new)

    def change(entries: dict[str, dict[str, Any]]) -> None:
        entry = entries.pop(old, None)
        if entry is not None:
            entries[new] = {"model": entry.get("model")}

    _change_index(store, change)


# -- reading -------------------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _closed_fences(text: str) -> str:
    """`text` with a code fence it leaves open closed, so the headings after it stay headings."""
    opener: str | None = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match is None:
            continue
        run = match.group(1)
        if opener is None:
            opener = run
        elif run[0] == opener[0] and len(run) >= len(opener) and not line.strip()[len(run) :]:
            opener = None
    if opener is None:
        return text
    return text.rstrip("\n") + "\n" + opener


def to_markdown(title: str, messages: Sequence[Message], *, first_turn: int = 1) -> str:
    """A conversation as Markdown for people: one `## Role (turn N)` heading per message, the
    text below it as it was written (code stays fenced; a fence left open is closed)."""
    out = [f"# {title}", ""]
    turn = first_turn - 1
    for m in messages:
        if m.role == "user":
            turn += 1
        out += [f"## {m.role.capitalize()} (turn {max(turn, first_turn)})", ""]
        out += [_closed_fences(m.content.strip("\n")), ""]
    return "\n".join(out)


def when(seconds: float | None) -> str:
    """A Unix time as local `YYYY-MM-DD HH:MM`, for people."""
    if seconds is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds))


# -- what a turn sends ---------------------------------------------------------------------------


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
