"""Saved sessions on disk: upstream-format JSON files under `$ORE_HOME/sessions/`,
and what ORE knows of how each ends; every read, write and lock of a session is here.

- `names`: what can name a session.
- `files`: one session file read and written (untrusted input; atomic writes).
- `tail`: a turn written in place over the file's closing, with its undo (constant-time saving).
- `sessionstore`: `FileSessionStore`, which puts them together under one lock per session.
"""

from __future__ import annotations

from .files import MAX_SESSION_BYTES
from .names import MAX_NAME_LENGTH, validate_name
from .sessionstore import (
    INDEX_FILE,
    FileSessionStore,
    SessionInfo,
    SessionStore,
    SessionTaken,
    default_store,
)

__all__ = [
    "INDEX_FILE",
    "MAX_NAME_LENGTH",
    "MAX_SESSION_BYTES",
    "FileSessionStore",
    "SessionInfo",
    "SessionStore",
    "SessionTaken",
    "default_store",
    "validate_name",
]
