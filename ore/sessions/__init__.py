"""Sessions as things a person manages: list, show, fork, remove, rename, export, continue.

Built on `ore.store`, which does every read, write and lock; nothing here opens a file for
writing itself, calls a model or prints. A *turn* is a user message and the answers after it,
counted from 1; `--at`, `--turns` and `--history` count turns. By job:

- `turns`: splitting, counting and slicing turns, the last N (`--history`), the overflow hint;
- `finding`: a session by name, the one written last (`--continue`), every one;
- `listing`: `ore session list`, with its cache of summaries and the model last used;
- `manage`: fork, remove, rename;
- `markdown`: a conversation as Markdown for people.
"""

from __future__ import annotations

from .finding import latest, load, saved_sessions, session_store, stored_bytes
from .listing import SessionSummary, list_sessions, record_model, when
from .manage import fork, remove, rename
from .markdown import to_markdown
from .turns import last_turns, overflow_hint, split_turns, turn_count, turn_slice

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
    "when",
]
