"""Finding saved sessions: by name (a missing one names the closest), the one written last
(`--continue`), every one (`--list-sessions`); a session holding no message (left by an older
ORE whose first turn failed) is no conversation, and is passed over."""

from __future__ import annotations

import os
from contextlib import suppress

from ..errors import StoreError
from ..store import FileSessionStore, SessionInfo, default_store
from ..types import Session

__all__ = ["latest", "load", "missing", "saved_sessions", "session_store", "stored_bytes"]


def latest(store: FileSessionStore) -> str:
    """The name of the session written last (`--continue`); a session holding no message (left by an older ORE whose turn failed) is passed over. `StoreError`
    when none is saved."""
    found = []
    for name, _, st in store.scan():
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


def missing(store: FileSessionStore, name: str) -> StoreError:
    import difflib

    names = [n for n, _, _ in store.scan()]
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
        raise missing(store, name)
    return store.load(name)
